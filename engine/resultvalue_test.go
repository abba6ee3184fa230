package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/upgradescope/upgradescope/inventory"
)

// TestReportsReadFromTheValueMatchJSON reads every golden scenario's result both ways: from
// the OPA value, as the engine does, and from its JSON with encoding/json.
func TestReportsReadFromTheValueMatchJSON(t *testing.T) {
	e, err := New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob("../testdata/*/inventory.json")
	for _, path := range dirs {
		inv, err := inventory.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		input, err := e.input(inv, []string{"1.33", "1.37"}, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), evalConfig{}).value()
		if err != nil {
			t.Fatal(err)
		}
		rs, err := e.pq.Eval(context.Background(), rego.EvalParsedInput(input), rego.EvalSortSets(true), rego.EvalGenerateJSON(resultValue))
		if err != nil {
			t.Fatal(err)
		}
		value := rs[0].Expressions[0].Value.(ast.Value)
		var fromValue, fromJSON result
		if err := fromAST(value, reflect.ValueOf(&fromValue).Elem()); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		native, _ := ast.JSON(value)
		raw, _ := json.Marshal(native)
		if err := json.Unmarshal(raw, &fromJSON); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromValue, fromJSON) {
			a, _ := json.Marshal(fromValue)
			t.Errorf("%s: read from the value:\n%s\nfrom JSON:\n%s", path, a, raw)
		}
	}
}

func TestAValueOfTheWrongTypeIsAnErrorNamingTheField(t *testing.T) {
	var r result
	err := fromAST(ast.MustParseTerm(`{"targets": [{"score": "high"}]}`).Value, reflect.ValueOf(&r).Elem())
	if err == nil || err.Error() != "targets: [0]: score: got string, want int" {
		t.Errorf("err = %v", err)
	}
}
