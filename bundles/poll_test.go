package bundles_test

import (
	"context"
	"encoding/pem"
	"io"
	"log"
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

// recorder keeps what the poller activated and observed.
type recorder struct {
	mu        sync.Mutex
	revisions []string
	results   []string
	refuse    string // a revision whose activation fails
	changed   chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 100)} }

func (r *recorder) activate(_ context.Context, f *bundles.Fetched) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f.Bundle.Manifest.Revision == r.refuse {
		return errRefused
	}
	r.revisions = append(r.revisions, f.Bundle.Manifest.Revision)
	return nil
}

var errRefused = &refusedError{}

type refusedError struct{}

func (*refusedError) Error() string { return "refused by the test" }

func (r *recorder) observed(_, result string, _ error) {
	r.mu.Lock()
	r.results = append(r.results, result)
	r.mu.Unlock()
	r.changed <- struct{}{}
}

// waitFor waits until cond holds over what was recorded.
func (r *recorder) waitFor(t *testing.T, what string, cond func(revisions, results []string) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		ok := cond(append([]string(nil), r.revisions...), append([]string(nil), r.results...))
		revs, results := strings.Join(r.revisions, ","), strings.Join(r.results, ",")
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("never saw %s; activated %s, results %s", what, revs, results)
		}
	}
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// The poller runs OPA's downloader against our bundle server: a first 200, then 304s, a new
// revision activated, a revision that fails activation tried again (its ETag is not kept),
// a tampered bundle refused, and the last good bundle cached for a cold start.
func TestPollerActivatesNewRevisionsAndKeepsTheLastGoodOne(t *testing.T) {
	dir := t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	pub, _ := os.ReadFile(public)
	vc := bundles.VerificationConfig(string(pub), "RS256")
	served := filepath.Join(dir, "kb.tar.gz")
	bundletest.Publish(t, served, bundletest.KB(t, private, "r1", "1.37"))
	var requests sync.Map
	srv := httptest.NewServer(countRequests(&requests, bundles.Handler(dir, bundles.ServeOptions{Token: "s3cret"})))
	defer srv.Close()

	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	remote := bundles.Remote{TokenFile: tokenFile}
	cache := filepath.Join(t.TempDir(), "cache")
	rec := newRecorder()
	rec.refuse = "r3"
	ctx := context.Background()
	p, err := bundles.Poll(ctx, bundles.PollOptions{URLs: []string{srv.URL + "/kb.tar.gz"}, Remote: remote, Verification: vc,
		MinDelay: time.Second, MaxDelay: time.Second, CacheDir: cache, Activate: rec.activate, Observed: rec.observed})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(ctx)

	rec.waitFor(t, "r1 activated, then a 304", func(revs, results []string) bool {
		return len(revs) == 1 && revs[0] == "r1" && count(results, bundles.ResultNotModified) >= 1
	})
	bundletest.Publish(t, served, bundletest.KB(t, private, "r2", "1.37"))
	rec.waitFor(t, "r2 activated", func(revs, _ []string) bool { return len(revs) == 2 && revs[1] == "r2" })
	bundletest.Publish(t, served, bundletest.KB(t, private, "r3", "1.37"))
	rec.waitFor(t, "r3 refused twice, so it is downloaded again rather than hidden by a 304", func(_, results []string) bool {
		return count(results, bundles.ResultActivationFailed) >= 2
	})
	tampered := bundletest.KB(t, "", "r4", "1.37")
	bundletest.Publish(t, served, tampered)
	rec.waitFor(t, "an unsigned r4 refused by the downloader", func(_, results []string) bool {
		return count(results, bundles.ResultDownloadFailed) >= 1
	})
	p.Stop(ctx)

	// A cold start with the server gone activates the cached r2.
	srv.Close()
	cold := newRecorder()
	p2, err := bundles.Poll(ctx, bundles.PollOptions{URLs: []string{srv.URL + "/kb.tar.gz"}, Remote: remote, Verification: vc,
		MinDelay: time.Second, MaxDelay: time.Second, CacheDir: cache, Activate: cold.activate, Observed: cold.observed})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Stop(ctx)
	cold.waitFor(t, "the cached r2 activated", func(revs, _ []string) bool { return len(revs) == 1 && revs[0] == "r2" })
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		info, _ := e.Info()
		if info.Mode().Perm() != 0o600 || strings.Contains(e.Name(), "kb") {
			t.Errorf("cache file %s mode %v: want 0600 and a name that is a digest, not the URL", e.Name(), info.Mode().Perm())
		}
	}
	if n, _ := requests.Load("Bearer s3cret"); n == nil {
		t.Error("the downloader never sent the bearer token")
	}
}

func countRequests(m *sync.Map, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.Store(r.Header.Get("Authorization"), true)
		h.ServeHTTP(w, r)
	})
}

func TestFetchRefusesURLsWithCredentialsAndBadSchemes(t *testing.T) {
	for _, src := range []string{"https://user:pw@bundles.example/kb.tar.gz", "ftp://bundles.example/kb.tar.gz"} {
		_, err := bundles.Fetch(context.Background(), src, bundles.Remote{}, nil)
		if err == nil || strings.Contains(err.Error(), "pw") {
			t.Errorf("Fetch(%s) = %v: want an error that does not repeat the password", src, err)
		}
	}
}

// An https bundle server with a private CA is trusted through --bundle-ca-file and refused
// without it; a token is read from its file for each request.
func TestFetchOverHTTPSTrustsTheCAFileAndSendsTheTokenFile(t *testing.T) {
	dir := t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	pub, _ := os.ReadFile(public)
	bundletest.Publish(t, filepath.Join(dir, "kb.tar.gz"), bundletest.KB(t, private, "r1", "1.37"))
	srv := httptest.NewUnstartedServer(bundles.Handler(dir, bundles.ServeOptions{Token: "rotated"}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the point
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vc := bundles.VerificationConfig(string(pub), "RS256")
	url := srv.URL + "/kb.tar.gz"
	ctx := context.Background()
	if _, err := bundles.Fetch(ctx, url, bundles.Remote{TokenFile: tokenFile}, vc); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA file: %v, want a certificate error", err)
	}
	if _, err := bundles.Fetch(ctx, url, bundles.Remote{TokenFile: tokenFile, CAFile: ca}, vc); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("with an old token: %v, want Unauthorized", err)
	}
	if err := os.WriteFile(tokenFile, []byte("rotated\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := bundles.Fetch(ctx, url, bundles.Remote{TokenFile: tokenFile, CAFile: ca}, vc)
	if err != nil || f.Bundle.Manifest.Revision != "r1" {
		t.Errorf("with the CA file and the rotated token: %v", err)
	}
	if _, err := bundles.Fetch(ctx, "http://127.0.0.1:1/kb.tar.gz", bundles.Remote{CAFile: ca}, vc); err == nil || !strings.Contains(err.Error(), "needs an https URL") {
		t.Errorf("a CA file for http: %v", err)
	}
}
