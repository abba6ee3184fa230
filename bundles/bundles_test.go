package bundles

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/policies"
	"github.com/upgradescope/upgradescope/report"
)

func rsaKeys(t *testing.T) (private, public string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
}

func ecKeys(t testing.TB) (private, public string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalECPrivateKey(key)
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	return string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}))
}

// built is the embedded rules bundle built into a tarball.
func built(t *testing.T) []byte { return builtFS(t, policies.Rules) }

func builtFS(t *testing.T, fsys fs.FS) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := BuildFS(fsys, "2026-11-29.7", &out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestEveryBuiltinBundleBuildsWithItsRevisionRootsAndNoTests(t *testing.T) {
	tests := []struct {
		name      string
		fsys      fs.FS
		roots     int
		wantFiles func(files []string) bool
	}{
		{"rules", policies.Rules, 3, func(files []string) bool { return count(files, ".rego") >= 10 }},
		{"kb", policies.KB, 1, func(files []string) bool { return count(files, ".rego") == 0 && count(files, "data.json") == 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Inspect(bytes.NewReader(builtFS(t, tt.fsys)))
			if err != nil {
				t.Fatal(err)
			}
			if s.Revision != "2026-11-29.7" || s.Signed || len(s.Roots) != tt.roots || s.Metadata["name"] != tt.name {
				t.Errorf("summary = %+v, want revision 2026-11-29.7, unsigned, %d roots, named %s", s, tt.roots, tt.name)
			}
			if s.Metadata["minEngineVersion"] == nil {
				t.Errorf("metadata %v names no minEngineVersion", s.Metadata)
			}
			for _, f := range s.Files {
				if strings.HasSuffix(f, "_test.rego") {
					t.Errorf("built bundle holds the test %s", f)
				}
			}
			if !tt.wantFiles(s.Files) {
				t.Errorf("files = %v", s.Files)
			}
		})
	}
}

func count(files []string, suffix string) int {
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, suffix) {
			n++
		}
	}
	return n
}

func TestSignedBundlesVerifyAndEverythingElseIsRefused(t *testing.T) {
	rsaPriv, rsaPub := rsaKeys(t)
	ecPriv, ecPub := ecKeys(t)
	_, otherPub := rsaKeys(t)
	for _, shipped := range policies.Builtin {
		t.Run(shipped.Name, func(t *testing.T) {
			unsigned := builtFS(t, shipped.FS)
			sign := func(priv, alg string) []byte {
				keyFile := filepath.Join(t.TempDir(), "key.pem")
				if err := os.WriteFile(keyFile, []byte(priv), 0o600); err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if err := Sign(bytes.NewReader(unsigned), &out, keyFile, alg, ""); err != nil {
					t.Fatal(err)
				}
				return out.Bytes()
			}
			signedRSA, signedEC := sign(rsaPriv, "RS256"), sign(ecPriv, "ES256")
			tests := []struct {
				name      string
				bundle    []byte
				key, alg  string
				wantError string
			}{
				{"an RS256 signature verifies with its public key", signedRSA, rsaPub, "RS256", ""},
				{"an ES256 signature verifies with its public key", signedEC, ecPub, "ES256", ""},
				{"another key is refused", signedRSA, otherPub, "RS256", "verification"},
				{"an unsigned bundle is refused", unsigned, rsaPub, "RS256", "signature"},
				{"a file changed after signing is refused", changeAFile(t, signedRSA), rsaPub, "RS256", "digest mismatch"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					b, err := Read(bytes.NewReader(tt.bundle), VerificationConfig(tt.key, tt.alg))
					switch {
					case tt.wantError == "" && (err != nil || b.Manifest.Revision != "2026-11-29.7"):
						t.Errorf("refused or misread: %v (revision %q)", err, b.Manifest.Revision)
					case tt.wantError != "" && (err == nil || !strings.Contains(strings.ToLower(err.Error()), tt.wantError)):
						t.Errorf("error = %v, want one mentioning %q", err, tt.wantError)
					}
				})
			}
		})
	}
}

// changeAFile rewrites the tarball with one .rego file changed and .signatures.json kept.
func changeAFile(t *testing.T, tarball []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tarball))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	tw := tar.NewWriter(zw)
	changed := false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(tr)
		switch {
		case changed:
		case strings.HasSuffix(h.Name, ".rego"):
			body, changed = append(body, []byte("\n# changed after signing\n")...), true
		case strings.HasSuffix(h.Name, "data.json") && bytes.Contains(body, []byte(`"1.37"`)):
			// A knowledge base tampered with: the horizon (or any date) moved.
			body, changed = bytes.Replace(body, []byte(`"1.37"`), []byte(`"1.99"`), 1), true
		}
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(body)
	}
	_ = tw.Close()
	_ = zw.Close()
	if !changed {
		t.Fatal(`no .rego file or data.json holding "1.37" to change`)
	}
	return out.Bytes()
}

func TestInspectNamesTheSignerAndItsClaims(t *testing.T) {
	priv, _ := rsaKeys(t)
	dir := t.TempDir()
	keyFile, claimsFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "claims.json")
	if err := os.WriteFile(keyFile, []byte(priv), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claimsFile, []byte(`{"iss": "platform-team", "team": "acme"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var signed bytes.Buffer
	if err := Sign(bytes.NewReader(built(t)), &signed, keyFile, "RS256", claimsFile); err != nil {
		t.Fatal(err)
	}
	s, err := Inspect(bytes.NewReader(signed.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Signed || s.Signer == nil || s.Signer.Algorithm != "RS256" || s.Signer.Issuer != "platform-team" || s.Signer.Claims["team"] != "acme" {
		t.Errorf("summary = %+v, signer %+v: want RS256 by platform-team with the team claim", s, s.Signer)
	}
	unsigned, err := Inspect(bytes.NewReader(built(t)))
	if err != nil || unsigned.Signed || unsigned.Signer != nil {
		t.Errorf("unsigned summary = %+v (%v), want no signer", unsigned, err)
	}
}

func TestTheAlgorithmFollowsTheKeyType(t *testing.T) {
	rsaPriv, rsaPub := rsaKeys(t)
	ecPriv, ecPub := ecKeys(t)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(p384)
	tests := []struct {
		name, key, want, wantError string
	}{
		{"an RSA public key", rsaPub, "RS256", ""},
		{"an RSA PKCS#1 private key", rsaPriv, "RS256", ""},
		{"a P-256 public key", ecPub, "ES256", ""},
		{"a P-256 SEC 1 private key", ecPriv, "ES256", ""},
		{"a P-384 PKCS#8 private key", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})), "ES384", ""},
		{"text that is no PEM", "not a key", "", "not a PEM key"},
		{"a PEM block that is no key", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("x")})), "", "not a PEM RSA or EC key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := KeyAlgorithm([]byte(tt.key))
			if got != tt.want || (tt.wantError == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.wantError) {
				t.Errorf("KeyAlgorithm = %q, %v; want %q, %q", got, err, tt.want, tt.wantError)
			}
		})
	}
}

func TestFetchSaysWhatWasCheckedOfASignature(t *testing.T) {
	priv, pub := rsaKeys(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(keyFile, []byte(priv), 0o600); err != nil {
		t.Fatal(err)
	}
	unsigned := builtFS(t, policies.Builtin[0].FS)
	var signed bytes.Buffer
	if err := Sign(bytes.NewReader(unsigned), &signed, keyFile, "", ""); err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name   string
		path   string
		vc     *bundle.VerificationConfig
		wanted string
	}{
		{"a signed bundle checked with a key is verified", write("signed.tar.gz", signed.Bytes()), VerificationConfig(pub, "RS256"), report.SignatureVerified},
		{"a signed bundle read without a key is not checked", write("signed2.tar.gz", signed.Bytes()), nil, report.SignatureNotChecked},
		{"an unsigned bundle says nothing", write("unsigned.tar.gz", unsigned), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Fetch(context.Background(), tt.path, Remote{}, tt.vc)
			if err != nil {
				t.Fatal(err)
			}
			if f.Signature != tt.wanted {
				t.Errorf("Signature = %q, want %q", f.Signature, tt.wanted)
			}
		})
	}
}
