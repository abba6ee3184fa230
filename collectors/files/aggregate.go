package files

import (
	"github.com/upgradescope/upgradescope/inventory"
)

// observed is one object of a watched kind.
type observed struct {
	group, version, kind string
	ref                  inventory.ObjectRef
}

type aggregator struct {
	byGVK map[[3]string]*inventory.APIUsage
}

func newAggregator() *aggregator {
	return &aggregator{byGVK: map[[3]string]*inventory.APIUsage{}}
}

func (a *aggregator) add(o observed) {
	k := [3]string{o.group, o.version, o.kind}
	u := a.byGVK[k]
	if u == nil {
		u = &inventory.APIUsage{
			Group: inventory.BoundString(o.group), Version: inventory.BoundString(o.version),
			Kind: inventory.BoundString(o.kind), Namespaces: map[string]int{},
		}
		a.byGVK[k] = u
	}
	u.Add(o.ref)
}

// merge adds what another aggregator counted (one file's objects, in file order) after
// a's own.
func (a *aggregator) merge(b *aggregator) {
	for k, v := range b.byGVK {
		u := a.byGVK[k]
		if u == nil {
			u = &inventory.APIUsage{Group: v.Group, Version: v.Version, Kind: v.Kind, Namespaces: map[string]int{}}
			a.byGVK[k] = u
		}
		u.Merge(*v)
	}
}

// usage returns the entries sorted by group, version and kind.
func (a *aggregator) usage() []inventory.APIUsage {
	out := make([]inventory.APIUsage, 0, len(a.byGVK))
	for _, u := range a.byGVK {
		out = append(out, *u)
	}
	inventory.SortAPIUsage(out)
	return out
}

// splitAPIVersion splits "apps/v1" into group and version; "v1" is the core group.
func splitAPIVersion(apiVersion string) (group, version string) {
	for i := len(apiVersion) - 1; i >= 0; i-- {
		if apiVersion[i] == '/' {
			return apiVersion[:i], apiVersion[i+1:]
		}
	}
	return "", apiVersion
}

// attachUsage gives each CRD the custom resources of its group and kind, and returns the
// usage rows of the custom resources no CRD in the files defines.
func attachUsage(crds []inventory.CRD, usage []inventory.APIUsage) (orphans []inventory.APIUsage) {
	index := map[[2]string]int{}
	for i, c := range crds {
		index[[2]string{c.Group, c.Kind}] = i
	}
	for _, u := range usage {
		i, ok := index[[2]string{u.Group, u.Kind}]
		if !ok {
			orphans = append(orphans, u)
			continue
		}
		crds[i].Usage = append(crds[i].Usage, u)
	}
	return orphans
}
