package files

import (
	"sort"

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
		u = &inventory.APIUsage{Group: o.group, Version: o.version, Kind: o.kind, Namespaces: map[string]int{}}
		a.byGVK[k] = u
	}
	u.Count++
	u.Namespaces[o.ref.Namespace]++
	if len(u.Objects) < inventory.MaxObjectRefs {
		u.Objects = append(u.Objects, o.ref)
	} else {
		u.ObjectsOmitted++
	}
}

// usage returns the entries sorted by group, version and kind.
func (a *aggregator) usage() []inventory.APIUsage {
	out := make([]inventory.APIUsage, 0, len(a.byGVK))
	for _, u := range a.byGVK {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		if out[i].Version != out[j].Version {
			return out[i].Version < out[j].Version
		}
		return out[i].Kind < out[j].Kind
	})
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
