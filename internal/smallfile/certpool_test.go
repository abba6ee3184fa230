package smallfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/upgradescope/upgradescope/internal/smallfile"
	"github.com/upgradescope/upgradescope/internal/testenv/tlstest"
)

func TestCertPoolTrustsTheBundleBesideTheSystemRoots(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "leaf.pem"), filepath.Join(dir, "leaf.key")
	tlstest.NewCA(t).WriteLeaf(t, 1, cert, key)
	if _, err := smallfile.CertPool(cert); err != nil {
		t.Errorf("a PEM certificate: %v", err)
	}
}

func TestCertPoolRefusesAFileWithoutACertificate(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "leaf.key")
	tlstest.NewCA(t).WriteLeaf(t, 1, filepath.Join(dir, "leaf.pem"), key)
	if _, err := smallfile.CertPool(key); !errors.Is(err, smallfile.ErrNoCertificate) {
		t.Errorf("a private key: %v, want ErrNoCertificate", err)
	}
	if _, err := smallfile.CertPool(filepath.Join(dir, "missing.pem")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v, want not exist", err)
	}
}
