package server_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
)

// The server hands its published bundles to agents holding an ingest token: the shared one
// or a cluster's, never a read token or none; with an ETag, 304 for the current revision, and
// the new revision once it is published.
func TestPublishedBundlesGoToAgentsWithTheirIngestToken(t *testing.T) {
	dir := t.TempDir()
	priv, _ := bundletest.Keys(t, t.TempDir())
	first := bundletest.KB(t, priv, "2027-01-05.1", "1.37")
	bundletest.Publish(t, filepath.Join(dir, "kb.tar.gz"), first)
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared"; c.PublishDir = dir })
	prod := ts.mintIngest("prod")
	get := func(token string, header http.Header) response {
		return ts.do("GET", "/bundles/kb.tar.gz", token, nil, header)
	}
	r := get(prod, nil)
	etag := r.header.Get("ETag")
	if r.status != 200 || !bytes.Equal(r.body, first) || etag == "" {
		t.Fatalf("a cluster's ingest token: %d, %d bytes, ETag %q; want the published bundle", r.status, len(r.body), etag)
	}
	if r := get("shared", http.Header{"If-None-Match": {etag}}); r.status != 304 {
		t.Errorf("the shared token naming the current ETag: %d, want 304", r.status)
	}
	for name, token := range map[string]string{"no token": "", "a read token": ts.mintRead("*"), "an unknown token": "nope"} {
		if r := get(token, nil); r.status != 401 {
			t.Errorf("%s: %d, want 401", name, r.status)
		}
	}
	if r := ts.do("GET", "/bundles/rules.tar.gz", prod, nil, nil); r.status != 404 {
		t.Errorf("a bundle not published: %d", r.status)
	}
	if err := os.Mkdir(filepath.Join(dir, "staging"), 0o700); err != nil {
		t.Fatal(err)
	}
	bundletest.Publish(t, filepath.Join(dir, "staging", "kb.tar.gz"), first)
	for _, name := range []string{"staging%2Fkb.tar.gz", "..%2Fkb.tar.gz", ".hidden.tar.gz"} {
		if r := ts.do("GET", "/bundles/"+name, prod, nil, nil); r.status != 404 {
			t.Errorf("%s: %d, want 404: only the directory's own files are published", name, r.status)
		}
	}
	next := bundletest.KB(t, priv, "2027-02-01.1", "1.37")
	bundletest.Publish(t, filepath.Join(dir, "kb.tar.gz"), next)
	if r := get(prod, http.Header{"If-None-Match": {etag}}); r.status != 200 || !bytes.Equal(r.body, next) || r.header.Get("ETag") == etag {
		t.Errorf("after publishing a new revision: %d, ETag %q", r.status, r.header.Get("ETag"))
	}
	if r := newServer(t, func(c *server.Config) { c.IngestToken = "shared" }).do("GET", "/bundles/kb.tar.gz", "shared", nil, nil); r.status != 404 ||
		!strings.Contains(string(r.body), "--publish-dir") {
		t.Errorf("a server publishing nothing: %d %s", r.status, r.body)
	}
}
