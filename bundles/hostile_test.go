package bundles_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
)

// Every source is printed and stored in one sanitised form: no userinfo, no query, no fragment,
// whatever the scheme's case or a typo in it.
func TestSanitizedURLCutsEverySecret(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"https://bundles.example/kb.tar.gz", "https://bundles.example/kb.tar.gz"},
		{"https://u:pw@bundles.example/kb.tar.gz?token=s3cr3t#frag", "https://xxxxx@bundles.example/kb.tar.gz"},
		{"https://tok3n@bundles.example/kb.tar.gz", "https://xxxxx@bundles.example/kb.tar.gz"},
		{"HTTP://user:pw@bundles.example/kb.tar.gz", "http://xxxxx@bundles.example/kb.tar.gz"},
		{"http//user:pw@bundles.example/kb.tar.gz?x=s3cr3t", "http://xxxxx@bundles.example/kb.tar.gz"},
		{"https:/user:pw@bundles.example/kb.tar.gz", "https://xxxxx@bundles.example/kb.tar.gz"},
		{"http://bundles.example/kb.tar.gz?", "http://bundles.example/kb.tar.gz"},
		{"ftp://user:pw@bundles.example/kb.tar.gz", "ftp://xxxxx@bundles.example/kb.tar.gz"},
		{"policies/kb.tar.gz", "policies/kb.tar.gz"},
		{"/tmp/a b/kb.tar.gz", "/tmp/a b/kb.tar.gz"},
	} {
		if got := bundles.SanitizedURL(c.src); got != c.want {
			t.Errorf("SanitizedURL(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}

func TestIsURLIgnoresTheSchemesCase(t *testing.T) {
	for src, want := range map[string]bool{
		"HTTPS://bundles.example/kb.tar.gz": true, "Http://bundles.example/kb.tar.gz": true,
		"http//bundles.example/kb.tar.gz": false, "kb.tar.gz": false,
	} {
		if got := bundles.IsURL(src); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", src, got, want)
		}
	}
}

// A failing fetch names its source, never the password or the token it carried.
func TestAFailingFetchShowsNoSecret(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such bundle", http.StatusNotFound)
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // a refused connection: net/http quotes the whole URL
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, src := range []string{
		"https://u:pw@host/b.tar.gz?token=s3cr3t",
		"HTTP://u:pw@" + host + "/b.tar.gz?token=s3cr3t",
		"http//u:pw@" + host + "/b.tar.gz?token=s3cr3t",
		"Https:/u:pw@" + host + "/b.tar.gz?token=s3cr3t",
		srv.URL + "/b.tar.gz?token=s3cr3t",
		closed.URL + "/b.tar.gz?token=s3cr3t#pw",
		closed.URL + "/b.tar.gz?token=%22s3cr3t%22",
	} {
		_, err := bundles.Fetch(context.Background(), src, bundles.Remote{}, nil)
		if err == nil {
			t.Errorf("Fetch(%q) succeeded", src)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, "pw") || strings.Contains(msg, "s3cr3t") || !strings.Contains(msg, "b.tar.gz") {
			t.Errorf("Fetch(%q) = %q: want the bundle named without its password or token", src, msg)
		}
	}
}

// A file whose name only looks like a URL is still read; one with credentials is refused.
func TestAURLLikePathIsReadOnlyWithoutSecrets(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll(filepath.Join(dir, "http"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := bundles.Fetch(context.Background(), "http//missing.tar.gz", bundles.Remote{}, nil)
	if err == nil || !strings.Contains(err.Error(), "not an http:// or https:// URL") {
		t.Errorf("a URL-like path that is no file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "http", "kb.tar.gz"), []byte("not a bundle"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = bundles.Fetch(context.Background(), "http//kb.tar.gz", bundles.Remote{}, nil)
	if err == nil || strings.Contains(err.Error(), "not an http:// or https:// URL") || errors.Is(err, os.ErrNotExist) {
		t.Errorf("a URL-like path that is a file: %v, want it read (and refused as no bundle)", err)
	}
}

// A fetch from a URL has an overall deadline: a server trickling bytes cannot hold it.
func TestAFetchFromATricklingServerEndsAtItsDeadline(t *testing.T) {
	srv := bundletest.Trickle(t)
	_, public := bundletest.Keys(t, t.TempDir())
	pub, _ := os.ReadFile(public)
	_, err := bundles.Fetch(context.Background(), srv.URL+"/kb.tar.gz?token=s3cr3t", bundles.Remote{Timeout: 300 * time.Millisecond},
		bundles.VerificationConfig(string(pub), "RS256"))
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no bundle within 300ms") ||
		!strings.Contains(err.Error(), "/kb.tar.gz") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("Fetch from a trickling server: %v, want the deadline named", err)
	}
}

// What the poller reports (the agent's logs and its BundlesCurrent condition) carries no
// secret of the URL either.
func TestThePollerReportsNoSecret(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, public := bundletest.Keys(t, t.TempDir())
	pub, _ := os.ReadFile(public)
	var mu sync.Mutex
	var seen []string
	p, err := bundles.Poll(context.Background(), bundles.PollOptions{
		URLs:         []string{closed.URL + "/kb.tar.gz?token=s3cr3t"},
		Verification: bundles.VerificationConfig(string(pub), "RS256"),
		MinDelay:     time.Hour, MaxDelay: time.Hour,
		Activate: func(context.Context, *bundles.Fetched) error { return nil },
		Observed: func(src, result string, err error) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, src+" "+result)
			if err != nil {
				seen = append(seen, err.Error())
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	p.Stop(context.Background())
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(seen, "\n")
	if !strings.Contains(all, "download_failed") || !strings.Contains(all, "/kb.tar.gz") || strings.Contains(all, "s3cr3t") {
		t.Errorf("observed:\n%s\nwant the failed download named without its token", all)
	}
}
