package inventory_test

import (
	"encoding/json"
	"testing"

	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/inventory"
)

// cluster500 is the 1.2 MB inventory of a 500-namespace cluster: the size the fleet server
// parses once per pushed snapshot.
func cluster500(b *testing.B) []byte {
	b.Helper()
	data, err := json.Marshal(corpus.Cluster(500, 1))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkParseCluster500(b *testing.B) {
	data := cluster500(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inventory.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateCluster500(b *testing.B) {
	data := cluster500(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := inventory.Validate(data); err != nil {
			b.Fatal(err)
		}
	}
}
