package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// The CRD and annotation facts only spare the rules walks that find nothing: with both taken
// out of the input, so the rules walk every CRD and every object, every scenario's report
// and a large cluster's are the same.
func TestTheSkipFactsNeverChangeAReport(t *testing.T) {
	ctx := context.Background()
	e, err := New(ctx, WithToolVersion("test"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	large := corpus.Cluster(500, 1)
	crds, annotated := skipFacts(t, e, large, now)
	if crds == 0 || crds >= len(large.CRDs)/2 || annotated {
		t.Fatalf("on the large cluster the facts list %d of %d CRDs and annotated=%v; want a few and false, or this test proves nothing",
			crds, len(large.CRDs), annotated)
	}
	sameWithoutFacts(t, e, large, []string{"1.36", "1.37"}, nil, now)

	dirs, err := filepath.Glob("../testdata/*/inventory.json")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	sawAnnotated := false
	for _, path := range dirs {
		dir := filepath.Dir(path)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			inv, args := readScenario(t, e, dir)
			_, a := skipFacts(t, e, inv, now)
			sawAnnotated = sawAnnotated || a
			sameWithoutFacts(t, e, inv, args.Targets, args.Ignore, now)
		})
	}
	if !sawAnnotated {
		t.Error("no scenario has an annotated object: the annotation fact was never true")
	}
}

// skipFacts answers how many CRDs input.facts.crds lists and input.facts.annotatedObjects.
func skipFacts(t *testing.T, e *Engine, inv *inventory.Document, now time.Time) (int, bool) {
	t.Helper()
	input, err := e.input(inv, []string{"1.36"}, now, evalConfig{}).value()
	if err != nil {
		t.Fatal(err)
	}
	facts := input.(ast.Object).Get(ast.StringTerm("facts")).Value.(ast.Object)
	crds := facts.Get(ast.StringTerm("crds")).Value.(*ast.Array).Len()
	annotated := facts.Get(ast.StringTerm("annotatedObjects")).Value.(ast.Boolean)
	return crds, bool(annotated)
}

func sameWithoutFacts(t *testing.T, e *Engine, inv *inventory.Document, targets []string, ignore []report.IgnoreRule, now time.Time) {
	t.Helper()
	want, err := e.Evaluate(context.Background(), inv, targets, now, WithIgnore(ignore))
	if err != nil {
		t.Fatal(err)
	}
	input, err := e.input(inv, targets, now, evalConfig{ignore: ignore}).value()
	if err != nil {
		t.Fatal(err)
	}
	rs, err := e.pq.Eval(context.Background(), rego.EvalParsedInput(withoutFacts(input, "crds", "annotatedObjects")),
		rego.EvalSortSets(true), rego.EvalGenerateJSON(resultValue))
	if err != nil || len(rs) != 1 {
		t.Fatalf("evaluate without the facts: %v %v", rs, err)
	}
	got, err := e.decode(rs[0].Expressions[0].Value, inv, now)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Targets, want.Targets) {
		t.Errorf("without the facts the report differs; findings:\n got %v\nwant %v", findingKeys(got), findingKeys(want))
	}
}

// withoutFacts is input with the named facts taken out.
func withoutFacts(input ast.Value, names ...string) ast.Value {
	in := input.(ast.Object)
	facts := ast.NewObject()
	in.Get(ast.StringTerm("facts")).Value.(ast.Object).Foreach(func(k, v *ast.Term) {
		for _, n := range names {
			if k.Equal(ast.StringTerm(n)) {
				return
			}
		}
		facts.Insert(k, v)
	})
	out := ast.NewObject()
	in.Foreach(func(k, v *ast.Term) {
		if k.Equal(ast.StringTerm("facts")) {
			v = ast.NewTerm(facts)
		}
		out.Insert(k, v)
	})
	return out
}

// readScenario reads a testdata scenario's inventory and arguments as the golden test does.
func readScenario(t *testing.T, e *Engine, dir string) (*inventory.Document, struct {
	Targets            []string            `json:"targets"`
	Ignore             []report.IgnoreRule `json:"ignore"`
	ProbesFoundNothing bool                `json:"probesFoundNothing"`
}) {
	t.Helper()
	inv, err := inventory.ReadFile(filepath.Join(dir, "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	var args struct {
		Targets            []string            `json:"targets"`
		Ignore             []report.IgnoreRule `json:"ignore"`
		ProbesFoundNothing bool                `json:"probesFoundNothing"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "args.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		t.Fatal(err)
	}
	if args.ProbesFoundNothing {
		probetest.FoundNothing(inv, e.Observe().Probes)
	}
	return inv, args
}
