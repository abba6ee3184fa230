package engine

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/report"
)

// input.facts.helmReleases holds only the releases a built-in rule may judge, and lib/helm
// falls back to the whole list for any other. On a cluster with thousands of releases, the
// built-in rules must never need that fallback: with every release of the whole list
// replaced by an empty object, the report is the same.
func TestTheBuiltInRulesReadOnlyTheReleasesTheFactsHold(t *testing.T) {
	ctx := context.Background()
	e, err := New(ctx, WithToolVersion("test"))
	if err != nil {
		t.Fatal(err)
	}
	inv := corpus.Cluster(500, 1)
	targets := []string{"1.36", "1.37"}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	want, err := e.Evaluate(ctx, inv, targets, now)
	if err != nil {
		t.Fatal(err)
	}
	input, err := e.input(inv, targets, now, evalConfig{}).value()
	if err != nil {
		t.Fatal(err)
	}
	facts := input.(ast.Object).Get(ast.StringTerm("facts")).Value.(ast.Object)
	judged := facts.Get(ast.StringTerm("helmReleases")).Value.(ast.Object).Len()
	if judged == 0 || judged > len(inv.HelmReleases)/2 {
		t.Fatalf("facts hold %d of %d releases; want some, and far fewer than all", judged, len(inv.HelmReleases))
	}
	got := evaluateWithout(t, e, input, len(inv.HelmReleases))
	decoded, err := e.decode(got, inv, now)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(decoded.Targets, want.Targets) {
		t.Errorf("with the whole list emptied the report differs; findings:\n got %v\nwant %v", findingKeys(decoded), findingKeys(want))
	}
}

// evaluateWithout evaluates input with inventory.helmReleases replaced by n empty objects.
func evaluateWithout(t *testing.T, e *Engine, input ast.Value, n int) any {
	t.Helper()
	in := input.(ast.Object)
	inv := in.Get(ast.StringTerm("inventory")).Value.(ast.Object).Copy()
	empty := make([]*ast.Term, n)
	for i := range empty {
		empty[i] = ast.ObjectTerm()
	}
	inv.Insert(ast.StringTerm("helmReleases"), ast.ArrayTerm(empty...))
	out := ast.NewObject()
	in.Foreach(func(k, v *ast.Term) {
		if k.Equal(ast.StringTerm("inventory")) {
			v = ast.NewTerm(inv)
		}
		out.Insert(k, v)
	})
	rs, err := e.pq.Eval(context.Background(), rego.EvalParsedInput(out), rego.EvalSortSets(true), rego.EvalGenerateJSON(resultValue))
	if err != nil || len(rs) != 1 {
		t.Fatalf("evaluate: %v %v", rs, err)
	}
	return rs[0].Expressions[0].Value
}

func findingKeys(r *report.Report) []string {
	var keys []string
	for _, tr := range r.Targets {
		for _, f := range tr.Findings {
			keys = append(keys, tr.Target+" "+f.Key+" "+f.Title+" "+f.Detail)
		}
	}
	return keys
}
