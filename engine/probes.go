package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/upgradescope/upgradescope/kb/probe"
)

// declaredProbes reads the probes the loaded bundles declare as data: the knowledge base's
// at upgradescope.kb.probes (ids "kb/<id>"), a custom pack's at
// upgradescope.custom.<name>.observe.probes (ids "custom/<name>/<id>"). A malformed
// declaration is refused with the bundle and the JSON pointer of the probe.
func declaredProbes(set []loaded) (*probe.Set, error) {
	var declared []probe.Declared
	for _, l := range set {
		switch {
		case l.builtin && l.name == "kb":
			kb, _ := lookup(l.b.Data, "upgradescope", "kb")
			specs, err := probeSpecs(kb["probes"], l.origin, "/upgradescope/kb/probes")
			if err != nil {
				return nil, err
			}
			for _, s := range specs {
				declared = append(declared, probe.Declared{ID: "kb/" + s.ID, Spec: s})
			}
		case !l.builtin:
			packs, _ := lookup(l.b.Data, "upgradescope", "custom")
			for _, name := range sortedNames(packs) {
				fields, _ := packs[name].(map[string]any)
				observe, _ := fields["observe"].(map[string]any)
				at := fmt.Sprintf("/upgradescope/custom/%s/observe/probes", name)
				specs, err := probeSpecs(observe["probes"], l.origin, at)
				if err != nil {
					return nil, err
				}
				for _, s := range specs {
					declared = append(declared, probe.Declared{ID: "custom/" + name + "/" + s.ID, Spec: s})
				}
			}
		}
	}
	return probe.NewSet(declared)
}

// probeSpecs decodes and validates a list of probe declarations found at pointer in a
// bundle's data; nil (none declared) is no probes.
func probeSpecs(v any, origin, pointer string) ([]probe.Spec, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("bundle %s: %s must be a list of probes", origin, pointer)
	}
	specs := make([]probe.Spec, len(list))
	for i, item := range list {
		if err := strictRemarshal(item, &specs[i]); err != nil {
			return nil, fmt.Errorf("bundle %s: %s/%d: %w", origin, pointer, i, err)
		}
		if err := probe.Validate(specs[i]); err != nil {
			return nil, fmt.Errorf("bundle %s: %s/%d: %w", origin, pointer, i, err)
		}
	}
	return specs, nil
}

func sortedNames(m map[string]any) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Probes is the union of the probes the loaded bundles declare: what collectors observe.
func (e *Engine) Probes() *probe.Set { return e.probes }

// strictRemarshal decodes in into out through JSON, refusing fields out does not have: a
// misspelt "podTemplat" would otherwise declare a probe of nothing.
func strictRemarshal(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}
