// Package atomicfile writes a file so that a reader sees the old one or the whole new one,
// never a part: into a temporary file beside it, owner-only (0600), renamed over it.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write stores data at path atomically, mode 0600.
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*") // created 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
