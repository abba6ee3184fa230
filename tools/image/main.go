// Command image writes upgradescope's container image as an archive `docker load` and
// `podman load` read, without a Docker engine and without pulling a base image: the
// static binary, a CA bundle and the users of distroless's static:nonroot image, built
// the same way twice gives the same bytes. `make image` runs it; the Dockerfile builds the
// same image with a Docker engine.
//
//	go run ./tools/image -binary dist/upgradescope -platform linux/amd64 \
//	    -version v0.3.0 -revision $(git rev-parse HEAD) -out upgradescope.image.tar
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

type options struct {
	binary, platform, out                  string
	version, revision, sourceDateEpoch     string
	caBundle, repository, source, licenses string
}

func run(args []string, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = o.write()
	}
	if err != nil {
		fmt.Fprintln(stderr, "image:", err)
		return 1
	}
	return 0
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.binary, "binary", "", "the static upgradescope binary for -platform (required)")
	fs.StringVar(&o.platform, "platform", "linux/amd64", "linux/amd64 or linux/arm64")
	fs.StringVar(&o.out, "out", "", "the image archive to write (required)")
	fs.StringVar(&o.version, "version", "dev", "the version the binary is stamped with: the image tag and its version label")
	fs.StringVar(&o.revision, "revision", "", "the commit, for the revision label")
	fs.StringVar(&o.sourceDateEpoch, "source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "seconds since 1970: every time in the image (default $SOURCE_DATE_EPOCH; make image passes the last commit's time)")
	fs.StringVar(&o.caBundle, "ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "the PEM CA bundle to ship (Debian's ca-certificates, as distroless ships)")
	fs.StringVar(&o.repository, "repository", "ghcr.io/upgradescope/upgradescope", "the repository the loaded image is tagged in")
	fs.StringVar(&o.source, "source", "https://github.com/upgradescope/upgradescope", "the source label")
	fs.StringVar(&o.licenses, "licenses", "Apache-2.0", "the licenses label, an SPDX expression (LICENSE)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.binary == "" || o.out == "" {
		return o, fmt.Errorf("-binary and -out are required")
	}
	return o, nil
}

func (o options) write() error {
	s, ref, err := o.spec()
	if err != nil {
		return err
	}
	img, err := build(s)
	if err != nil {
		return err
	}
	return writeArchive(o.out, ref, img)
}

// spec reads the inputs and checks the flags that name things: the tag, the platform and
// the time.
func (o options) spec() (spec, name.Tag, error) {
	ref, err := name.NewTag(o.repository+":"+o.version, name.StrictValidation)
	if err != nil {
		return spec{}, name.Tag{}, fmt.Errorf("-repository %q and -version %q make no valid image tag: %w", o.repository, o.version, err)
	}
	p, err := v1.ParsePlatform(o.platform)
	if err != nil {
		return spec{}, name.Tag{}, fmt.Errorf("-platform %q: %w", o.platform, err)
	}
	created, err := parseEpoch(o.sourceDateEpoch)
	if err != nil {
		return spec{}, name.Tag{}, err
	}
	binary, err := os.ReadFile(o.binary)
	if err != nil {
		return spec{}, name.Tag{}, fmt.Errorf("read binary: %w", err)
	}
	ca, err := os.ReadFile(o.caBundle)
	if err != nil {
		return spec{}, name.Tag{}, fmt.Errorf("read CA bundle (install Debian's ca-certificates or pass -ca-bundle): %w", err)
	}
	return spec{platform: *p, binary: binary, caBundle: ca, version: o.version, revision: o.revision,
		source: o.source, licenses: o.licenses, created: created}, ref, nil
}

// parseEpoch reads SOURCE_DATE_EPOCH. It is required: the clock would make every build
// differ.
func parseEpoch(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("-source-date-epoch or SOURCE_DATE_EPOCH is required (the last commit's time: git log -1 --format=%%ct)")
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, fmt.Errorf("-source-date-epoch %q: want whole seconds since 1970", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}
