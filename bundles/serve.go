package bundles

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MaxWait caps a long poll (Prefer: wait=N).
const MaxWait = 5 * time.Minute

// ServeOptions configure Handler.
type ServeOptions struct {
	// Token, when set, is the bearer token every request must carry.
	Token string
	// PollEvery is how often a long poll looks for a new bundle (default 1 s).
	PollEvery time.Duration
	// waiting is told when a long poll starts waiting (tests).
	waiting func()
}

// Handler serves the *.tar.gz bundles of dir with OPA's bundle service protocol: an ETag on
// every bundle, 304 when If-None-Match names the current one (it may list several), and long
// polling with `Prefer: wait=N`. Any static server that sends ETags works too.
func Handler(dir string, opts ServeOptions) http.Handler {
	if opts.PollEvery <= 0 {
		opts.PollEvery = time.Second
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if opts.Token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+opts.Token)) != 1 {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := path.Clean("/" + r.URL.Path)
		if !strings.HasSuffix(name, ".tar.gz") {
			http.NotFound(w, r)
			return
		}
		file := bundleFile{dir: dir, name: strings.TrimPrefix(name, "/")}
		body, etag, err := file.load()
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if wait := preferWait(r); wait > 0 && matches(r.Header.Get("If-None-Match"), etag) {
			w.Header().Set("Content-Type", "application/vnd.openpolicyagent.bundles")
			if opts.waiting != nil {
				opts.waiting()
			}
			body, etag = waitForChange(r.Context(), file, etag, wait, opts.PollEvery)
		}
		w.Header().Set("ETag", etag)
		if matches(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/gzip")
		}
		_, _ = w.Write(body)
	})
}

// bundleFile is one bundle under the served directory.
type bundleFile struct{ dir, name string }

// load reads the bundle through an os.Root of the directory, so neither ".." nor a symlink
// can reach a file outside it; only a regular file of at most MaxSize is served.
func (b bundleFile) load() ([]byte, string, error) {
	root, err := os.OpenRoot(b.dir)
	if err != nil {
		return nil, "", err
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(b.name))
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return nil, "", err
	case !info.Mode().IsRegular():
		return nil, "", fmt.Errorf("%s is not a regular file", b.name)
	case info.Size() > MaxSize:
		return nil, "", fmt.Errorf("%s is larger than %d MiB", b.name, MaxSize>>20)
	}
	body, err := io.ReadAll(io.LimitReader(f, MaxSize))
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(body)
	return body, `"` + hex.EncodeToString(sum[:16]) + `"`, nil
}

// matches: If-None-Match is a comma-separated list of ETags (or *).
func matches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "W/"))
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

func preferWait(r *http.Request) time.Duration {
	for _, p := range strings.Split(r.Header.Get("Prefer"), ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(p), "wait="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return min(time.Duration(n)*time.Second, MaxWait)
			}
		}
	}
	return 0
}

func waitForChange(ctx context.Context, file bundleFile, etag string, wait, every time.Duration) ([]byte, string) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			body, current, _ := file.load()
			if current == "" {
				return nil, etag
			}
			return body, current
		case <-tick.C:
			if body, current, err := file.load(); err == nil && current != etag {
				return body, current
			}
		}
	}
}
