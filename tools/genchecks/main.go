// Command genchecks writes docs/checks.md, the table of every check family the built-in rule
// packs judge, from the families their findings rules declare in METADATA
// (custom.families), read with OPA's bundle reader and annotation processing. It refuses to
// write while a declaration breaks the convention (a findings rule without a family or a
// notice, a family without a field, a repeated id, a capability the inventory does not
// define). Run it from the module root: go run ./tools/genchecks.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/upgradescope/upgradescope/policies"
)

func main() {
	out := flag.String("out", "docs/checks.md", "the page to write")
	inv := flag.String("inventory", "inventory", "the inventory package's directory, whose Cap* constants are the capabilities")
	flag.Parse()
	if err := run(context.Background(), *out, *inv); err != nil {
		fmt.Fprintln(os.Stderr, "genchecks:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out, inventoryDir string) error {
	page, err := build(ctx, inventoryDir)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := page.Render(&buf); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// build reads the built-in bundles and the inventory's capabilities into the page, or says
// every way the declarations break the convention.
func build(ctx context.Context, inventoryDir string) (Page, error) {
	caps, err := InventoryCapabilities(inventoryDir)
	if err != nil {
		return Page{}, err
	}
	probes, err := Probes(policies.KB)
	if err != nil {
		return Page{}, err
	}
	known := Known{Capabilities: map[string]bool{}, Probes: probes}
	for _, c := range caps {
		known.Capabilities[c.Name] = true
	}
	catalog, err := Read(policies.Rules, known)
	if err != nil {
		return Page{}, err
	}
	if len(catalog.Problems) > 0 {
		return Page{}, errors.New("the families the built-in packs declare break the convention (docs/custom-rules.md):\n  " +
			strings.Join(catalog.Problems, "\n  "))
	}
	required, err := Required(ctx, policies.Rules, policies.KB)
	if err != nil {
		return Page{}, err
	}
	return NewPage(catalog, caps, required), nil
}
