package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testCA is a self-signed CA that issues leaves for 127.0.0.1.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "upgradescope test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// writeLeaf issues a leaf for 127.0.0.1 with serial and writes the PEM pair to certFile and
// keyFile.
func (ca *testCA) writeLeaf(t *testing.T, serial int64, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// The key first: a handshake between the two writes sees a mismatched pair, which the
	// server must survive by serving the previous one.
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	writePEM(t, certFile, "CERTIFICATE", der)
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// servedSerial opens a new TLS connection trusting only roots and answers the leaf's serial,
// or -1 when the handshake fails.
func servedSerial(addr string, roots *x509.CertPool) int64 {
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{RootCAs: roots})
	if err != nil {
		return -1
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}

// serve --tls-cert-file/--tls-key-file serves HTTPS at TLS 1.2 or newer, picks up a renewed
// pair without a restart, and keeps serving the last good pair when the files break.
func TestServeTLSServesAndReloadsItsCertificate(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	ca := newTestCA(t)
	ca.writeLeaf(t, 100, certFile, keyFile)
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--tls-cert-file", certFile, "--tls-key-file", keyFile)
	addr := p.url[len("https://"):]

	resp, err := tlsClient(&tls.Config{RootCAs: ca.pool}).Get(p.url + "/healthz")
	if err != nil {
		t.Fatalf("https GET /healthz with the test CA: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /healthz over TLS: %d", resp.StatusCode)
	}

	if resp, err := tlsClient(&tls.Config{RootCAs: ca.pool, MaxVersion: tls.VersionTLS11}).Get(p.url + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("a TLS 1.1 client was served (%d), want the handshake refused", resp.StatusCode)
	}

	// A renewed leaf: the server looks at the files at most once a second, on a handshake.
	ca.writeLeaf(t, 200, certFile, keyFile)
	if !pollUntil(10*time.Second, 200*time.Millisecond, func() bool { return servedSerial(addr, ca.pool) == 200 }) {
		t.Fatalf("new connections still see serial %d 10 s after the pair was renewed", servedSerial(addr, ca.pool))
	}

	// A broken pair (the certificate file truncated mid-write): the last good one stays.
	if err := os.WriteFile(certFile, []byte("-----BEGIN CERTIFICATE-----\nbroken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Past the once-a-second check, several new connections must all still see serial 200.
	for deadline := time.Now().Add(2500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if got := servedSerial(addr, ca.pool); got != 200 {
			t.Fatalf("after a broken pair was written, a new connection saw serial %d, want the last good 200", got)
		}
	}
	if !logged(p.logs, "does not load; serving the previous one") {
		t.Errorf("the server did not log the broken pair")
	}
}
