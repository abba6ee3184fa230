package repo_test

import (
	"crypto/tls"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
	"github.com/upgradescope/upgradescope/internal/testenv/tlstest"
)

func TestATLSRepositoryReadWithCertificatesHeldInMemory(t *testing.T) {
	ca := tlstest.NewCA(t)
	certPEM, keyPEM := ca.ClientPEM(t, "gitops")
	// The index of a loopback repository, served over TLS that asks for the client certificate.
	index := charttest.ServeIndex(t, web...)
	srv := httptest.NewUnstartedServer(http.FileServer(http.Dir(index.Dir)))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	ref := repo.Ref{Repository: srv.URL, Chart: "web"}

	tests := []struct {
		name    string
		creds   repo.Credentials
		wantErr string
	}{
		{"with the certificate, its key and the CA in memory the index is read", repo.Credentials{CertPEM: certPEM, KeyPEM: keyPEM, CAPEM: caPEM}, ""},
		{"without the client certificate the server refuses the read", repo.Credentials{CAPEM: caPEM}, "read index"},
		{"without the CA the server is not trusted", repo.Credentials{CertPEM: certPEM, KeyPEM: keyPEM}, "certificate"},
		{"a key that does not match says so without quoting it", repo.Credentials{CertPEM: certPEM, KeyPEM: []byte("not a key"), CAPEM: caPEM}, "load the client certificate the repository's credentials hold"},
		{"a CA that holds no certificate says so", repo.Credentials{CertPEM: certPEM, KeyPEM: keyPEM, CAPEM: []byte("junk")}, "the CA the repository's credentials hold holds no PEM certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newReader(t, repo.Options{Credentials: func(repository string) (repo.Credentials, bool) {
				return tt.creds, repository == srv.URL
			}})
			vs, err := r.Versions(ctxFor(t), ref)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(versionStrings(vs), " "); got != "0.9.0 1.0.0 1.1.0 1.10.0" {
					t.Errorf("versions = %s", got)
				}
				return
			}
			wantErr(t, err, tt.wantErr)
			if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), "not a key") {
				t.Errorf("error %q quotes the key", err)
			}
		})
	}
}
