package bundles

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

func get(t *testing.T, url string, headers map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestServeAnswers200Then304ThenTheNewRevision(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kb.tar.gz")
	if err := os.WriteFile(file, []byte("revision one"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(dir, ServeOptions{Token: "t0k", PollEvery: 10 * time.Millisecond}))
	defer srv.Close()
	auth := map[string]string{"Authorization": "Bearer t0k"}

	if resp := get(t, srv.URL+"/kb.tar.gz", nil); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", resp.StatusCode)
	}
	first := get(t, srv.URL+"/kb.tar.gz", auth)
	etag := first.Header.Get("ETag")
	if body, _ := io.ReadAll(first.Body); first.StatusCode != http.StatusOK || string(body) != "revision one" || etag == "" {
		t.Fatalf("first GET: %d %q etag %q", first.StatusCode, body, etag)
	}
	if resp := get(t, srv.URL+"/kb.tar.gz", map[string]string{"Authorization": "Bearer t0k", "If-None-Match": `"stale", ` + etag}); resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match listing the current ETag: %d, want 304", resp.StatusCode)
	}
	if err := os.WriteFile(file, []byte("revision two"), 0o600); err != nil {
		t.Fatal(err)
	}
	second := get(t, srv.URL+"/kb.tar.gz", map[string]string{"Authorization": "Bearer t0k", "If-None-Match": etag})
	if body, _ := io.ReadAll(second.Body); second.StatusCode != http.StatusOK || string(body) != "revision two" || second.Header.Get("ETag") == etag {
		t.Errorf("after a new revision: %d %q, want 200 with the new bundle and a new ETag", second.StatusCode, body)
	}
	if resp := get(t, srv.URL+"/../secrets.tar.gz", auth); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a path outside the directory: %d, want 404", resp.StatusCode)
	}
}

func TestALongPollReturnsWhenTheBundleChanges(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.tar.gz")
	_ = os.WriteFile(file, []byte("one"), 0o600)
	waiting := make(chan struct{}, 1)
	srv := httptest.NewServer(Handler(dir, ServeOptions{PollEvery: 10 * time.Millisecond, waiting: func() { waiting <- struct{}{} }}))
	defer srv.Close()
	etag := get(t, srv.URL+"/rules.tar.gz", nil).Header.Get("ETag")
	done := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/rules.tar.gz", nil)
		req.Header.Set("If-None-Match", etag)
		req.Header.Set("Prefer", "wait=30")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			done <- resp
		}
		close(done)
	}()
	<-waiting // the request is parked; now publish a new revision
	_ = os.WriteFile(file, []byte("two"), 0o600)
	resp, ok := <-done
	if !ok {
		t.Fatal("the long poll failed")
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "two" || resp.Header.Get("Content-Type") != "application/vnd.openpolicyagent.bundles" {
		t.Errorf("long poll: %d %q %s, want 200 with the new bundle", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
}

func TestServeNeverLeavesItsDirectory(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.tar.gz")
	if err := os.WriteFile(secret, []byte("not yours"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, "escape.tar.gz")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.tar.gz")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.tar.gz"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ok.tar.gz"), []byte("bundle"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ok.tar.gz", filepath.Join(dir, "alias.tar.gz")); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(dir, ServeOptions{}))
	defer srv.Close()
	for path, want := range map[string]int{
		"/escape.tar.gz": http.StatusNotFound, "/passwd.tar.gz": http.StatusNotFound,
		"/dir.tar.gz": http.StatusNotFound, "/ok.tar.gz": http.StatusOK, "/alias.tar.gz": http.StatusOK,
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// publish writes a revision as an operator should (write, then rename) with a modification
// time well in the past, so its stat is trusted at once (see racyWindow).
func publish(t *testing.T, file, content string, modified time.Time) {
	t.Helper()
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, modified, modified); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
}

// Long polls parked on an unchanged bundle cost no hash, however many passes the watcher
// makes: it stats the file and hashes only when the stat changes. A new revision is hashed
// once for all the polls, and each of them gets it.
func TestIdleLongPollsCostNoRehashAndANewRevisionOneHash(t *testing.T) {
	const polls = 10
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.tar.gz")
	publish(t, file, "revision one", time.Now().Add(-time.Hour))
	var hashes atomic.Int32
	waiting, passes := make(chan struct{}, polls), make(chan struct{}, 1)
	srv := httptest.NewServer(Handler(dir, ServeOptions{
		PollEvery: time.Millisecond,
		waiting:   func() { waiting <- struct{}{} },
		hashed:    func(string) { hashes.Add(1) },
		watched: func() {
			select {
			case passes <- struct{}{}:
			default:
			}
		},
	}))
	defer srv.Close()
	etag := get(t, srv.URL+"/rules.tar.gz", nil).Header.Get("ETag")

	bodies := make(chan string, polls)
	for range polls {
		go func() {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/rules.tar.gz", nil)
			req.Header.Set("If-None-Match", etag)
			req.Header.Set("Prefer", "wait=30")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				bodies <- err.Error()
				return
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			bodies <- resp.Status + " " + string(body)
		}()
	}
	for range polls {
		<-waiting
	}
	for range 20 {
		<-passes
	}
	if n := hashes.Load(); n != 1 {
		t.Errorf("%d hashes after 20 passes over %d idle long polls, want the first GET's only", n, polls)
	}
	publish(t, file, "revision two, longer", time.Now().Add(-30*time.Minute))
	for range polls {
		if got := <-bodies; got != "200 OK revision two, longer" {
			t.Errorf("long poll got %q, want the new revision", got)
		}
	}
	if n := hashes.Load(); n != 2 {
		t.Errorf("%d hashes, want 2: one per revision, not one per poll", n)
	}
}

// A revision written in place, the same size as the last and within the kernel's clock tick,
// leaves size and mtime alike; the file is hashed again while its mtime is recent, so the
// next request still gets it.
func TestARevisionRewrittenInPlaceWithTheSameSizeIsServed(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kb.tar.gz")
	srv := httptest.NewServer(Handler(dir, ServeOptions{}))
	defer srv.Close()
	for _, content := range []string{"revision one", "revision two"} {
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		resp := get(t, srv.URL+"/kb.tar.gz", nil)
		if body, _ := io.ReadAll(resp.Body); string(body) != content {
			t.Errorf("GET = %q, want %q", body, content)
		}
	}
}
