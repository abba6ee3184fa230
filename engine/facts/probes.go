package facts

import (
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// Probe gap reasons.
const (
	gapNotCollected = "not collected: the inventory holds no observation of this probe; collect it again with the loaded bundles"
	gapRedeclared   = "collected for another declaration of this probe; collect it again with the loaded bundles"
	gapTwice        = "observed twice in the inventory, which no collector writes; collect it again"
)

// probeFacts matches the inventory's observations with the declared probes: an observation
// of the probe as declared now, and available, is a fact (by qualified id); any other
// declared probe is a gap with its reason, which the report package turns into a required
// not-assessed entry, since a rule reading it would otherwise judge missing data as clean.
func probeFacts(inv *inventory.Document, set *probe.Set) (observed map[string]inventory.Probe, gaps map[string]string) {
	observed, gaps = map[string]inventory.Probe{}, map[string]string{}
	byID := make(map[string]*inventory.Probe, len(inv.Probes))
	twice := map[string]bool{}
	for i := range inv.Probes {
		id := inv.Probes[i].ID
		twice[id] = byID[id] != nil
		byID[id] = &inv.Probes[i]
	}
	for _, d := range set.Declared() {
		o := byID[d.ID]
		switch {
		case o == nil:
			gaps[d.ID] = gapNotCollected
		case twice[d.ID]:
			gaps[d.ID] = gapTwice
		case !probe.Equal(o.Probe, d.Spec):
			gaps[d.ID] = gapRedeclared
		case !o.Available:
			gaps[d.ID] = "not observed: " + o.Reason
		default:
			observed[d.ID] = *o
		}
	}
	return observed, gaps
}
