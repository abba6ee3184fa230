package files

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// A repository past every list bound still gives an inventory eval accepts, and whatever a
// cut list leaves out is a partial capability, never a silently shorter list.
func TestARepositoryPastEveryListBoundGivesAnInventoryTheSchemaAccepts(t *testing.T) {
	var kinds, crds, classes, namespaces strings.Builder
	for i := range inventory.MaxAPIUsage + 1 {
		fmt.Fprintf(&kinds, "---\napiVersion: apps/v9\nkind: K%d\nmetadata:\n  name: x\n", i)
	}
	for i := range inventory.MaxListItems + 1 {
		fmt.Fprintf(&crds, "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: k%d.example.com\nspec:\n  group: example.com\n  names: {kind: K%d}\n  versions: [{name: v1, served: true, storage: true}]\n", i, i)
		fmt.Fprintf(&classes, "---\napiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata:\n  name: c%d\nspec:\n  controller: example.com/c%d\n", i, i)
	}
	for i := range inventory.MaxNamespaces + 1 {
		fmt.Fprintf(&namespaces, "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: n%d\n", i)
	}
	res := collect(t, map[string]string{"kinds.yaml": kinds.String(), "crds.yaml": crds.String(), "classes.yaml": classes.String(), "ns.yaml": namespaces.String()})
	doc := Inventory(res, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := inventory.Validate(data); err != nil {
		t.Fatalf("the schema refuses the collector's own inventory: %v", err)
	}
	for _, tt := range []struct {
		capability, reason string
	}{
		{inventory.CapAPIUsage, "1 kind(s) past the 5000 rows an inventory lists"},
		{inventory.CapCRDs, "1 CustomResourceDefinition(s) past the 10000 an inventory lists"},
		{inventory.CapAddons, "1 IngressClass(es) past the 10000 an inventory lists"},
	} {
		if c := doc.Capabilities[tt.capability]; !c.Partial || !strings.Contains(c.Reason, tt.reason) {
			t.Errorf("%s = %+v, want partial saying %q", tt.capability, c, tt.reason)
		}
	}
	// Past the value bound in all, the namespaces go first: they only name teams.
	if len(doc.Namespaces) != 0 || len(doc.CRDs) == 0 {
		t.Errorf("%d namespaces and %d CRDs listed, want the namespaces cut first", len(doc.Namespaces), len(doc.CRDs))
	}
}
