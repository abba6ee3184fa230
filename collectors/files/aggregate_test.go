package files

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// A row counts at most inventory.MaxNamespaceCounts namespaces, whatever one file holds, and
// the inventory stays one the schema accepts.
func TestARowOfMoreDistinctNamespacesThanTheBoundIsCappedAndStaysSchemaValid(t *testing.T) {
	for _, tc := range []struct {
		name        string
		objects     int
		wantListed  int
		wantOmitted int
	}{
		{"a row at the bound lists every namespace", inventory.MaxNamespaceCounts, inventory.MaxNamespaceCounts, 0},
		{"a row past the bound counts the rest as omitted", inventory.MaxNamespaceCounts + 7, inventory.MaxNamespaceCounts, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for i := range tc.objects {
				fmt.Fprintf(&b, "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\n  namespace: ns-%d\n---\n", i)
			}
			res := collect(t, map[string]string{"many.yaml": b.String()})
			if len(res.APIUsage) != 1 {
				t.Fatalf("got %d rows, want 1", len(res.APIUsage))
			}
			u := res.APIUsage[0]
			if u.Count != tc.objects || len(u.Namespaces) != tc.wantListed || u.NamespacesOmitted != tc.wantOmitted {
				t.Errorf("count %d, %d namespaces listed, %d omitted; want %d, %d, %d",
					u.Count, len(u.Namespaces), u.NamespacesOmitted, tc.objects, tc.wantListed, tc.wantOmitted)
			}
			if len(u.Objects) != inventory.MaxObjectRefs || u.ObjectsOmitted != tc.objects-inventory.MaxObjectRefs {
				t.Errorf("%d objects named, %d omitted; want %d, %d", len(u.Objects), u.ObjectsOmitted, inventory.MaxObjectRefs, tc.objects-inventory.MaxObjectRefs)
			}
			data, err := json.Marshal(Inventory(res, testTime))
			if err != nil {
				t.Fatal(err)
			}
			if err := inventory.Validate(data); err != nil {
				t.Errorf("the collector wrote an inventory its schema refuses: %v", err)
			}
		})
	}
}
