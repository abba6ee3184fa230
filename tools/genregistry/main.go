// Command genregistry validates the add-on registry (registry/*.yaml) and compiles it into
// the built-in bundle's data, keyed by add-on id. Run it from the module root.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/upgradescope/upgradescope/internal/kbdata"
	"github.com/upgradescope/upgradescope/registry"
)

func main() {
	out := flag.String("out", "policies/kb/upgradescope/kb", "the knowledge-base directory: writes addons/, addonindex/ and providers/")
	flag.Parse()
	entries, err := registry.Load(registry.Files)
	if err == nil {
		err = kbdata.Write(filepath.Join(*out, "addons", "data.json"), entries)
	}
	if err == nil {
		err = kbdata.Write(filepath.Join(*out, "addonindex", "data.json"), registry.BuildIndex(entries))
	}
	if err == nil {
		var providers map[string]registry.Provider
		if providers, err = registry.LoadProviders(registry.ProviderFiles); err == nil {
			err = kbdata.Write(filepath.Join(*out, "providers", "data.json"), providers)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genregistry:", err)
		os.Exit(1)
	}
}
