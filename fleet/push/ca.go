package push

import (
	"crypto/x509"
	"fmt"

	"github.com/upgradescope/upgradescope/internal/smallfile"
)

// caPool is the system roots plus the PEM bundle in file.
func caPool(file string) (*x509.CertPool, error) {
	pem, err := smallfile.Read(file, smallfile.MaxCA)
	if err != nil {
		return nil, fmt.Errorf("read server CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("server CA file %s: no PEM certificate in it", file)
	}
	return pool, nil
}
