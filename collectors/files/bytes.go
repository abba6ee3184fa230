package files

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"
)

// CollectBytes reads data as the one file name (its extension one a walk reads: .yaml, .yml
// or .json) of an in-memory tree, with CollectFS's walk, decoder and bounds: a request body
// judged as `scan --files` would judge it on disk.
func CollectBytes(name string, data []byte, opts Options) (*Result, error) {
	if !fs.ValidPath(name) || name == "." || strings.Contains(name, "/") || !manifestExt(name) {
		return nil, fmt.Errorf("collect %q: want a file name with a manifest extension (.yaml, .yml, .json)", name)
	}
	return CollectFS(oneFile{name: name, data: data}, opts)
}

// oneFile is a read-only fs.FS holding one regular file at its root: what CollectBytes
// walks, without a test package's MapFS in production.
type oneFile struct {
	name string
	data []byte
}

func (o oneFile) Open(name string) (fs.File, error) {
	switch name {
	case ".":
		return &oneFileRoot{fsys: o}, nil
	case o.name:
		return &oneFileOpen{info: o.fileInfo(), Reader: bytes.NewReader(o.data)}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

func (o oneFile) fileInfo() entryInfo { return entryInfo{name: o.name, size: int64(len(o.data))} }

// entryInfo describes the file (a regular file of len(data) bytes) or the root directory.
type entryInfo struct {
	name string
	size int64
	dir  bool
}

func (e entryInfo) Name() string               { return e.name }
func (e entryInfo) Size() int64                { return e.size }
func (e entryInfo) ModTime() time.Time         { return time.Time{} }
func (e entryInfo) IsDir() bool                { return e.dir }
func (e entryInfo) Sys() any                   { return nil }
func (e entryInfo) Type() fs.FileMode          { return e.Mode().Type() }
func (e entryInfo) Info() (fs.FileInfo, error) { return e, nil }
func (e entryInfo) Mode() fs.FileMode {
	if e.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}

// oneFileOpen is the file, opened.
type oneFileOpen struct {
	info entryInfo
	*bytes.Reader
}

func (f *oneFileOpen) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *oneFileOpen) Close() error               { return nil }

// oneFileRoot is the root directory, opened: it lists the one file.
type oneFileRoot struct {
	fsys oneFile
	read bool // the file was listed
}

func (d *oneFileRoot) Stat() (fs.FileInfo, error) { return entryInfo{name: ".", dir: true}, nil }
func (d *oneFileRoot) Close() error               { return nil }
func (d *oneFileRoot) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: ".", Err: fs.ErrInvalid}
}

// ReadDir lists the file once, as fs.ReadDirFile asks: n > 0 reads in batches and answers
// io.EOF at the end, n <= 0 answers what is left.
func (d *oneFileRoot) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.read {
		if n > 0 {
			return nil, io.EOF
		}
		return nil, nil
	}
	d.read = true
	return []fs.DirEntry{d.fsys.fileInfo()}, nil
}
