package files

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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

// Merging per-file aggregates gives the rows adding every object in file order gives.
func TestMergingFileAggregatesMatchesAddingEveryObjectInOrder(t *testing.T) {
	whole, merged := newAggregator(), newAggregator()
	for file := range 3 {
		part := newAggregator()
		for i := range 60 {
			o := observed{group: "extensions", version: "v1beta1", kind: "Ingress",
				ref: inventory.ObjectRef{Namespace: fmt.Sprintf("ns-%d", i%7), Name: fmt.Sprintf("web-%d-%d", file, i)}}
			whole.add(o)
			part.add(o)
		}
		merged.merge(part)
	}
	got, want := merged.usage(), whole.usage()
	if len(got) != 1 || got[0].Count != want[0].Count || got[0].ObjectsOmitted != want[0].ObjectsOmitted ||
		fmt.Sprint(got[0].Namespaces) != fmt.Sprint(want[0].Namespaces) || fmt.Sprint(got[0].Objects) != fmt.Sprint(want[0].Objects) {
		t.Errorf("merged %+v\nwant %+v", got, want)
	}
}

// 20,000 custom-resource groups without their CRDs are one partial crds capability whose
// skipped list stays within the schema's bound and says how many more there were.
func TestCustomResourcesOfMoreGroupsThanTheSkippedBoundStaySchemaValid(t *testing.T) {
	const groups = inventory.MaxSkipped + 500
	var b strings.Builder
	for i := range groups {
		fmt.Fprintf(&b, "apiVersion: g%d.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: a\n---\n", i)
	}
	doc := Inventory(collect(t, map[string]string{"widgets.yaml": b.String()}), testTime)
	c := doc.Capabilities[inventory.CapCRDs]
	if !c.Partial || len(c.Skipped) != inventory.MaxSkipped || c.Skipped[len(c.Skipped)-1] != "and 501 more" {
		t.Errorf("crds capability partial=%v with %d skipped ending %q; want partial, %d ending %q",
			c.Partial, len(c.Skipped), c.Skipped[len(c.Skipped)-1], inventory.MaxSkipped, "and 501 more")
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := inventory.Validate(data); err != nil {
		t.Errorf("the collector wrote an inventory its schema refuses: %v", err)
	}
}

// BenchmarkCollectDistinctNamespaces decodes one file of watched objects, each in a namespace
// of its own (issue 13 item 5). The row's namespaces stop at inventory.MaxNamespaceCounts and
// the objects are aggregated as the file is decoded, so cost grows linearly with the objects;
// docs/performance.md has the current numbers.
func BenchmarkCollectDistinctNamespaces(b *testing.B) {
	for _, n := range []int{10_000, 40_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "ingresses.yaml")
			var sb strings.Builder
			for i := range n {
				fmt.Fprintf(&sb, "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: web\n  namespace: ns-%d\n---\n", i)
			}
			if err := os.WriteFile(path, []byte(sb.String()), 0o600); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Collect(path, testOptions()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A manifest's names are cut to inventory.MaxStringLength, so even a broken one leaves an
// inventory the schema accepts, with the object still counted.
func TestObjectsWithOverlongNamesAreCountedWithTheirNamesCut(t *testing.T) {
	long := strings.Repeat("n", inventory.MaxStringLength+10)
	res := collect(t, map[string]string{"long.yaml": fmt.Sprintf(
		"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: %s\n  namespace: %s\n", long, long)})
	u := res.APIUsage[0]
	if u.Count != 1 || len(u.Objects[0].Name) != inventory.MaxStringLength || u.Namespaces[long[:inventory.MaxStringLength]] != 1 {
		t.Errorf("row %d objects, name of %d characters, namespaces %d; want 1, %d and the cut namespace counted",
			u.Count, len(u.Objects[0].Name), len(u.Namespaces), inventory.MaxStringLength)
	}
	data, err := json.Marshal(Inventory(res, testTime))
	if err != nil {
		t.Fatal(err)
	}
	if err := inventory.Validate(data); err != nil {
		t.Errorf("the collector wrote an inventory its schema refuses: %v", err)
	}
}
