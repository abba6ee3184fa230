package bundles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// errNotRegular is a bundle path that is a FIFO, a device, a socket, a directory or a link to
// one: opening a FIFO waits for a writer (an OS thread parked in open(2) per request), a
// device may never end.
var errNotRegular = errors.New("not a regular file")

// Open opens the bundle tarball at path for reading, refusing anything but a regular file of
// at most MaxSize without waiting on it: a FIFO or a device given as a bundle is an error, never
// a hang. The caller closes the file.
func Open(path string) (*os.File, error) {
	f, _, err := openRegular(hostFS{}, path)
	if errors.Is(err, errNotRegular) {
		return nil, fmt.Errorf("%w; want a bundle .tar.gz or directory", err)
	}
	return f, err
}

// opener is what openRegular needs of a file system: the host's, or an os.Root that keeps a
// name inside its directory.
type opener interface {
	Stat(name string) (fs.FileInfo, error)
	OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error)
}

type hostFS struct{}

func (hostFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }
func (hostFS) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// openRegular opens name, a regular file of at most MaxSize, and is every open of a bundle
// file: what the path names is stat'ed (links followed) before it is opened, so a FIFO, a
// device or a link to one is refused unopened. A FIFO swapped in after the stat is opened
// non-blocking, which returns at once, and refused on the opened file's own stat; on a
// regular file O_NONBLOCK changes nothing.
func openRegular(dir opener, name string) (*os.File, fs.FileInfo, error) {
	info, err := dir.Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRegular(info); err != nil {
		return nil, nil, err
	}
	f, err := dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if info, err = f.Stat(); err == nil {
		err = checkRegular(info)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

func checkRegular(info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return errNotRegular
	}
	if info.Size() > MaxSize {
		return fmt.Errorf("%w: larger than %d MiB compressed", errTooLarge, MaxSize>>20)
	}
	return nil
}
