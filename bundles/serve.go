package bundles

import (
	"crypto/subtle"
	"net/http"
	"path"
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
	// PollEvery is how often the files long polls wait on are looked at (default 1 s).
	PollEvery time.Duration
	// waiting is told when a long poll starts waiting, hashed of each file hashed, watched
	// of each pass of the long polls' watcher (tests).
	waiting func()
	hashed  func(name string)
	watched func()
}

// Handler serves the *.tar.gz bundles of dir with OPA's bundle service protocol: an ETag on
// every bundle, 304 when If-None-Match names the current one (it may list several), and long
// polling with `Prefer: wait=N`. Any static server that sends ETags works too.
//
// A file is hashed for its ETag once, and again only when its stat (size, modification time,
// inode) changes; bodies are copied from the open file, never held in memory. So idle long
// polls cost a stat of their file per PollEvery, shared, and a new revision one hash.
func Handler(dir string, opts ServeOptions) http.Handler {
	if opts.PollEvery <= 0 {
		opts.PollEvery = time.Second
	}
	x := newIndex(dir, opts)
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
		serveBundle(w, r, x, strings.TrimPrefix(name, "/"), opts.waiting)
	})
}

func serveBundle(w http.ResponseWriter, r *http.Request, x *index, name string, waiting func()) {
	f, info, etag, err := x.open(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if wait := preferWait(r); wait > 0 && matches(r.Header.Get("If-None-Match"), etag) {
		f.Close()
		w.Header().Set("Content-Type", "application/vnd.openpolicyagent.bundles")
		if waiting != nil {
			waiting()
		}
		x.wait(r.Context(), name, etag, wait)
		var current string
		if f, info, current, err = x.open(name); err != nil {
			// Gone by the end of the wait: the poll's bundle is still the last one it had.
			w.Header().Set("ETag", etag)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		etag = current
	}
	defer f.Close()
	w.Header().Set("ETag", etag)
	if matches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "application/gzip")
	}
	http.ServeContent(w, r, "", info.ModTime(), f)
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
