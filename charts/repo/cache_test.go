package repo_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

func TestAnOfflineReaderReadsWhatAnOnlineOneCached(t *testing.T) {
	idx := charttest.ServeIndex(t, web...)
	reg := charttest.ServeOCI(t, web...)
	cache := t.TempDir()
	refs := []repo.Ref{{Repository: idx.URL, Chart: "web"}, {Repository: reg.URL(), Chart: "web"}}

	online := newReader(t, repo.Options{CacheDir: cache})
	for _, ref := range refs {
		if _, err := online.Versions(ctxFor(t), ref); err != nil {
			t.Fatal(err)
		}
		if _, err := online.Chart(ctxFor(t), ref, "1.0.0"); err != nil {
			t.Fatal(err)
		}
	}
	before := idx.Requests.Load() + reg.Requests.Load()

	offline := newReader(t, repo.Options{CacheDir: cache, Offline: true})
	for _, ref := range refs {
		t.Run(ref.Repository, func(t *testing.T) {
			vs, err := offline.Versions(ctxFor(t), ref)
			if err != nil {
				t.Fatal(err)
			}
			if len(vs) != 4 {
				t.Errorf("offline versions = %v, want the 4 cached", versionStrings(vs))
			}
			ch, err := offline.Chart(ctxFor(t), ref, "1.0.0")
			if err != nil {
				t.Fatal(err)
			}
			if ch.Metadata.Version != "1.0.0" {
				t.Errorf("offline chart version = %s", ch.Metadata.Version)
			}
			_, err = offline.Chart(ctxFor(t), ref, "1.1.0")
			wantErr(t, err, "offline:", "not in the chart cache "+cache)
		})
	}
	if after := idx.Requests.Load() + reg.Requests.Load(); after != before {
		t.Errorf("the offline reader made %d requests, want none", after-before)
	}
}

func TestAnOfflineReaderWithoutTheRepositoryCachedSaysSo(t *testing.T) {
	cache := t.TempDir()
	r := newReader(t, repo.Options{CacheDir: cache, Offline: true})
	tests := []struct{ name, repository string }{
		{"a classic repository", "https://user:secret@charts.example.com/stable?token=abc"},
		{"an OCI registry", "oci://registry.example.com/charts"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Versions(ctxFor(t), repo.Ref{Repository: tt.repository, Chart: "web"})
			wantErr(t, err, "offline: "+repo.Redact(tt.repository), "not in the chart cache "+cache)
			for _, secret := range []string{"secret", "token=abc"} {
				if containsText(err, secret) {
					t.Errorf("error %q holds %q", err, secret)
				}
			}
		})
	}
}

func TestAChartArchiveIsFetchedOnceAcrossReaders(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	cache := t.TempDir()
	ref := repo.Ref{Repository: srv.URL, Chart: "web"}

	first := newReader(t, repo.Options{CacheDir: cache})
	for range 3 { // within one Reader the index too is read once
		if _, err := first.Chart(ctxFor(t), ref, "1.0.0"); err != nil {
			t.Fatal(err)
		}
	}
	if got := srv.Requests.Load(); got != 2 {
		t.Fatalf("the first reader made %d requests, want 2 (index, archive)", got)
	}
	second := newReader(t, repo.Options{CacheDir: cache})
	if _, err := second.Chart(ctxFor(t), ref, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests.Load() - 2; got != 1 {
		t.Errorf("the second reader made %d requests, want 1 (the index, online; the archive from the cache)", got)
	}
}

func TestTheCacheIsTheUsersOnly(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	cache := filepath.Join(t.TempDir(), "charts")
	r := newReader(t, repo.Options{CacheDir: cache})
	if _, err := r.Chart(ctxFor(t), repo.Ref{Repository: srv.URL, Chart: "web"}, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(cache)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o700 {
		t.Errorf("cache dir mode = %v, want 0700", info.Mode().Perm())
	}
	files, _ := filepath.Glob(filepath.Join(cache, "*"))
	if len(files) != 2 {
		t.Errorf("cache holds %v, want an index and an archive", files)
	}
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600", filepath.Base(f), info.Mode().Perm())
		}
	}
}

func TestAnExistingCacheDirectoryKeepsItsMode(t *testing.T) {
	srv := charttest.ServeIndex(t, web...)
	shared := t.TempDir()
	if err := os.Chmod(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, repo.Options{CacheDir: shared})
	if _, err := r.Chart(ctxFor(t), repo.Ref{Repository: srv.URL, Chart: "web"}, "1.0.0"); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(shared)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o755 {
		t.Errorf("the existing cache dir's mode became %v, want it left 0755", info.Mode().Perm())
	}
	files, _ := filepath.Glob(filepath.Join(shared, "*"))
	for _, f := range files {
		if info, err := os.Stat(f); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (%v), want 0600", filepath.Base(f), info.Mode().Perm(), err)
		}
	}
	if len(files) != 2 {
		t.Errorf("cache holds %v, want an index and an archive", files)
	}
}
