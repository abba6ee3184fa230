package rawtar

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// Each sparse format is what archive/tar expands: the entry reads as size bytes, none of
// them in the archive. Read to a small size only, so the test stays quick.
func TestEachSparseFormatExpandsInArchiveTar(t *testing.T) {
	const size = 3 << 20
	for _, format := range SparseFormats {
		t.Run(format, func(t *testing.T) {
			raw := Tarball(t, Manifest(`"x"`), SparseEntry(format, "hole.json", size))
			if len(raw) > 600 {
				t.Errorf("the tarball is %d bytes; want a few hundred", len(raw))
			}
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			tr := tar.NewReader(zr)
			for _, want := range []string{".manifest", "hole.json"} {
				h, err := tr.Next()
				if err != nil {
					t.Fatalf("entry %s: %v", want, err)
				}
				if h.Name != want {
					t.Fatalf("entry %q, want %q", h.Name, want)
				}
			}
			n, err := io.Copy(io.Discard, tr)
			if err != nil || n != size {
				t.Errorf("the sparse entry read as %d bytes (%v), want %d", n, err, size)
			}
		})
	}
}

// A size past what twelve octal digits hold is written in base-256, as GNU tar does.
func TestASizeOfTerabytesIsReadBack(t *testing.T) {
	const size = 200 << 30
	raw := Tarball(t, Entry{Name: "big.json", Type: '0', Size: size})
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	h, err := tar.NewReader(zr).Next()
	if err != nil || h.Size != size {
		t.Errorf("header %+v (%v), want size %d", h, err, size)
	}
}
