package engine

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/upgradescope/upgradescope/engine/facts"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// readKB decodes the kb bundle's data: the tables the engine and its callers read (KB).
func (e *Engine) readKB(l loaded) error {
	k, err := kb.FromData(l.origin, l.b.Data)
	if err != nil {
		return err
	}
	e.kb = k
	return nil
}

// factsKnowledge is what input.facts needs from the loaded bundles. An API is flagged as
// the Helm pack's flagged_apis reads the kb: one the apiserver stores and the kb deprecates.
func (e *Engine) factsKnowledge() facts.Knowledge {
	flagged := map[string]bool{}
	for _, a := range e.kb.APIs() {
		if a.Stored && a.Deprecated != "" {
			flagged[a.Key()] = true
		}
	}
	return facts.Knowledge{Images: e.kb.AddonImages(), Probes: e.observe.Probes,
		FlaggedStoredAPIs: flagged, AddonCharts: e.kb.AddonCharts()}
}

// KB is the knowledge base of the kb bundle: its tables, as the dashboard reads them.
func (e *Engine) KB() *kb.KB { return e.kb }

// Observe is what collectors observe with the loaded bundles: the knowledge base's kinds,
// images and probes, and what custom packs declare they read. The value is the engine's:
// callers must not change its maps.
func (e *Engine) Observe() kb.Observe { return e.observe }

// buildObserve builds Observe from the knowledge base and the custom packs' declarations.
func (e *Engine) buildObserve(set []loaded) error {
	images, err := declaredImages(set)
	if err != nil {
		return err
	}
	probes, err := declaredProbes(set)
	if err != nil {
		return err
	}
	e.observe, err = e.kb.Observe(images, probes)
	return err
}

// declaredImages reads the repository prefixes custom packs declare they read in full, as
// data: upgradescope.custom.<name>.observe.images, a list of strings ("*" is every image).
func declaredImages(set []loaded) ([]string, error) {
	var out []string
	for _, l := range set {
		if l.builtin {
			continue
		}
		packs, _ := lookup(l.b.Data, "upgradescope", "custom")
		for name, pack := range packs {
			fields, _ := pack.(map[string]any)
			observe, _ := fields["observe"].(map[string]any)
			if observe == nil || observe["images"] == nil {
				continue
			}
			list, ok := observe["images"].([]any)
			for _, v := range list {
				prefix, isString := v.(string)
				ok = ok && isString && prefix != ""
				out = append(out, prefix)
			}
			if !ok {
				return nil, fmt.Errorf("custom pack %s (%s): upgradescope.custom.%s.observe.images must be a list of repository prefixes", name, l.origin, name)
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out), nil
}

// declaredProbes reads the probes custom packs declare as data, at
// upgradescope.custom.<name>.observe.probes (ids "custom/<name>/<id>"); the knowledge
// base's own are the KB's.
func declaredProbes(set []loaded) ([]probe.Declared, error) {
	var declared []probe.Declared
	for _, l := range set {
		if l.builtin {
			continue
		}
		packs, _ := lookup(l.b.Data, "upgradescope", "custom")
		for _, name := range slices.Sorted(maps.Keys(packs)) {
			fields, _ := packs[name].(map[string]any)
			observe, _ := fields["observe"].(map[string]any)
			at := fmt.Sprintf("/upgradescope/custom/%s/observe/probes", name)
			specs, err := kb.DecodeProbes(observe["probes"], l.origin, at)
			if err != nil {
				return nil, err
			}
			for _, s := range specs {
				declared = append(declared, probe.Declared{ID: "custom/" + name + "/" + s.ID, Spec: s})
			}
		}
	}
	return declared, nil
}

func lookup(data map[string]any, path ...string) (map[string]any, bool) {
	cur := data
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
}
