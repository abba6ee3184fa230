package bundles_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/internal/bundletest"
)

// The bomb: 34 files of 60 MiB zeros, about 2 MB compressed. Every way in refuses it
// after unpacking at most MaxUnpacked, naming the bound.
func TestAGzipBombIsRefusedByEveryReader(t *testing.T) {
	bomb := bundletest.Bomb(t, 34, 60<<20)
	if len(bomb) > 4<<20 {
		t.Fatalf("the bomb is %d bytes compressed; want a few MB", len(bomb))
	}
	const want = "bundle too large: unpacks to more than 64 MiB"
	check := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	_, err := bundles.Read(bytes.NewReader(bomb), nil)
	check("Read", err)
	_, err = bundles.Inspect(bytes.NewReader(bomb))
	check("Inspect", err)

	path := filepath.Join(t.TempDir(), "bomb.tar.gz")
	if err := os.WriteFile(path, bomb, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = bundles.Fetch(context.Background(), path, bundles.Remote{}, nil)
	check("Fetch of a file", err)
	if err != nil && !strings.Contains(err.Error(), path) {
		t.Errorf("Fetch of a file: %v does not name %s", err, path)
	}

	_, public := bundletest.Keys(t, t.TempDir())
	pub, _ := os.ReadFile(public)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(bomb)
	}))
	defer srv.Close()
	_, err = bundles.Fetch(context.Background(), srv.URL+"/bomb.tar.gz", bundles.Remote{}, bundles.VerificationConfig(string(pub), "RS256"))
	check("Fetch of a URL", err)
	if err != nil && !strings.Contains(err.Error(), "/bomb.tar.gz") {
		t.Errorf("Fetch of a URL: %v does not name the URL", err)
	}
}

func TestABundleOfTooManyFilesIsRefused(t *testing.T) {
	_, err := bundles.Read(bytes.NewReader(bundletest.ManyFiles(t, bundles.MaxFiles+1)), nil)
	if err == nil || !strings.Contains(err.Error(), "bundle too large: more than 10000 files") {
		t.Errorf("Read of %d files: %v", bundles.MaxFiles+1, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "big.json"), make([]byte, bundles.MaxUnpacked+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := bundles.ReadDir(dir, nil); err == nil || !strings.Contains(err.Error(), "bundle too large") {
		t.Errorf("ReadDir past the bound: %v", err)
	}
}
