// Package probetest fills the probes section of inventories written by hand in tests.
package probetest

import (
	"path/filepath"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
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

// Scenario reads the inventory of a golden scenario (testdata/<name>/inventory.json under
// root) as its args.json's probesFoundNothing says to: every probe of set observed, none
// found. A test failing to read it stops.
func Scenario(t testing.TB, root, name string, set *probe.Set) *inventory.Document {
	t.Helper()
	doc, err := inventory.ReadFile(filepath.Join(root, "testdata", name, "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	FoundNothing(doc, set)
	return doc
}
