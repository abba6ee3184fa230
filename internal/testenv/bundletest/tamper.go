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
	return Edit(t, signed, func(name string, data []byte) []byte {
		if strings.HasSuffix(name, "data.json") {
			return bytes.Replace(data, []byte(`"horizon":"`), []byte(`"horizon":"9`), 1)
		}
		return data
	})
}

// Edit is a bundle tarball with each file's content passed through edit, headers and
// signature kept. Nothing edited fails the test: a tamper test must tamper.
func Edit(t testing.TB, tarball []byte, edit func(name string, data []byte) []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tarball))
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
		edited := edit(h.Name, data)
		changed = changed || !bytes.Equal(edited, data)
		h.Size = int64(len(edited))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(edited); err != nil {
			t.Fatal(err)
		}
	}
	if !changed {
		t.Fatal("the bundle holds nothing the edit changed")
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
