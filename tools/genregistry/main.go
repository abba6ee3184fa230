// Command genregistry validates the add-on registry (registry/*.yaml) and compiles it into
// the built-in bundle's data, keyed by add-on id. Run it from the module root.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/upgradescope/upgradescope/registry"
)

func main() {
	out := flag.String("out", "policies/upgradescope/kb/addons/data.json", "the data file to write")
	flag.Parse()
	entries, err := registry.Load(registry.Files)
	if err != nil {
		fmt.Fprintln(os.Stderr, "genregistry:", err)
		os.Exit(1)
	}
	b, err := json.MarshalIndent(entries, "", "  ")
	if err == nil {
		err = os.MkdirAll(filepath.Dir(*out), 0o755)
	}
	if err == nil {
		err = os.WriteFile(*out, append(b, '\n'), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genregistry:", err)
		os.Exit(1)
	}
}
