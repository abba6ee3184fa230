package smallfile

import (
	"crypto/x509"
	"errors"
)

// ErrNoCertificate is CertPool's answer for a file that holds no PEM certificate.
var ErrNoCertificate = errors.New("no PEM certificate in it")

// CertPool is the system roots plus the PEM certificates in the CA bundle at path (MaxCA
// at most): what every client trusting a --*-ca-file besides the system roots dials with.
// Its errors are Read's, or ErrNoCertificate; callers name the flag.
func CertPool(path string) (*x509.CertPool, error) {
	pem, err := Read(path, MaxCA)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, ErrNoCertificate
	}
	return pool, nil
}
