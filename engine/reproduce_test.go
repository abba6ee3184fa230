package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/report"
)

// TestFactsGoldens compares each scenario's input.facts, as the engine gives the rules,
// with testdata/<scenario>/facts.json.
func TestFactsGoldens(t *testing.T) {
	eng := newEngine(t)
	for _, dir := range scenarioDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			sc := readScenario(t, eng, dir)
			got, err := json.MarshalIndent(eng.Input(sc.inv, sc.targets, now, sc.opts...).Facts, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join(dir, "facts.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("facts differ from %s (run go test ./engine -run TestFactsGoldens -update, then read the diff):\n%s", golden, got)
			}
		})
	}
}

// evaluated is what a report holds of data.upgradescope.report.result.
type evaluated struct {
	Targets        []report.TargetResult `json:"targets"`
	Plan           []report.Hop          `json:"plan"`
	ExpiredIgnores []report.IgnoreRule   `json:"expiredIgnores"`
	KB             report.KBMeta         `json:"kb"`
}

// TestOPAEvalReproducesTheReport runs, on every scenario, what docs/custom-rules.md tells an
// `opa eval` user to run: the engine's Input as JSON, data.upgradescope.report.result over
// the built-in bundles. The result is the engine's report but for what Go adds after the
// rules ran: the header, and the teams (attributed by namespace label and scored in Go,
// which TestGoJudgementMatchesReportRego holds to report.rego), left out on both sides; and
// the chart advisor's fixes, which the engine attaches from the inventory (chartfix.go) and
// are attached to opa eval's findings the same way.
func TestOPAEvalReproducesTheReport(t *testing.T) {
	eng := newEngine(t)
	pq := reportRego(t, "data.upgradescope.report.result")
	for _, dir := range scenarioDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			sc := readScenario(t, eng, dir)
			r, err := eng.Evaluate(context.Background(), sc.inv, sc.targets, now, sc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			want := evaluated{Targets: r.Targets, Plan: r.Plan, ExpiredIgnores: r.ExpiredIgnores, KB: r.KB}
			got := evalFromJSON(t, pq, eng.Input(sc.inv, sc.targets, now, sc.opts...))
			engine.AttachChartFixes(got.Targets, sc.inv, eng.Observe())
			if g, w := withoutTeams(t, got), withoutTeams(t, want); g != w {
				t.Errorf("opa eval differs from the engine:\n got %s\nwant %s", g, w)
			}
		})
	}
}

// evalFromJSON evaluates pq over in as `opa eval -i input.json` reads it.
func evalFromJSON(t *testing.T, pq rego.PreparedEvalQuery, in any) evaluated {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var input any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&input); err != nil {
		t.Fatal(err)
	}
	rs, err := pq.Eval(context.Background(), rego.EvalInput(input))
	if err != nil || len(rs) != 1 {
		t.Fatalf("evaluate: %v (%d results)", err, len(rs))
	}
	b, err = json.Marshal(rs[0].Expressions[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	var out evaluated
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// withoutTeams is e as JSON with every finding's and target's teams left out.
func withoutTeams(t *testing.T, e evaluated) string {
	t.Helper()
	targets := make([]report.TargetResult, len(e.Targets))
	for i, tr := range e.Targets {
		tr.Teams = nil
		tr.Findings = withoutFindingTeams(tr.Findings)
		tr.Suppressed = withoutFindingTeams(tr.Suppressed)
		targets[i] = tr
	}
	e.Targets = targets
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func withoutFindingTeams(fs []report.Finding) []report.Finding {
	out := make([]report.Finding, len(fs))
	for i, f := range fs {
		f.Teams = nil
		out[i] = f
	}
	return out
}

func scenarioDirs(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../testdata/*/inventory.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios found: %v", err)
	}
	dirs := make([]string, len(paths))
	for i, p := range paths {
		dirs[i] = filepath.Dir(p)
	}
	return dirs
}
