package bundles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// racyWindow is how long after its modification time a file's stat is not trusted to show a
// change: the kernel stamps files from a coarse clock, so two writes of the same size a few
// milliseconds apart can leave size and mtime alike (git's "racily clean" problem). A file
// modified less than this before it was hashed is hashed again when next looked at.
const racyWindow = time.Second

// index is what bundle serve knows of the files it serves: per name the stat it last saw
// and the ETag of the content, hashed once and again only when stat changes. Requests and
// long polls share it, and one watcher looks at the files long polls wait on.
type index struct {
	dir   string
	every time.Duration
	// hashed and watched are told of each hash and each watcher pass (tests).
	hashed  func(name string)
	watched func()

	mu      sync.Mutex
	entries map[string]*entry
	waiters map[string]int
	// changed[name] is closed when name's ETag changes, waking its long polls.
	changed  map[string]chan struct{}
	watching bool
}

type entry struct {
	info    fs.FileInfo
	etag    string
	checked time.Time // when the content was hashed
}

func newIndex(dir string, opts ServeOptions) *index {
	return &index{dir: dir, every: opts.PollEvery, hashed: opts.hashed, watched: opts.watched,
		entries: map[string]*entry{}, waiters: map[string]int{}, changed: map[string]chan struct{}{}}
}

// current says whether e still describes a file that stat describes as info.
func (e *entry) current(info fs.FileInfo) bool {
	return e != nil && e.info.Size() == info.Size() && e.info.ModTime().Equal(info.ModTime()) &&
		os.SameFile(e.info, info) && e.checked.Sub(info.ModTime()) >= racyWindow
}

// open opens a bundle through an os.Root of the directory, so neither ".." nor a symlink can
// reach a file outside it; only a regular file of at most MaxSize is served, and what is not
// one (a FIFO, a device, a link to one) is never opened (openRegular). The ETag is that of
// the opened file's content. The caller closes the file.
func (x *index) open(name string) (*os.File, fs.FileInfo, string, error) {
	f, info, err := x.openFile(name)
	if err != nil {
		return nil, nil, "", err
	}
	etag, err := x.etag(name, f, info)
	if err != nil {
		f.Close()
		return nil, nil, "", err
	}
	return f, info, etag, nil
}

func (x *index) openFile(name string) (*os.File, fs.FileInfo, error) {
	root, err := os.OpenRoot(x.dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	f, info, err := openRegular(root, filepath.FromSlash(name))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, info, nil
}

// etag is the indexed ETag of f when stat shows no change, else f hashed, outside the lock so
// other files are served meanwhile; a new ETag wakes the long polls on name.
func (x *index) etag(name string, f *os.File, info fs.FileInfo) (string, error) {
	x.mu.Lock()
	e := x.entries[name]
	x.mu.Unlock()
	if e.current(info) {
		return e.etag, nil
	}
	checked := time.Now()
	etag, err := hashFile(f)
	if err != nil {
		return "", err
	}
	if x.hashed != nil {
		x.hashed(name)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if prev := x.entries[name]; prev != nil && prev.etag != etag {
		if ch, ok := x.changed[name]; ok {
			close(ch)
			delete(x.changed, name)
		}
	}
	x.entries[name] = &entry{info: info, etag: etag, checked: checked}
	return etag, nil
}

// hashFile is the ETag of f's content, read in small pieces, and leaves f at its start.
func hashFile(f *os.File) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, MaxSize)); err != nil {
		return "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	return `"` + hex.EncodeToString(h.Sum(nil)[:16]) + `"`, nil
}

// wait returns when name's ETag is no longer etag, ctx is done or d has passed.
func (x *index) wait(ctx context.Context, name, etag string, d time.Duration) {
	x.mu.Lock()
	if e := x.entries[name]; e != nil && e.etag != etag {
		x.mu.Unlock()
		return
	}
	ch, ok := x.changed[name]
	if !ok {
		ch = make(chan struct{})
		x.changed[name] = ch
	}
	x.waiters[name]++
	if !x.watching {
		x.watching = true
		go x.watch()
	}
	x.mu.Unlock()
	defer func() {
		x.mu.Lock()
		if x.waiters[name]--; x.waiters[name] == 0 {
			delete(x.waiters, name)
		}
		x.mu.Unlock()
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-timer.C:
	}
}

// watch looks, every x.every, at each file a long poll waits on: a stat each, and a hash only
// for a file whose stat changed, however many polls wait on it. It ends when none waits.
func (x *index) watch() {
	tick := time.NewTicker(x.every)
	defer tick.Stop()
	for range tick.C {
		x.mu.Lock()
		if len(x.waiters) == 0 {
			x.watching = false
			x.mu.Unlock()
			return
		}
		names := make([]string, 0, len(x.waiters))
		for name := range x.waiters {
			names = append(names, name)
		}
		x.mu.Unlock()
		for _, name := range names {
			x.refresh(name)
		}
		if x.watched != nil {
			x.watched()
		}
	}
}

// refresh rehashes name if stat shows it changed; a file that went away is left to the
// requests that ask for it.
func (x *index) refresh(name string) {
	f, info, err := x.openFile(name)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = x.etag(name, f, info)
}
