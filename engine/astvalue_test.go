package engine

import (
	"path/filepath"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/upgradescope/upgradescope/inventory"
)

// TestASTMatchesJSON holds the direct conversion, and the input's lazily converted inventory,
// to what encoding/json plus OPA's decoder produce, on every golden inventory.
func TestASTMatchesJSON(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/*/inventory.json")
	if len(paths) == 0 {
		t.Fatal("no inventories")
	}
	for _, p := range paths {
		inv, err := inventory.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		direct, err := toAST(inv)
		if err != nil {
			t.Fatal(err)
		}
		viaJSON, err := toValue(inv)
		if err != nil {
			t.Fatal(err)
		}
		if direct.Compare(viaJSON) != 0 {
			t.Errorf("%s: direct conversion differs from JSON:\n%v\n%v", p, direct, viaJSON)
		}
		native, err := inventoryValue(inv)
		if err != nil {
			t.Fatal(err)
		}
		if lazy := ast.LazyObject(native); lazy.Compare(viaJSON) != 0 {
			t.Errorf("%s: the input's lazy inventory differs from JSON:\n%v\n%v", p, lazy, viaJSON)
		}
	}
}

// TestKnownTypesConvertAsJSON holds the conversions without reflection to encoding/json on
// every field, set and empty, including what the golden inventories never carry.
func TestKnownTypesConvertAsJSON(t *testing.T) {
	full := inventory.APIUsage{
		Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget", Count: 1_000_000,
		Namespaces: map[string]int{"": 3, "web": 600, "shop": 1}, NamespacesOmitted: 7, ObjectsOmitted: 2,
		Objects: []inventory.ObjectRef{
			{Name: "a"},
			{Kind: "PodDisruptionBudget", Namespace: "web", Name: "b", File: "k/pdb.yaml", Line: 700, RenderedFrom: "charts/x",
				Ignore: &inventory.IgnoreAnnotation{Rules: "removed-api", Reason: "migrating"}},
		},
	}
	for name, v := range map[string]any{
		"every field":   []inventory.APIUsage{full},
		"empty":         []inventory.APIUsage{{}},
		"no namespaces": []inventory.APIUsage{{Kind: "Ingress", Namespaces: map[string]int{}}},
		"object refs":   full.Objects,
		"releases": []inventory.HelmRelease{
			{Name: "shop", Namespace: "web", Chart: "shop", ChartVersion: "1.2.0", AppVersion: "2.0", KubeVersion: ">=1.21.0-0",
				Status: "deployed", Revision: 4, ManifestAPIs: []inventory.APIUsage{full, {}}},
			{},
		},
		"namespaces": []inventory.Namespace{{Name: "web", Team: "shop"}, {Name: "kube-system"}, {}},
	} {
		direct, err := toAST(v)
		if err != nil {
			t.Fatal(err)
		}
		viaJSON, err := toValue(v)
		if err != nil {
			t.Fatal(err)
		}
		if direct.Compare(viaJSON) != 0 {
			t.Errorf("%s: direct conversion differs from JSON:\n%v\n%v", name, direct, viaJSON)
		}
	}
}
