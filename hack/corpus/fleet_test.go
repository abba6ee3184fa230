package corpus

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestClusterInventoriesAreValidAndDistinct(t *testing.T) {
	hashes := map[string]int{}
	for _, c := range []struct{ namespaces, seed int }{{1, 1}, {50, 1}, {500, 1}, {500, 2}, {1400, 3}} {
		doc := Cluster(c.namespaces, c.seed)
		data := mustValidate(t, doc)
		if len(doc.Namespaces) != c.namespaces {
			t.Errorf("Cluster(%d, %d): %d namespaces", c.namespaces, c.seed, len(doc.Namespaces))
		}
		h, err := doc.Hash()
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := hashes[h]; ok {
			t.Errorf("Cluster(%d, %d) hashes like seed %d", c.namespaces, c.seed, prev)
		}
		hashes[h] = c.seed
		if c.namespaces == 500 {
			t.Logf("Cluster(500, %d): %d bytes of JSON, %d gzipped, %d values, UID %s", c.seed, len(data), gzipSize(data),
				inventory.CountValues(data), doc.ClusterID)
		}
	}
}

func TestTheSameArgumentsGiveTheSameCluster(t *testing.T) {
	a, _ := json.Marshal(Cluster(100, 7))
	b, _ := json.Marshal(Cluster(100, 7))
	if !bytes.Equal(a, b) {
		t.Error("Cluster(100, 7) differs between two calls")
	}
}

func TestPadReachesTheSizeWithinTheSchema(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20 MiB inventory")
	}
	const size = 20<<20 - 64<<10
	doc := Cluster(500, 1)
	n, err := Pad(doc, size)
	if err != nil {
		t.Fatal(err)
	}
	data := mustValidate(t, doc)
	if len(data) != n || n > size || n < size-8<<10 {
		t.Errorf("Pad: %d bytes (answered %d), want at most %d and within 8 KiB of it", len(data), n, size)
	}
	t.Logf("padded: %d bytes, %d gzipped, %d values", len(data), gzipSize(data), inventory.CountValues(data))
}

func mustValidate(t *testing.T, doc *inventory.Document) []byte {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := inventory.Validate(data); err != nil {
		t.Fatalf("inventory.Validate: %v", err)
	}
	return data
}

func gzipSize(data []byte) int {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(data)
	_ = zw.Close()
	return buf.Len()
}
