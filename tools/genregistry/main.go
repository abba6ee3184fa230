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
	out := flag.String("out", "policies/kb/upgradescope/kb", "the knowledge-base directory: writes addons/, addonindex/ and providers/")
	flag.Parse()
	entries, err := registry.Load(registry.Files)
	if err == nil {
		err = writeJSON(filepath.Join(*out, "addons", "data.json"), entries)
	}
	if err == nil {
		err = writeJSON(filepath.Join(*out, "addonindex", "data.json"), registry.BuildIndex(entries))
	}
	if err == nil {
		var providers map[string]registry.Provider
		if providers, err = registry.LoadProviders(registry.ProviderFiles); err == nil {
			err = writeJSON(filepath.Join(*out, "providers", "data.json"), providers)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genregistry:", err)
		os.Exit(1)
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
