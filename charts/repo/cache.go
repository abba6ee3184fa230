package repo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/upgradescope/upgradescope/internal/atomicfile"
	"github.com/upgradescope/upgradescope/internal/smallfile"
)

// ErrNotCached is wrapped by the error of an offline read whose repository, tag list or
// chart version is not in the cache.
var ErrNotCached = errors.New("not in the chart cache")

// cache is a directory of indexes, OCI tag lists and chart archives, each in a file named
// by a hash of what it holds, so that no URL (even redacted) is spelled in a file name.
type cache struct{ dir string }

// openCache opens dir, creating it 0700 when it does not exist. An existing directory keeps
// its mode: it may be one the user shares (--chart-repo-cache .) and is not the Reader's to
// change; the files the cache writes are 0600 whatever the directory's mode.
func openCache(dir string) (cache, error) {
	info, err := os.Stat(dir)
	switch {
	case err == nil && !info.IsDir():
		return cache{}, fmt.Errorf("the chart cache %s is not a directory", dir)
	case err == nil:
		return cache{dir: dir}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return cache{}, fmt.Errorf("open the chart cache %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return cache{}, fmt.Errorf("create the chart cache %s: %w", dir, err)
	}
	// MkdirAll's mode is narrowed by the umask only, never widened; the cache may hold private
	// charts, so the directory it made is the user's only.
	if err := os.Chmod(dir, 0o700); err != nil {
		return cache{}, fmt.Errorf("restrict the chart cache %s: %w", dir, err)
	}
	return cache{dir: dir}, nil
}

// path is the file for kind ("index", "tags", "chart") and the parts naming it.
func (c cache) path(kind, ext string, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return filepath.Join(c.dir, kind+"-"+hex.EncodeToString(sum[:16])+ext)
}

// read returns the file's bytes, refusing more than limit; an error wraps fs.ErrNotExist
// when there is none. The cache is the user's, but a file in it is read no larger than the
// network read it stands for.
func (c cache) read(path string, limit int64) ([]byte, error) { return smallfile.Read(path, limit) }

// has says whether a file of at most limit bytes is cached at path, without reading it; the
// error says why not.
func (c cache) has(path string, limit int64) error { return smallfile.Check(path, limit) }

// write stores data at path atomically: a reader sees the old file or the whole new one.
func (c cache) write(path string, data []byte) error {
	if err := atomicfile.Write(path, data); err != nil {
		return fmt.Errorf("write the chart cache %s: %w", c.dir, err)
	}
	return nil
}

// notCached is the offline error for what (a redacted repository, maybe with a chart and
// version) when err says the file is missing; any other read error is reported as is.
func (c cache) notCached(what string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("offline: %s %w %s", what, ErrNotCached, c.dir)
	}
	return fmt.Errorf("offline: read %s from the chart cache %s: %w", what, c.dir, err)
}
