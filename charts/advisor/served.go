package advisor

import (
	"github.com/upgradescope/upgradescope/charts/render"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
)

// servedByTarget is, per target, what the knowledge base says the target serves, as the
// rules judge it (lib/apis removed_by and not_yet_served): a kind removed at or before the
// target, or introduced after it, is not served; a group/version is not served when every
// kind the knowledge base lists at it is not. What the knowledge base does not describe is
// served.
func servedByTarget(k *kb.KB, targets []string) map[string]render.Served {
	out := map[string]render.Served{}
	for _, t := range targets {
		target, err := inventory.ParseVersion(t)
		if err != nil {
			continue
		}
		gone := map[string]bool{}
		kept := map[string]bool{}
		for _, e := range k.APIs() {
			gv := e.Version
			if e.Group != "" {
				gv = e.Group + "/" + e.Version
			}
			if notServed(e, target) {
				gone[gv+"/"+e.Kind] = true
				gone[gv] = gone[gv] || !kept[gv]
			} else {
				kept[gv] = true
				delete(gone, gv)
			}
		}
		out[t] = func(entry string) bool { return !gone[entry] }
	}
	return out
}

func notServed(e kb.APIEntry, target inventory.Version) bool {
	if v, err := inventory.ParseVersion(e.Removed); err == nil && !v.LaterMinor(target) {
		return true
	}
	v, err := inventory.ParseVersion(e.Introduced)
	return err == nil && v.LaterMinor(target)
}
