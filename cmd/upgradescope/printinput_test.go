package main

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
)

// --print-input prints the engine's Input: the document from which opa eval reproduces the
// report (docs/custom-rules.md; the engine's TestOPAEvalReproducesTheReport runs it on every
// scenario).
func TestPrintInputIsTheInputTheRulesJudge(t *testing.T) {
	path := "../../testdata/helm-kubeversion-excludes-target/inventory.json"
	r := runCLI(t, "eval", "--inventory", path, "--target", "1.32,1.33", "--print-input", pinned)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	inv, err := inventory.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(eng.Input(inv, []string{"1.32", "1.33"}, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("--print-input printed\n%s\nwant the engine's input\n%s", r.stdout, raw)
	}
}
