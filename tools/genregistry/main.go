// Command genregistry validates the add-on registry (kb/registry/*.yaml), the behaviour
// registry (kb/registry/behaviours/*.yaml) and the node facts (kb/registry/nodes/) and
// compiles them into the built-in bundle's data: add-ons and behaviours keyed by id, the
// probes the behaviours read as a list sorted by id, and the node facts as they are. Run it
// from the module root.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/upgradescope/upgradescope/kb/kbdata"
	"github.com/upgradescope/upgradescope/kb/registry"
)

func main() {
	out := flag.String("out", "policies/kb/upgradescope/kb", "the knowledge-base directory: writes addons/, addonindex/, providers/, behaviours/, probes/ and nodes/")
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
	if err == nil {
		var behaviours map[string]registry.Behaviour
		if behaviours, err = registry.LoadBehaviours(registry.BehaviourFiles); err == nil {
			err = kbdata.Write(filepath.Join(*out, "behaviours", "data.json"), registry.CompileBehaviours(behaviours))
		}
		if err == nil {
			err = kbdata.Write(filepath.Join(*out, "probes", "data.json"), registry.BehaviourProbes(behaviours))
		}
	}
	if err == nil {
		var nodes registry.NodeFacts
		if nodes, err = registry.LoadNodeFacts(registry.NodeFiles); err == nil {
			err = kbdata.Write(filepath.Join(*out, "nodes", "data.json"), nodes)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genregistry:", err)
		os.Exit(1)
	}
}
