// Package bundles builds, signs, verifies and inspects policy bundles with OPA's own bundle
// and compile packages: the output is an ordinary OPA bundle that stock `opa run -b
// --verification-key` accepts.
package bundles

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/open-policy-agent/opa/v1/compile"
	"github.com/open-policy-agent/opa/v1/keys"
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
func Build(ctx context.Context, dir, revision string, out io.Writer) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("bundle build: %w", err)
	}
	c := compile.New().WithPaths(dir).WithAsBundle(true).WithRevision(revision).
		WithFilter(SkipTests).WithOutput(out)
	if err := c.Build(ctx); err != nil {
		return fmt.Errorf("bundle build %s: %w", dir, err)
	}
	return nil
}

// BuildFS is Build over a file system whose root is the bundle directory: the embedded
// built-in bundles are built this way.
func BuildFS(ctx context.Context, fsys fs.FS, revision string, out io.Writer) error {
	c := compile.New().WithFS(fsys).WithPaths(".").WithAsBundle(true).WithRevision(revision).
		WithFilter(SkipTests).WithOutput(out)
	if err := c.Build(ctx); err != nil {
		return fmt.Errorf("bundle build: %w", err)
	}
	return nil
}

// Sign adds a signature (.signatures.json) over every file of the bundle read from in, with
// the private key in keyFile. alg is RS256, ES256 or another JWA algorithm OPA supports;
// claimsFile is optional.
func Sign(in io.Reader, out io.Writer, keyFile, alg, claimsFile string) error {
	if _, err := os.Stat(keyFile); err != nil {
		return fmt.Errorf("bundle sign: signing key: %w", err)
	}
	b, err := read(in, nil)
	if err != nil {
		return err
	}
	if err := b.GenerateSignature(bundle.NewSigningConfig(keyFile, alg, claimsFile), "", false); err != nil {
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

// Read reads a bundle tarball; with vc set, a bundle that is unsigned, signed by another key
// or changed after signing is refused.
func Read(in io.Reader, vc *bundle.VerificationConfig) (bundle.Bundle, error) {
	return read(in, vc)
}

func read(in io.Reader, vc *bundle.VerificationConfig) (bundle.Bundle, error) {
	loader := bundle.NewTarballLoaderWithBaseURL(io.LimitReader(in, MaxSize), "").WithSizeLimitBytes(MaxSize)
	r := bundle.NewCustomReader(loader).WithSizeLimitBytes(MaxSize).
		WithRegoVersion(ast.RegoV1).WithProcessAnnotations(true)
	if vc != nil {
		r = r.WithBundleVerificationConfig(vc)
	} else {
		r = r.WithSkipBundleVerification(true)
	}
	b, err := r.Read()
	if err != nil {
		return bundle.Bundle{}, fmt.Errorf("read bundle: %w", err)
	}
	return b, nil
}

// hasSignatures says whether the tarball carries .signatures.json; a reader that skips
// verification does not keep it.
func hasSignatures(tarball []byte) (bool, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tarball))
	if err != nil {
		return false, fmt.Errorf("read bundle: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read bundle: %w", err)
		}
		if bundle.IsSignaturesFile(h.Name) {
			return true, nil
		}
	}
}

// Summary is what `bundle inspect` prints.
type Summary struct {
	Revision string         `json:"revision"`
	Roots    []string       `json:"roots"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Files    []string       `json:"files"`
	Signed   bool           `json:"signed"`
}

// Inspect summarises a bundle without verifying it.
func Inspect(in io.Reader) (Summary, error) {
	raw, err := io.ReadAll(io.LimitReader(in, MaxSize))
	if err != nil {
		return Summary{}, fmt.Errorf("read bundle: %w", err)
	}
	b, err := read(bytes.NewReader(raw), nil)
	if err != nil {
		return Summary{}, err
	}
	signed, err := hasSignatures(raw)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Revision: b.Manifest.Revision, Metadata: b.Manifest.Metadata, Signed: signed}
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

// KeyAlgorithm is the JWA algorithm a public key verifies by default: RS256 for RSA, ES256,
// ES384 or ES512 for EC keys by curve. Other algorithms (PS256, RS512, …) are named
// explicitly.
func KeyAlgorithm(publicKeyPEM []byte) (string, error) {
	block, _ := pem.Decode(publicKeyPEM)
	if block == nil {
		return "", fmt.Errorf("not a PEM public key")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("not a PEM public key: %w", err)
	}
	switch k := key.(type) {
	case *rsa.PublicKey:
		return "RS256", nil
	case *ecdsa.PublicKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return "ES256", nil
		case 384:
			return "ES384", nil
		case 521:
			return "ES512", nil
		}
	}
	return "", fmt.Errorf("unsupported public key type %T; name the algorithm", key)
}
