// Package rawtar writes gzipped tar archives block by block, as no well-behaved writer would:
// any typeflag, any declared size, sparse headers in every format archive/tar expands, and
// PAX records in the order given. It builds hostile bundles for tests; it imports nothing of
// the project, so the bundles package's own tests and fuzz seeds can use it.
package rawtar

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

const block = 512

// Entry is one tar entry. Data is written as it is, padded to a block, whatever Size
// declares; an entry whose Data is shorter than its Size ends the archive early.
type Entry struct {
	Name string
	Type byte
	Size int64
	Data []byte
	// PAX, when set, is written as an 'x' header before the entry, records in this order
	// (a key may repeat, as GNU's sparse format 0.0 repeats its own).
	PAX [][2]string
	// GNU writes GNU's magic instead of ustar's, with RealSize, the size an old GNU sparse
	// entry ('S') expands to, and no sparse map: the whole entry is a hole.
	GNU      bool
	RealSize int64
}

// Tarball is the entries gzipped, with the two zero blocks that end an archive.
func Tarball(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var tarball bytes.Buffer
	for _, e := range entries {
		if len(e.PAX) > 0 {
			records := paxRecords(e.PAX)
			tarball.Write(header(Entry{Name: "PaxHeaders/" + e.Name, Type: 'x', Size: int64(len(records))}))
			tarball.Write(padded(records))
		}
		tarball.Write(header(e))
		tarball.Write(padded(e.Data))
	}
	tarball.Write(make([]byte, 2*block))
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(tarball.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// Sparse formats archive/tar expands into holes of zeros that no byte of the archive holds.
const (
	OldGNU = "GNU 'S'"
	PAX00  = "GNU PAX 0.0"
	PAX01  = "GNU PAX 0.1"
	PAX10  = "GNU PAX 1.0"
)

// SparseFormats are every sparse format archive/tar reads.
var SparseFormats = []string{OldGNU, PAX00, PAX01, PAX10}

// SparseEntry is an entry named name that expands to size bytes of zeros in format, all of
// it a hole: a few hundred bytes compressed, whatever size.
func SparseEntry(format, name string, size int64) Entry {
	n := strconv.FormatInt(size, 10)
	switch format {
	case OldGNU:
		return Entry{Name: name, Type: 'S', GNU: true, RealSize: size}
	case PAX00:
		return Entry{Name: name, Type: '0', PAX: [][2]string{{"GNU.sparse.size", n}, {"GNU.sparse.numblocks", "1"},
			{"GNU.sparse.offset", n}, {"GNU.sparse.numbytes", "0"}}}
	case PAX01:
		return Entry{Name: name, Type: '0', PAX: [][2]string{{"GNU.sparse.size", n}, {"GNU.sparse.numblocks", "1"},
			{"GNU.sparse.map", n + ",0"}}}
	case PAX10:
		// The map, zero entries, is the entry's data: it sits in the archive, the hole does not.
		return Entry{Name: "GNUSparseFile.0/" + name, Type: '0', Size: block, Data: []byte("0\n"),
			PAX: [][2]string{{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"}, {"GNU.sparse.name", name}, {"GNU.sparse.realsize", n}}}
	}
	panic("rawtar: unknown sparse format " + format)
}

// Manifest is a bundle manifest entry with the roots given, so a bundle reads as one up to
// the entry that is the test's point.
func Manifest(roots string) Entry {
	m := []byte(`{"roots": [` + roots + `]}`)
	return Entry{Name: ".manifest", Type: '0', Size: int64(len(m)), Data: m}
}

func header(e Entry) []byte {
	h := make([]byte, block)
	copy(h[0:100], e.Name)
	copy(h[100:108], "0000644\x00")
	copy(h[108:116], "0000000\x00")
	copy(h[116:124], "0000000\x00")
	numeric(h[124:136], e.Size)
	copy(h[136:148], "00000000000\x00")
	h[156] = e.Type
	if e.GNU {
		copy(h[257:265], "ustar  \x00")
		numeric(h[483:495], e.RealSize)
	} else {
		copy(h[257:265], "ustar\x0000")
	}
	copy(h[148:156], "        ")
	sum := 0
	for _, b := range h {
		sum += int(b)
	}
	copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return h
}

// numeric writes n in octal when it fits the field, else in base-256 as GNU does: a size of
// terabytes fits twelve bytes.
func numeric(field []byte, n int64) {
	if s := strconv.FormatInt(n, 8); len(s) < len(field) {
		copy(field, strings.Repeat("0", len(field)-1-len(s))+s+"\x00")
		return
	}
	for i := len(field) - 1; i > 0; i-- {
		field[i] = byte(n)
		n >>= 8
	}
	field[0] = 0x80
}

// paxRecords encodes records as "%d %s=%s\n", the length counting itself.
func paxRecords(records [][2]string) []byte {
	var out bytes.Buffer
	for _, r := range records {
		body := " " + r[0] + "=" + r[1] + "\n"
		n := len(body) + 1
		for len(strconv.Itoa(n))+len(body) != n {
			n++
		}
		fmt.Fprintf(&out, "%d%s", n, body)
	}
	return out.Bytes()
}

func padded(data []byte) []byte {
	if r := len(data) % block; r != 0 {
		return append(data[:len(data):len(data)], make([]byte, block-r)...)
	}
	return data
}
