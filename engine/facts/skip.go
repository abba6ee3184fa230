package facts

import (
	"slices"

	"github.com/upgradescope/upgradescope/inventory"
)

// Two facts spare the rules a walk over the whole inventory when the engine can tell, in
// one pass here, that the walk finds nothing. Like the Helm release facts they decide only
// how fast, never what: each lists a superset of what the rules look for, and without the
// fact (stock `opa test`, an older engine) the rules walk everything.

// judgedCRDs are the indices in input.inventory.crds of the CRDs a crd-version finding may
// be about (input.facts.crds): one with a deprecated version, or with objects used or
// stored at a version it does not serve. A large cluster has hundreds of CRDs and a handful
// of those.
func judgedCRDs(inv *inventory.Document) []int {
	out := []int{}
	for i, c := range inv.CRDs {
		if crdMayBeJudged(c) {
			out = append(out, i)
		}
	}
	return out
}

func crdMayBeJudged(c inventory.CRD) bool {
	served := func(name string) bool {
		return slices.ContainsFunc(c.Versions, func(v inventory.CRDVersion) bool { return v.Name == name && v.Served })
	}
	if slices.ContainsFunc(c.Versions, func(v inventory.CRDVersion) bool { return v.Deprecated }) {
		return true
	}
	if slices.ContainsFunc(c.Usage, func(u inventory.APIUsage) bool { return !served(u.Version) }) {
		return true
	}
	return slices.ContainsFunc(c.StoredVersions, func(s string) bool { return !served(s) })
}

// annotatedObjects says whether any object the report may suppress by its own annotation
// carries one (input.facts.annotatedObjects): those of API usage, of CRD usage and of
// probes. Without one, and without ignore rules, the report keeps every finding as it is
// without walking every object to find out.
func annotatedObjects(inv *inventory.Document) bool {
	annotated := func(objects []inventory.ObjectRef) bool {
		return slices.ContainsFunc(objects, func(o inventory.ObjectRef) bool { return o.Ignore != nil })
	}
	for _, u := range inv.APIUsage {
		if annotated(u.Objects) {
			return true
		}
	}
	for _, c := range inv.CRDs {
		for _, u := range c.Usage {
			if annotated(u.Objects) {
				return true
			}
		}
	}
	for _, p := range inv.Probes {
		if slices.ContainsFunc(p.Objects, func(o inventory.ProbeObject) bool { return o.Ignore != nil }) {
			return true
		}
	}
	return false
}
