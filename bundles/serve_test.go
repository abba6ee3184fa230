package bundles

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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
	_, etag, _ := bundleFile{dir: dir, name: "rules.tar.gz"}.load()
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
