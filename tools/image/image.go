package main

import (
	"bytes"
	"compress/gzip"
	"crypto/x509"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// spec is everything one image is made of. The same spec always gives the same image
// digest: no input is read from the clock or the machine.
type spec struct {
	platform v1.Platform
	binary   []byte
	caBundle []byte
	version  string
	revision string
	source   string
	licenses string
	created  time.Time
}

// elfMachines maps a GOARCH to the ELF machine its binaries carry, so a binary built for
// another platform is refused rather than shipped in an image that cannot start.
var elfMachines = map[string]elf.Machine{
	"amd64": elf.EM_X86_64,
	"arm64": elf.EM_AARCH64,
}

// check refuses inputs that would build an image that cannot run or cannot verify TLS.
func (s spec) check() error {
	if s.platform.OS != "linux" {
		return fmt.Errorf("platform %s: only linux images are built", s.platform)
	}
	want, ok := elfMachines[s.platform.Architecture]
	if !ok {
		return fmt.Errorf("platform %s: architecture must be amd64 or arm64", s.platform)
	}
	f, err := elf.NewFile(bytes.NewReader(s.binary))
	if err != nil {
		return fmt.Errorf("binary is not a Linux executable (ELF): %w", err)
	}
	if f.Machine != want {
		return fmt.Errorf("binary is built for %s, not for %s", f.Machine, s.platform)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(s.caBundle) {
		return fmt.Errorf("CA bundle holds no PEM certificate")
	}
	return nil
}

// build assembles the image: a base layer (users, CA bundle, home, /tmp) and a layer
// holding the binary, on no base image.
func build(s spec) (v1.Image, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	base, err := layer(baseEntries(s.caBundle), s.created)
	if err != nil {
		return nil, fmt.Errorf("build base layer: %w", err)
	}
	bin, err := layer(binaryEntries(s.binary), s.created)
	if err != nil {
		return nil, fmt.Errorf("build binary layer: %w", err)
	}
	created := v1.Time{Time: s.created}
	img, err := mutate.Append(empty.Image,
		mutate.Addendum{Layer: base, History: v1.History{Created: created, CreatedBy: "tools/image: /etc/passwd, /etc/group, CA bundle, /home/nonroot, /tmp"}},
		mutate.Addendum{Layer: bin, History: v1.History{Created: created, CreatedBy: "tools/image: /upgradescope " + s.version}},
	)
	if err != nil {
		return nil, fmt.Errorf("append layers: %w", err)
	}
	return withConfig(img, s)
}

// withConfig sets what the Dockerfile's final stage sets: user, entrypoint, working
// directory and the OCI labels.
func withConfig(img v1.Image, s spec) (v1.Image, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = s.platform.OS, s.platform.Architecture, s.platform.Variant
	cf.Created = v1.Time{Time: s.created}
	cf.Config = v1.Config{
		User:       fmt.Sprintf("%d:%d", nonrootUID, nonrootUID),
		Entrypoint: []string{"/upgradescope"},
		WorkingDir: nonrootHome,
		Labels:     labels(s),
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, fmt.Errorf("set config: %w", err)
	}
	return img, nil
}

func labels(s spec) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    "upgradescope",
		"org.opencontainers.image.source":   s.source,
		"org.opencontainers.image.version":  s.version,
		"org.opencontainers.image.revision": s.revision,
		"org.opencontainers.image.created":  s.created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses": s.licenses,
	}
}

// layer gzips the deterministic tar once (cached for the digest and the write). Default
// compression: best compression made the layers 0.4% smaller for twice the CPU (19.19 MB
// and 5.6 s against 19.28 MB and 2.5 s for the linux/amd64 image).
func layer(entries []entry, mtime time.Time) (v1.Layer, error) {
	raw, err := layerTar(entries, mtime)
	if err != nil {
		return nil, err
	}
	open := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	return tarball.LayerFromOpener(open, tarball.WithCompressionLevel(gzip.DefaultCompression), tarball.WithCompressedCaching)
}

// writeArchive writes img tagged ref in the format `docker save` writes (manifest.json,
// the config, gzipped layers), which every `docker load` and `podman load` reads; Docker
// reads OCI layout archives only since 25.0. It writes beside path and renames, so a
// failed build leaves no half archive behind.
func writeArchive(path string, ref name.Tag, img v1.Image) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".image-*.tar")
	if err != nil {
		return fmt.Errorf("create image archive: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	if err := tarball.Write(ref, img, tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write image archive %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write image archive %s: %w", path, err)
	}
	// A release artefact, published next to SHA256SUMS: readable by everyone.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write image archive %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write image archive %s: %w", path, err)
	}
	return nil
}
