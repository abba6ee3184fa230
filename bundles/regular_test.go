package bundles

import (
	"errors"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// special makes, in dir, a FIFO, a socket and links to them and to a device, each named as a
// bundle, and returns their names.
func special(t *testing.T, dir string) []string {
	t.Helper()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.tar.gz"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "sock.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "sub", "deep"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"fifo-link.tar.gz": "fifo.tar.gz", "deep-link.tar.gz": "sub/deep",
		"sock-link.tar.gz": "sock.tar.gz", "null-link.tar.gz": "/dev/null"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"fifo.tar.gz", "fifo-link.tar.gz", "deep-link.tar.gz", "sock.tar.gz", "sock-link.tar.gz", "null-link.tar.gz"}
}

// noReaderParked fails unless the FIFO at path has no reader: a request parked in open(2)
// on it counts as one, so a writer's non-blocking open would then succeed.
func noReaderParked(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err == nil {
		f.Close()
		t.Errorf("%s has a reader: something opened it", path)
	} else if !errors.Is(err, syscall.ENXIO) {
		t.Errorf("open %s for writing: %v, want ENXIO (no reader)", path, err)
	}
}

// bundle serve answers 404 for a FIFO, a socket, a device or a link to one, and never opens
// it (issue 30, item 10): each request used to park an OS thread in open(2) for good. The
// client's timeout only ends a hang, so the test fails rather than waits.
func TestServeNeverOpensWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	names := special(t, dir)
	srv := httptest.NewServer(Handler(dir, ServeOptions{}))
	defer srv.Close()
	client := &http.Client{Timeout: 30 * time.Second}
	for _, name := range names {
		for _, prefer := range []string{"", "wait=30"} {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/"+name, nil)
			req.Header.Set("Prefer", prefer)
			req.Header.Set("If-None-Match", "*")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("GET %s (Prefer %q): %v", name, prefer, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s (Prefer %q) = %d, want 404", name, prefer, resp.StatusCode)
			}
		}
	}
	noReaderParked(t, filepath.Join(dir, "fifo.tar.gz"))
	noReaderParked(t, filepath.Join(dir, "sub", "deep"))
}

// Open refuses the same, naming what it wants instead.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range special(t, dir) {
		f, err := Open(filepath.Join(dir, name))
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, errNotRegular) {
			t.Errorf("Open(%s) = %v, want %v", name, err, errNotRegular)
		}
	}
	noReaderParked(t, filepath.Join(dir, "fifo.tar.gz"))
}

// lyingStat says every name is a small regular file, as a FIFO swapped in between the stat and
// the open would look.
type lyingStat struct{ hostFS }

func (lyingStat) Stat(name string) (fs.FileInfo, error) { return regularInfo{name}, nil }

type regularInfo struct{ name string }

func (i regularInfo) Name() string     { return filepath.Base(i.name) }
func (regularInfo) Size() int64        { return 512 }
func (regularInfo) Mode() fs.FileMode  { return 0o600 }
func (regularInfo) ModTime() time.Time { return time.Time{} }
func (regularInfo) IsDir() bool        { return false }
func (regularInfo) Sys() any           { return nil }

// A FIFO that takes a regular file's place after the stat is opened without waiting and
// refused on the opened file's own stat.
func TestAFIFOSwappedInAfterTheStatIsRefusedWithoutWaiting(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "b.tar.gz")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, _, err := openRegular(lyingStat{}, fifo)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errNotRegular) {
			t.Errorf("openRegular of a FIFO past its stat = %v, want %v", err, errNotRegular)
		}
	case <-time.After(30 * time.Second):
		// Release the parked open so the test ends.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("openRegular waited on the FIFO")
	}
}
