package main

import (
	"crypto/tls"
	"path/filepath"
	"testing"

	"github.com/upgradescope/upgradescope/internal/testenv/tlstest"
)

// serve --tls-cert-file/--tls-key-file serves HTTPS with the pair. Its reloading and
// the oldest TLS version it takes are the server's (fleet/server TestRunServesTLS…).
func TestServeTLSServesItsCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca := tlstest.NewCA(t)
	ca.WriteLeaf(t, 100, certFile, keyFile)
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--tls-cert-file", certFile, "--tls-key-file", keyFile)

	resp, err := tlsClient(&tls.Config{RootCAs: ca.Pool}).Get(p.url + "/healthz")
	if err != nil {
		t.Fatalf("https GET /healthz with the test CA: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /healthz over TLS: %d", resp.StatusCode)
	}
	if got := tlstest.ServedSerial(p.url[len("https://"):], ca.Pool); got != 100 {
		t.Errorf("served serial %d, want 100: the pair of --tls-cert-file", got)
	}
}
