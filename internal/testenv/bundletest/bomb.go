package bundletest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"testing"
)

// Bomb is a gzip bomb shaped as a bundle: files of size zero bytes each, a few MB
// compressed. The zeros are compressed once and their gzip member repeated (a gzip stream
// may be members end to end), so building 34×60 MiB takes a moment, not a minute.
func Bomb(t testing.TB, files int, size int64) []byte {
	t.Helper()
	member := func(data []byte) []byte {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if _, err := zw.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	header := func(name string, size int64) []byte {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: size}); err != nil {
			t.Fatal(err)
		}
		// Flush would pad the missing content; the header block alone is what is wanted.
		return buf.Bytes()[:512]
	}
	zeros := member(make([]byte, size)) // size is a multiple of 512: no padding needed
	var out bytes.Buffer
	for i := range files {
		out.Write(member(header(fmt.Sprintf("data/f%d/data.json", i), size)))
		out.Write(zeros)
	}
	out.Write(member(make([]byte, 1024))) // the end of the archive
	return out.Bytes()
}

// ManyFiles is a bundle tarball of n empty files.
func ManyFiles(t testing.TB, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for i := range n {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("p/f%d.rego", i), Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
