package repo_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

func archiveDigest(t testing.TB, srv *charttest.Repo, file string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(srv.Dir, file))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func TestAnIndexPastTheBoundIsRefusedWithoutReadingItAll(t *testing.T) {
	// The index never ends: a reader that read it whole would never answer.
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		fmt.Fprint(w, "apiVersion: v1\nentries:\n")
		line := []byte("  # " + strings.Repeat("x", 1020) + "\n")
		for req.Context().Err() == nil {
			if _, err := w.Write(line); err != nil {
				return
			}
			written.Add(int64(len(line)))
		}
	}))
	t.Cleanup(srv.Close)

	r := newReader(t, repo.Options{MaxIndexBytes: 256 << 10, Timeout: 20 * time.Second})
	start := time.Now()
	_, err := r.Versions(ctxFor(t), repo.Ref{Repository: srv.URL + "/charts", Chart: "web"})
	wantErr(t, err, "index of "+srv.URL+"/charts larger than 256 KiB")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("refusing the index took %s", d)
	}
}

func TestAnIndexWithinTheBoundIsRead(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	size, err := os.Stat(filepath.Join(srv.Dir, "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := newReader(t, repo.Options{MaxIndexBytes: size.Size()})
	if _, err := r.Versions(ctxFor(t), repo.Ref{Repository: srv.URL, Chart: "web"}); err != nil {
		t.Fatalf("an index of exactly the bound: %v", err)
	}
	r = newReader(t, repo.Options{MaxIndexBytes: size.Size() - 1})
	_, err = r.Versions(ctxFor(t), repo.Ref{Repository: srv.URL, Chart: "web"})
	wantErr(t, err, fmt.Sprintf("larger than %d bytes", size.Size()-1))
}

func TestAChartArchivePastTheBoundIsRefused(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	r := newReader(t, repo.Options{MaxChartBytes: 100})
	_, err := r.Chart(ctxFor(t), repo.Ref{Repository: srv.URL, Chart: "web"}, "1.0.0")
	wantErr(t, err, "chart web 1.0.0 of "+srv.URL+" larger than 100 bytes")
}

func TestAnArchiveNotMatchingTheIndexDigestIsRefused(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	// Swap the archive for another version's after indexing: the index's digest no longer holds.
	other, err := os.ReadFile(filepath.Join(srv.Dir, "web-1.1.0.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.Dir, "web-1.0.0.tgz"), other, 0o600); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	r := newReader(t, repo.Options{CacheDir: cache})
	_, err = r.Chart(ctxFor(t), repo.Ref{Repository: srv.URL, Chart: "web"}, "1.0.0")
	wantErr(t, err, "chart web 1.0.0 from "+srv.URL+"/web-1.0.0.tgz does not match the index's digest", "refusing")

	archives, _ := filepath.Glob(filepath.Join(cache, "chart-*"))
	if len(archives) != 0 {
		t.Errorf("the refused archive was cached: %v", archives)
	}
}

func TestAHungRepositoryFailsWithinTheTimeout(t *testing.T) {
	hung := func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-req.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}
	tests := []struct {
		name string
		ref  func(url string) repo.Ref
	}{
		{"a classic repository that never answers", func(u string) repo.Ref { return repo.Ref{Repository: u, Chart: "web"} }},
		{"an OCI registry that never answers", func(u string) repo.Ref {
			return repo.Ref{Repository: "oci://" + strings.TrimPrefix(u, "http://") + "/charts", Chart: "web"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(hung))
			t.Cleanup(srv.Close)
			r := newReader(t, repo.Options{Timeout: 300 * time.Millisecond})
			start := time.Now()
			_, err := r.Versions(ctxFor(t), tt.ref(srv.URL))
			took := time.Since(start)
			wantErr(t, err, "no answer within 300ms")
			if took > 2*time.Second {
				t.Errorf("the read gave up after %s, want about 300ms", took)
			}
		})
	}
}

func TestAHungArchiveHostCostsOneTimeoutPerRepository(t *testing.T) {
	published := charttest.ServeIndex(t, web...)
	var archives atomic.Int64
	var hungURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/index.yaml") {
			data, err := os.ReadFile(filepath.Join(published.Dir, "index.yaml"))
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			_, _ = w.Write([]byte(strings.ReplaceAll(string(data), published.URL, hungURL)))
			return
		}
		archives.Add(1)
		select {
		case <-req.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	hungURL = srv.URL
	r := newReader(t, repo.Options{Timeout: 300 * time.Millisecond})
	ref := repo.Ref{Repository: srv.URL, Chart: "web"}
	_, err := r.Chart(ctxFor(t), ref, "1.0.0")
	wantErr(t, err, "no answer within 300ms")
	start := time.Now()
	for _, v := range []string{"1.1.0", "1.10.0"} {
		_, err := r.Chart(ctxFor(t), ref, v)
		wantErr(t, err, "chart web "+v+" not read", "no answer within 300ms")
	}
	if took := time.Since(start); took > 200*time.Millisecond {
		t.Errorf("two more versions took %s, want them to fail at once", took)
	}
	if n := archives.Load(); n != 1 {
		t.Errorf("the archive host was asked %d times, want once", n)
	}
}
