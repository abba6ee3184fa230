// Package probetest fills the probes section of inventories written by hand in tests.
package probetest

import (
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/probe"
)

// FoundNothing records, for every probe of set the document has no observation of, that the
// collector looked and found nothing: what a collector writes for a cluster or manifest set
// that holds none of the fields. A hand-written inventory about something else (an API, a
// version skew) needs it to be judged as a collector's would; without it every declared
// probe is a required gap and the verdict is unknown.
func FoundNothing(doc *inventory.Document, set *probe.Set) {
	seen := map[string]bool{}
	for _, p := range doc.Probes {
		seen[p.ID] = true
	}
	for _, d := range set.Declared() {
		if !seen[d.ID] {
			doc.Probes = append(doc.Probes, inventory.Probe{ID: d.ID, Probe: d.Spec, Available: true})
		}
	}
	inventory.SortProbes(doc.Probes)
}
