package bundletest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
)

// Tamper is a signed kb tarball with its data changed after signing (the horizon
// rewritten, the signature kept), as an attacker on the way would change it.
func Tamper(t testing.TB, signed []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(signed))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	tr := tar.NewReader(zr)
	changed := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(h.Name, "data.json") && bytes.Contains(data, []byte(`"horizon":"`)) {
			data = bytes.Replace(data, []byte(`"horizon":"`), []byte(`"horizon":"9`), 1)
			changed = true
		}
		h.Size = int64(len(data))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if !changed {
		t.Fatal("the bundle holds no data.json with a horizon to tamper with")
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
