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
