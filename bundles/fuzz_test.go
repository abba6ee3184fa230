package bundles

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/internal/testenv/bundletest/rawtar"
)

// FuzzRead feeds arbitrary bytes to the bundle reader, both as they are and gzipped (so the
// fuzzer reaches the tar, manifest and signature parsing behind the gzip checksum). It must
// never panic, and with a verification key nothing but the signed files verifies: an input
// that is accepted holds exactly the modules and data that were signed.
func FuzzRead(f *testing.F) {
	priv, pub := ecKeys(f)
	dir := f.TempDir()
	keyFile := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(keyFile, []byte(priv), 0o600); err != nil {
		f.Fatal(err)
	}
	var unsigned, signed bytes.Buffer
	if err := BuildFS(tinyBundle, "2026-11-29.7", &unsigned); err != nil {
		f.Fatal(err)
	}
	if err := Sign(bytes.NewReader(unsigned.Bytes()), &signed, keyFile, "ES256", ""); err != nil {
		f.Fatal(err)
	}
	vc := VerificationConfig(pub, "ES256")
	want, err := Read(bytes.NewReader(signed.Bytes()), vc)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(signed.Bytes())
	f.Add(gunzip(f, signed.Bytes()))
	f.Add(gunzip(f, unsigned.Bytes()))
	// Sparse holes of 4 TiB (issue 30, item 8): each once spun the reader for minutes.
	for _, format := range rawtar.SparseFormats {
		f.Add(rawtar.Tarball(f, rawtar.Manifest(`"upgradescope/custom/fuzz"`),
			rawtar.SparseEntry(format, "upgradescope/custom/fuzz/data.json", 4<<40)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, gzipped(t, data)} {
			_, _ = Read(bytes.NewReader(in), nil)
			_, _ = Inspect(bytes.NewReader(in))
			got, err := Read(bytes.NewReader(in), vc)
			if err == nil && !sameContent(got, want) {
				t.Fatalf("an input that is not the signed bundle verified: %d modules", len(got.Modules))
			}
		}
	})
}

// tinyBundle keeps each execution fast: the fuzzer explores the container, not the rules.
var tinyBundle = fstest.MapFS{
	".manifest":                          {Data: []byte(`{"roots": ["upgradescope/custom/fuzz"]}`)},
	"upgradescope/custom/fuzz/fuzz.rego": {Data: []byte("package upgradescope.custom.fuzz\n\nfindings := []\n")},
	"upgradescope/custom/fuzz/data.json": {Data: []byte(`{"limit": 3}`)},
}

func sameContent(a, b bundle.Bundle) bool {
	raw := func(x bundle.Bundle) map[string]string {
		out := map[string]string{}
		for _, m := range x.Modules {
			out[m.Path] = string(m.Raw)
		}
		return out
	}
	return reflect.DeepEqual(raw(a), raw(b)) && reflect.DeepEqual(a.Data, b.Data)
}

func gunzip(f *testing.F, data []byte) []byte {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		f.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		f.Fatal(err)
	}
	return out
}

func gzipped(t *testing.T, data []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
