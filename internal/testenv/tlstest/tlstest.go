// Package tlstest issues certificates from a throwaway CA: server leaves for 127.0.0.1, to
// tell which one a server presents when it loads its pair from files again, and client
// certificates, as a repository Secret holds them.
package tlstest

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
	"testing"
	"time"
)

// CA is a self-signed CA that issues leaves for 127.0.0.1; Pool trusts only it.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	Pool *x509.CertPool
}

// NewCA makes a CA valid for an hour either side of now.
func NewCA(t testing.TB) *CA {
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
	return &CA{cert: cert, key: key, Pool: pool}
}

// WriteLeaf issues a leaf for 127.0.0.1 with serial and writes the PEM pair to certFile and
// keyFile.
func (ca *CA) WriteLeaf(t testing.TB, serial int64, certFile, keyFile string) {
	t.Helper()
	der, keyDER := ca.issue(t, &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	// The key first: a handshake between the two writes sees a mismatched pair, which the
	// server must survive by serving the previous one.
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	writePEM(t, certFile, "CERTIFICATE", der)
}

// ClientPEM issues a client certificate named name and returns it and its key, PEM-encoded.
func (ca *CA) ClientPEM(t testing.TB, name string) (certPEM, keyPEM []byte) {
	t.Helper()
	der, keyDER := ca.issue(t, &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// issue signs tmpl, valid for an hour either side of now, for a new key, and returns the
// certificate's and the key's DER.
func (ca *CA) issue(t testing.TB, tmpl *x509.Certificate) (der, keyDER []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	if der, err = x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key); err != nil {
		t.Fatal(err)
	}
	if keyDER, err = x509.MarshalECPrivateKey(key); err != nil {
		t.Fatal(err)
	}
	return der, keyDER
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ServedSerial opens a new TLS connection to addr trusting only roots and answers the
// leaf's serial, or -1 when the handshake fails.
func ServedSerial(addr string, roots *x509.CertPool) int64 {
	d := &net.Dialer{Timeout: 5 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{RootCAs: roots})
	if err != nil {
		return -1
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
}
