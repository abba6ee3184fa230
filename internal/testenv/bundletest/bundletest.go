// Package bundletest builds signed policy bundles for tests: a key pair, and the shipped kb
// as a later revision with another horizon, built and signed with the project's own code.
package bundletest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/policies"
)

// Keys writes an RSA key pair into dir and returns the private key file and public key file.
func Keys(t testing.TB, dir string) (privateFile, publicFile string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	privateFile, publicFile = filepath.Join(dir, "private.pem"), filepath.Join(dir, "public.pem")
	write(t, privateFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	write(t, publicFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
	return privateFile, publicFile
}

// KB is the shipped kb bundle as revision, knowing Kubernetes up to horizon, signed with
// the private key in privateFile (empty: unsigned).
func KB(t testing.TB, privateFile, revision, horizon string) []byte {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, policies.KB); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(dir, "upgradescope", "kb", "meta", "data.json")
	raw, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(raw), `"horizon": "1.37"`, `"horizon": "`+horizon+`"`, 1)
	if edited == string(raw) && horizon != "1.37" {
		t.Fatalf("kb meta %s holds no horizon 1.37 to replace", meta)
	}
	if err := os.Chmod(meta, 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, meta, []byte(edited))
	return Build(t, dir, revision, privateFile)
}

// Build is the bundle directory dir as a tarball of revision, signed with privateFile
// (RS256; "": unsigned).
func Build(t testing.TB, dir, revision, privateFile string) []byte {
	t.Helper()
	var built bytes.Buffer
	if err := bundles.Build(dir, revision, &built); err != nil {
		t.Fatal(err)
	}
	if privateFile == "" {
		return built.Bytes()
	}
	var signed bytes.Buffer
	if err := bundles.Sign(bytes.NewReader(built.Bytes()), &signed, privateFile, "RS256", ""); err != nil {
		t.Fatal(err)
	}
	return signed.Bytes()
}

// Publish replaces path with data atomically, as a bundle server's directory expects.
func Publish(t testing.TB, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	write(t, tmp, data)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
