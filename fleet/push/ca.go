package push

import (
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/upgradescope/upgradescope/internal/smallfile"
)

// caPool is the system roots plus the PEM bundle in file.
func caPool(file string) (*x509.CertPool, error) {
	pool, err := smallfile.CertPool(file)
	switch {
	case errors.Is(err, smallfile.ErrNoCertificate):
		return nil, fmt.Errorf("server CA file %s: %w", file, err)
	case err != nil:
		return nil, fmt.Errorf("read server CA file: %w", err)
	}
	return pool, nil
}
