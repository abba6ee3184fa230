package repo

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// errBound is what a bounded connection returns once the read's byte budget is spent.
var errBound = errors.New("response larger than its bound")

// boundedTransport is an http.Transport for one read (an index, a tag list, an archive)
// that the Helm SDK's getter and registry client are handed. They read a body whole into
// memory and take no context, so the bound and the deadline are enforced beneath them: the
// connections it dials count the bytes they read and fail past the budget, and are closed
// when ctx ends.
type boundedTransport struct {
	*http.Transport
	budget   int64
	read     atomic.Int64
	exceeded atomic.Bool
}

// newBoundedTransport bounds the bytes read over all its connections to limit plus room
// for headers and framing; the caller checks the body's exact size afterwards.
func newBoundedTransport(ctx context.Context, limit int64, tlsConf *tls.Config) *boundedTransport {
	b := &boundedTransport{budget: limit + limit/32 + 64<<10}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	b.Transport = &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(_ context.Context, network, addr string) (net.Conn, error) {
			conn, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			stop := context.AfterFunc(ctx, func() { conn.Close() })
			return &boundedConn{Conn: conn, t: b, stop: stop}, nil
		},
		TLSClientConfig: tlsConf,
		// The bound is on bytes as they arrive: a compressed body would escape it.
		DisableCompression:  true,
		TLSHandshakeTimeout: 10 * time.Second,
		ForceAttemptHTTP2:   true,
	}
	return b
}

type boundedConn struct {
	net.Conn
	t    *boundedTransport
	stop func() bool
}

func (c *boundedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.t.read.Add(int64(n)) > c.t.budget {
		c.t.exceeded.Store(true)
		c.Conn.Close()
		return n, errBound
	}
	return n, err
}

func (c *boundedConn) Close() error {
	c.stop()
	return c.Conn.Close()
}

// tlsConfig is the client TLS of creds, as Helm's getter builds it from the same fields
// (Helm's own builder is internal to its module); PEM held in memory stands in for a file
// not named. An error names the file, never the PEM.
func tlsConfig(creds Credentials) (*tls.Config, error) {
	conf := &tls.Config{InsecureSkipVerify: creds.InsecureSkipTLSVerify} //nolint:gosec // the user's choice in repositories.yaml
	switch {
	case creds.CertFile != "" || creds.KeyFile != "":
		cert, err := tls.LoadX509KeyPair(creds.CertFile, creds.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("load client certificate %s: %w", creds.CertFile, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	case len(creds.CertPEM) > 0 || len(creds.KeyPEM) > 0:
		cert, err := tls.X509KeyPair(creds.CertPEM, creds.KeyPEM)
		if err != nil {
			// X509KeyPair's errors describe the PEM blocks, not their bytes.
			return nil, fmt.Errorf("load the client certificate the repository's credentials hold: %w", err)
		}
		conf.Certificates = []tls.Certificate{cert}
	}
	ca := creds.CAPEM
	where := "the CA the repository's credentials hold"
	if creds.CAFile != "" {
		pem, err := os.ReadFile(creds.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read CA file %s: %w", creds.CAFile, err)
		}
		ca, where = pem, "CA file "+creds.CAFile
	}
	if len(ca) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("%s holds no PEM certificate", where)
		}
		conf.RootCAs = pool
	}
	return conf, nil
}

// sizeText writes a bound as a user set it: "64 MiB", "4 KiB" or "1000 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
