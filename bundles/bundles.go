// Package bundles builds, signs, verifies and inspects policy bundles with OPA's own bundle
// and compile packages: the output is an ordinary OPA bundle that stock `opa run -b
// --verification-key` accepts.
package bundles

import (
	"archive/tar"
	"bytes"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/keys"

	"github.com/upgradescope/upgradescope/internal/smallfile"
)

// MaxSize bounds a bundle, and any one file in it, read from disk or the network.
const MaxSize = 64 << 20

// SkipTests is a loader filter that keeps Rego tests out of a bundle: they are for `opa test`,
// not for evaluation or shipping.
func SkipTests(_ string, info fs.FileInfo, _ int) bool {
	return !info.IsDir() && strings.HasSuffix(info.Name(), "_test.rego")
}

// Build compiles dir (a bundle directory with its .manifest) into a bundle tarball, without
// tests, with revision stamped.
func Build(dir, revision string, out io.Writer) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("bundle build: %w", err)
	}
	if err := checkManifest(dir); err != nil {
		return fmt.Errorf("bundle build %w", err)
	}
	loader := bundle.NewDirectoryLoader(dir).WithFilter(SkipTests).WithSizeLimitBytes(MaxSize)
	if err := build(loader, revision, out); err != nil {
		return fmt.Errorf("bundle build %s: %w", dir, err)
	}
	return nil
}

// build reads the bundle (every module parsed, data within the roots) and writes it with
// revision stamped. It does not type-check: a custom pack imports the built-in library, which
// only the engine has, so the CLI checks a build by loading it beside the built-in bundles.
func build(loader bundle.DirectoryLoader, revision string, out io.Writer) error {
	b, err := newReader(loader, nil).Read()
	if err != nil {
		return err
	}
	switch {
	case revision != "":
		b.Manifest.Revision = revision
	case b.Manifest.Revision == "":
		b.Manifest.Revision = contentDigest(&b)
	}
	// Module paths relative to the bundle directory, as `opa build` writes them.
	return bundle.NewWriter(out).UseModulePath(true).Write(b)
}

// contentDigest names a revision by what the bundle holds: its modules and its data.
func contentDigest(b *bundle.Bundle) string {
	h := sha256.New()
	for _, m := range b.Modules {
		fmt.Fprintf(h, "%s\x00%d\x00", m.Path, len(m.Raw))
		h.Write(m.Raw)
	}
	data, _ := json.Marshal(b.Data) // map keys are sorted
	h.Write(data)
	return "sha256-" + hex.EncodeToString(h.Sum(nil))[:16]
}

// checkManifest refuses a directory whose .manifest names no roots: OPA would build it, but
// the bundle would own every path, so nothing could load beside it.
func checkManifest(dir string) error {
	const hint = "a bundle needs roots; a custom pack's are [\"upgradescope/custom/<name>\"] (docs/custom-rules.md)"
	raw, err := os.ReadFile(filepath.Join(dir, ".manifest"))
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: no .manifest; %s", dir, hint)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	var m bundle.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, ".manifest"), err)
	}
	if m.Roots == nil || len(*m.Roots) == 0 || slices.Contains(*m.Roots, "") {
		return fmt.Errorf("%s: .manifest names no roots; %s", dir, hint)
	}
	return nil
}

// BuildFS is Build over a file system whose root is the bundle directory: the embedded
// built-in bundles are built this way.
func BuildFS(fsys fs.FS, revision string, out io.Writer) error {
	loader, err := bundle.NewFSLoader(fsys)
	if err != nil {
		return fmt.Errorf("bundle build: %w", err)
	}
	if err := build(loader.WithFilter(SkipTests).WithSizeLimitBytes(MaxSize), revision, out); err != nil {
		return fmt.Errorf("bundle build: %w", err)
	}
	return nil
}

// Sign adds a signature (.signatures.json) over every file of the bundle read from in, with
// the private key in keyFile. alg is RS256, ES256 or another JWA algorithm OPA supports,
// empty for the key's own (KeyAlgorithm); claimsFile is optional.
func Sign(in io.Reader, out io.Writer, keyFile, alg, claimsFile string) error {
	key, alg, err := readKey(keyFile, alg)
	if err != nil {
		return fmt.Errorf("bundle sign: signing key: %w", err)
	}
	if claimsFile != "" {
		if err := smallfile.Check(claimsFile, smallfile.MaxSecret); err != nil {
			return fmt.Errorf("bundle sign: claims file: %w", err)
		}
	}
	b, err := read(in, nil)
	if err != nil {
		return err
	}
	// The key OPA signs with is the text read above, so the file is read once, bounded.
	if i := bytes.Index(key, []byte("-----BEGIN")); i > 0 {
		key = key[i:]
	}
	if err := b.GenerateSignature(bundle.NewSigningConfig(string(key), alg, claimsFile), "", false); err != nil {
		return fmt.Errorf("bundle sign: %w", err)
	}
	if err := bundle.NewWriter(out).Write(b); err != nil {
		return fmt.Errorf("bundle sign: write: %w", err)
	}
	return nil
}

// VerificationConfig is the one-key configuration `opa run --verification-key` uses.
// The key is the PEM text itself: keys.NewKeyConfig would first try it as a file name.
func VerificationConfig(publicKeyPEM, alg string) *bundle.VerificationConfig {
	key := &keys.Config{Key: publicKeyPEM, Algorithm: alg}
	return bundle.NewVerificationConfig(map[string]*bundle.KeyConfig{"default": key}, "default", "", nil)
}

// VerificationFromFile is VerificationConfig for the PEM public key in path; an empty alg is
// the key's own (KeyAlgorithm).
func VerificationFromFile(path, alg string) (*bundle.VerificationConfig, error) {
	pub, alg, err := readKey(path, alg)
	if err != nil {
		return nil, err
	}
	return VerificationConfig(string(pub), alg), nil
}

// readKey reads a PEM key file and settles the algorithm: alg when given, else the key's.
func readKey(path, alg string) ([]byte, string, error) {
	pemText, err := smallfile.Read(path, smallfile.MaxSecret)
	if err != nil {
		return nil, "", err
	}
	if alg == "" {
		if alg, err = KeyAlgorithm(pemText); err != nil {
			return nil, "", fmt.Errorf("%s: %w", path, err)
		}
	}
	return pemText, alg, nil
}

// Read reads a bundle tarball; with vc set, a bundle that is unsigned, signed by another key
// or changed after signing is refused.
func Read(in io.Reader, vc *bundle.VerificationConfig) (bundle.Bundle, error) {
	return read(in, vc)
}

// Every read is bounded: at most MaxSize compressed, MaxUnpacked unpacked and MaxFiles files,
// checked in one pass that keeps nothing before OPA unpacks the bundle.
func read(in io.Reader, vc *bundle.VerificationConfig) (bundle.Bundle, error) {
	raw, err := readBounded(in)
	if err != nil {
		return bundle.Bundle{}, err
	}
	return readChecked(raw, vc)
}

// readChecked reads a tarball readBounded has checked.
func readChecked(raw []byte, vc *bundle.VerificationConfig) (bundle.Bundle, error) {
	loader := bundle.NewTarballLoaderWithBaseURL(bytes.NewReader(raw), "").WithSizeLimitBytes(MaxSize)
	b, err := newReader(loader, vc).Read()
	if err != nil {
		return bundle.Bundle{}, fmt.Errorf("read bundle: %w", err)
	}
	return b, nil
}

// ReadDir reads a bundle directory, tests left out; with vc it must carry a signature that
// verifies. A directory without a manifest gets OPA's root "" (see the engine's custom packs).
func ReadDir(dir string, vc *bundle.VerificationConfig) (*bundle.Bundle, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	loader := bundle.NewDirectoryLoader(dir).WithFilter(SkipTests).WithSizeLimitBytes(MaxSize)
	b, err := newReader(loader, vc).WithBaseDir(dir).Read()
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// ReadFS reads a bundle from a file system whose root is the bundle directory (the embedded
// built-ins), tests left out and unverified.
func ReadFS(fsys fs.FS) (*bundle.Bundle, error) {
	loader, err := bundle.NewFSLoader(fsys)
	if err != nil {
		return nil, err
	}
	b, err := newReader(loader.WithFilter(SkipTests).WithSizeLimitBytes(MaxSize), nil).Read()
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// newReader is every bundle read of the project: bounded, Rego v1 with annotations, and
// verified with vc, or not at all without one.
func newReader(loader bundle.DirectoryLoader, vc *bundle.VerificationConfig) *bundle.Reader {
	r := bundle.NewCustomReader(loader).WithSizeLimitBytes(MaxSize).
		WithRegoVersion(ast.RegoV1).WithProcessAnnotations(true)
	if vc != nil {
		return r.WithBundleVerificationConfig(vc)
	}
	return r.WithSkipBundleVerification(true)
}

// Signer is what a bundle's signature says about who signed it. Inspect reads it without
// verifying; `bundle verify` checks it.
type Signer struct {
	Algorithm string `json:"alg"`
	KeyID     string `json:"kid,omitempty"`
	Issuer    string `json:"iss,omitempty"`
	IssuedAt  int64  `json:"iat,omitempty"`
	Scope     string `json:"scope,omitempty"`
	// Claims are any other claims the signer added (bundle sign --claims-file).
	Claims map[string]any `json:"claims,omitempty"`
}

// signer reads .signatures.json from a tarball readBounded has checked; nil when the bundle
// is unsigned. A reader that skips verification does not keep the signatures, so the tarball
// is walked here.
func signer(tarball []byte) (*Signer, error) {
	var s *Signer
	err := walkTarball(tarball, func(h *tar.Header, data io.Reader) error {
		if !bundle.IsSignaturesFile(h.Name) {
			return nil
		}
		var sigs bundle.SignaturesConfig
		if err := json.NewDecoder(data).Decode(&sigs); err != nil || len(sigs.Signatures) == 0 {
			return fmt.Errorf("%s holds no signature: %v", h.Name, err)
		}
		var err error
		if s, err = decodeJWT(sigs.Signatures[0]); err != nil {
			return err
		}
		return errStopWalk
	})
	return s, err
}

// decodeJWT reads a signature's header and claims without checking it.
func decodeJWT(token string) (*Signer, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return nil, errors.New("the signature is not a JWS")
	}
	var s Signer
	var claims map[string]any
	for i, into := range []any{&s, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err == nil {
			err = json.Unmarshal(raw, into)
		}
		if err != nil {
			return nil, fmt.Errorf("signature part %d: %w", i+1, err)
		}
	}
	if err := remarshal(claims, &s); err != nil {
		return nil, fmt.Errorf("signature claims: %w", err)
	}
	if s.KeyID == "" {
		s.KeyID, _ = claims["keyid"].(string)
	}
	for _, known := range []string{"files", "keyid", "scope", "iat", "iss"} {
		delete(claims, known)
	}
	if len(claims) > 0 {
		s.Claims = claims
	}
	return &s, nil
}

// remarshal copies the claims' known fields into s, keeping the header's alg and kid.
func remarshal(claims map[string]any, s *Signer) error {
	alg, kid := s.Algorithm, s.KeyID
	raw, err := json.Marshal(claims)
	if err == nil {
		err = json.Unmarshal(raw, s)
	}
	s.Algorithm, s.KeyID = alg, kid
	return err
}

// Summary is what `bundle inspect` prints.
type Summary struct {
	Revision string         `json:"revision"`
	Roots    []string       `json:"roots"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Files    []string       `json:"files"`
	Signed   bool           `json:"signed"`
	Signer   *Signer        `json:"signer,omitempty"`
}

// Inspect summarises a bundle without verifying it.
func Inspect(in io.Reader) (Summary, error) {
	raw, err := readBounded(in)
	if err != nil {
		return Summary{}, err
	}
	b, err := readChecked(raw, nil)
	if err != nil {
		return Summary{}, err
	}
	sig, err := signer(raw)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Revision: b.Manifest.Revision, Metadata: b.Manifest.Metadata, Signed: sig != nil, Signer: sig}
	if b.Manifest.Roots != nil {
		s.Roots = append(s.Roots, *b.Manifest.Roots...)
	}
	for _, m := range b.Modules {
		s.Files = append(s.Files, strings.TrimPrefix(m.Path, "/"))
	}
	if len(b.Data) > 0 {
		s.Files = append(s.Files, "data.json")
	}
	sort.Strings(s.Files)
	return s, nil
}

// KeyAlgorithm is the JWA algorithm a public or private key signs and verifies with by
// default: RS256 for RSA, ES256, ES384 or ES512 for EC keys by curve. Other algorithms (PS256,
// RS512, …) are named explicitly.
func KeyAlgorithm(keyPEM []byte) (string, error) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return "", fmt.Errorf("not a PEM key")
	}
	key, err := parseKey(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("not a PEM RSA or EC key: %w", err)
	}
	switch k := key.(type) {
	case *rsa.PublicKey, *rsa.PrivateKey:
		return "RS256", nil
	case *ecdsa.PublicKey:
		return ecAlgorithm(k.Curve.Params().BitSize)
	case *ecdsa.PrivateKey:
		return ecAlgorithm(k.Curve.Params().BitSize)
	}
	return "", fmt.Errorf("unsupported key type %T; name the algorithm", key)
}

// parseKey reads the DER forms keys come in: PKIX public, PKCS#8, PKCS#1 and SEC 1 private.
func parseKey(der []byte) (any, error) {
	if k, err := x509.ParsePKIXPublicKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	return x509.ParseECPrivateKey(der)
}

func ecAlgorithm(bits int) (string, error) {
	switch bits {
	case 256:
		return "ES256", nil
	case 384:
		return "ES384", nil
	case 521:
		return "ES512", nil
	}
	return "", fmt.Errorf("unsupported EC curve of %d bits; name the algorithm", bits)
}
