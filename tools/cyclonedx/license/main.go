// Command license states the license of an SBOM's own component: cyclonedx-gomod reads the
// licenses of the modules a binary links but has no flag for the main one, which would say
// NOASSERTION. hack/dist.sh runs it on the SBOM it writes:
//
//	go run -C tools/cyclonedx ./license -id Apache-2.0 /abs/path/upgradescope_v0.3.0.cdx.json
//
// The file is rewritten with the encoder cyclonedx-gomod writes it with, at the same spec
// version, so the only change is the metadata component's licenses.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("license", flag.ContinueOnError)
	fs.SetOutput(stderr)
	id := fs.String("id", "", "the SPDX license identifier of the SBOM's own component (required)")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if *id == "" || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "license: usage: license -id SPDX-ID SBOM.cdx.json")
		return 1
	}
	if err := stamp(fs.Arg(0), *id); err != nil {
		fmt.Fprintln(stderr, "license:", err)
		return 1
	}
	return 0
}

// stamp sets the metadata component's licenses to the one id and rewrites the file.
func stamp(path, id string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read SBOM: %w", err)
	}
	var bom cdx.BOM
	if err := cdx.NewBOMDecoder(bytes.NewReader(data), cdx.BOMFileFormatJSON).Decode(&bom); err != nil {
		return fmt.Errorf("decode SBOM %s: %w", path, err)
	}
	if bom.Metadata == nil || bom.Metadata.Component == nil {
		return fmt.Errorf("SBOM %s names no component of its own (metadata.component)", path)
	}
	bom.Metadata.Component.Licenses = &cdx.Licenses{{License: &cdx.License{ID: id}}}
	var out bytes.Buffer
	enc := cdx.NewBOMEncoder(&out, cdx.BOMFileFormatJSON).SetPretty(true)
	if err := enc.EncodeVersion(&bom, bom.SpecVersion); err != nil {
		return fmt.Errorf("encode SBOM %s: %w", path, err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write SBOM: %w", err)
	}
	return nil
}
