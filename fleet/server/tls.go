package server

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// certReloader serves a certificate and key pair from files, loading them again when
// either file changes (checked at most once a second, on a new handshake), so a renewed
// certificate is served without a restart. A pair that fails to load keeps the old one.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   string // the files' sizes and modification times when cert was loaded
	checked time.Time
}

// newCertReloader loads the pair once; an error here stops the server from starting.
func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log}
	stamp, err := r.stampNow()
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert-file/--tls-key-file: %w", err)
	}
	r.cert, r.stamp, r.checked = &cert, stamp, time.Now()
	return r, nil
}

// TLSConfig is a server configuration on TLS 1.2 at the oldest serving the reloaded pair.
func (r *certReloader) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.getCertificate}
}

func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < time.Second {
		return r.cert, nil
	}
	r.checked = time.Now()
	stamp, err := r.stampNow()
	if err != nil || stamp == r.stamp {
		return r.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		// Often the two files are mid-rewrite: keep serving the old pair and look again.
		r.log.Warn("tls: the changed certificate pair does not load; serving the previous one", "err", err)
		return r.cert, nil
	}
	r.cert, r.stamp = &cert, stamp
	r.log.Info("tls: loaded the renewed certificate pair", "cert", r.certFile)
	return r.cert, nil
}

func (r *certReloader) stampNow() (string, error) {
	var stamp string
	for _, f := range []string{r.certFile, r.keyFile} {
		info, err := os.Stat(f)
		if err != nil {
			return "", fmt.Errorf("--tls-cert-file/--tls-key-file: %w", err)
		}
		stamp += fmt.Sprintf("%d:%d;", info.Size(), info.ModTime().UnixNano())
	}
	return stamp, nil
}
