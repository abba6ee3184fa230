package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func writeRSAKeys(t *testing.T, dir string) (private, public string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	private, public = filepath.Join(dir, "private.pem"), filepath.Join(dir, "public.pem")
	_ = os.WriteFile(private, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
	_ = os.WriteFile(public, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
	return private, public
}

// The signed bundle is an ordinary OPA bundle: stock `opa build --verification-key` accepts
// it and refuses the unsigned one, as our own verify does.
func TestBundleBuildSignVerifyRoundTripAndStockOPAAgrees(t *testing.T) {
	dir := t.TempDir()
	private, public := writeRSAKeys(t, dir)
	unsigned, signed := filepath.Join(dir, "b.tar.gz"), filepath.Join(dir, "b.signed.tar.gz")
	steps := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bundle", "build", "../../policies/rules", "-o", unsigned, "--revision", "2026-11-29.5"}, 0, ""},
		{[]string{"bundle", "sign", unsigned, "--signing-key", private, "-o", signed}, 0, ""},
		{[]string{"bundle", "verify", signed, "--key", public}, 0, "signature verified (revision 2026-11-29.5)"},
		{[]string{"bundle", "verify", unsigned, "--key", public}, 1, "missing .signatures.json"},
		{[]string{"bundle", "inspect", signed}, 0, `"signed": true`},
	}
	for _, s := range steps {
		r := runCLI(t, s.args...)
		if r.code != s.code || !strings.Contains(r.stdout+r.stderr, s.want) {
			t.Fatalf("%v: exit %d, output %q%q; want %d with %q", s.args, r.code, r.stdout, r.stderr, s.code, s.want)
		}
	}
	if info, err := os.Stat(signed); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("signed bundle mode = %v (%v), want 0600", info.Mode().Perm(), err)
	}
	opa := func(bundle string) error {
		return exec.Command("go", "tool", "opa", "build", "-b", bundle, "--verification-key", public, "-o", filepath.Join(dir, "out.tar.gz")).Run()
	}
	if err := opa(signed); err != nil {
		t.Errorf("stock opa build --verification-key refused our signed bundle: %v", err)
	}
	if err := opa(unsigned); err == nil {
		t.Error("stock opa build --verification-key accepted an unsigned bundle")
	}
}
