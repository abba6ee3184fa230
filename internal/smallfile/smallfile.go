// Package smallfile reads the small files flags name (keys, tokens, claims, CA bundles), and
// only regular files up to a bound: read whole, /dev/zero or a multi-GiB file would grow
// without limit, and opening a FIFO would wait for a writer forever.
package smallfile

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

const (
	// MaxSecret bounds a PEM key, a token or a claims file: each is a few KiB.
	MaxSecret = 64 << 10
	// MaxCA bounds a PEM bundle of CA certificates; the system's own is about 200 KiB.
	MaxCA = 1 << 20
)

// Read returns the file at path, refusing anything but a regular file of at most limit
// bytes with an error that names it.
func Read(path string, limit int64) ([]byte, error) {
	if err := Check(path, limit); err != nil {
		return nil, err
	}
	// Non-blocking: a FIFO swapped in since Check returns at once and is refused below.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Checked again on what was opened: the path may have changed since Check.
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := bounded(path, info, limit); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

// Check refuses path unless it is a regular file of at most limit bytes, without opening it;
// for files another library reads itself (OPA's CA and claims files).
func Check(path string, limit int64) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	return bounded(path, info, limit)
}

func bounded(path string, info fs.FileInfo, limit int64) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (%s); want a file that ends", path, Kind(info.Mode()))
	}
	if info.Size() > limit {
		return tooLarge(path, limit)
	}
	return nil
}

func tooLarge(path string, limit int64) error {
	if limit >= 1<<20 {
		return fmt.Errorf("%s is larger than %d MiB", path, limit>>20)
	}
	return fmt.Errorf("%s is larger than %d KiB; want a key, token or certificate file", path, limit>>10)
}

// Kind names what a path that is not a regular file holds: a FIFO or a device could keep a
// reader waiting or reading forever.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0, m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}
