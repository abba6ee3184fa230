package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/inventory"
)

// The engine converts its Input for OPA without JSON (Input.value); `opa eval -i` reads the
// JSON. On every scenario and a large cluster the two are one document, but for the keys of
// facts.helmReleases: numbers in the engine's, strings in JSON.
func TestTheInputValueIsItsJSON(t *testing.T) {
	e, err := New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	dirs, _ := filepath.Glob("../testdata/*/inventory.json")
	invs := map[string]*inventory.Document{"large cluster": corpus.Cluster(200, 1)}
	for _, path := range dirs {
		inv, err := inventory.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		invs[filepath.Base(filepath.Dir(path))] = inv
	}
	for name, inv := range invs {
		t.Run(name, func(t *testing.T) {
			in := e.input(inv, []string{"1.33", "1.37"}, now, evalConfig{plan: true, planFrom: "1.32"})
			value, err := in.value()
			if err != nil {
				t.Fatal(err)
			}
			fromJSON, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ast.ValueFromReader(bytes.NewReader(fromJSON))
			if err != nil {
				t.Fatal(err)
			}
			got := withStringReleaseKeys(t, value)
			if got.Compare(want) != 0 {
				t.Errorf("the input value differs from its JSON:\n got %v\nwant %v", got, want)
			}
		})
	}
}

// withStringReleaseKeys is input with facts.helmReleases keyed as JSON keys it: every
// object's keys as strings, its lazy objects forced.
func withStringReleaseKeys(t *testing.T, input ast.Value) ast.Value {
	t.Helper()
	b, err := json.Marshal(plain(t, input))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ast.ValueFromReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func plain(t *testing.T, v ast.Value) any {
	switch v := v.(type) {
	case ast.Object:
		out := map[string]any{}
		v.Foreach(func(k, x *ast.Term) {
			key, ok := k.Value.(ast.String)
			if !ok {
				key = ast.String(k.Value.String())
			}
			out[string(key)] = plain(t, x.Value)
		})
		return out
	case *ast.Array:
		out := []any{}
		v.Foreach(func(x *ast.Term) { out = append(out, plain(t, x.Value)) })
		return out
	}
	x, err := ast.JSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}
