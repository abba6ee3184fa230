package kb_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
	"github.com/upgradescope/upgradescope/kb"
)

// addonsRego prepares the addons rule's own end-of-life judgements over the built-in bundles,
// as `opa eval -b policies/rules -b policies/kb` loads them: product_findings for an entry and
// line_eol for a release line, with the entry's installs stubbed (the judgement of the date
// does not depend on them: one install, install).
func addonsRego(t *testing.T) rego.PreparedEvalQuery {
	t.Helper()
	pq, err := rego.New(
		rego.Query(`install := {"version": "1.0", "sources": ["image"], "namespaces": ["ns"], "evidence": ["image"], "objects": [], "objectsOmitted": 0}
product := [f.category | some f in data.upgradescope.rules.addons.product_findings(input.id, input.entry, "1.35")]
			with data.upgradescope.rules.addons.installs_by_id as {input.id: [install]}
line := [f.category | some f in data.upgradescope.rules.addons.line_eol(input.id, input.entry, input.row, "1.35", [install])]`),
		rego.LoadBundle("../policies/rules"),
		rego.LoadBundle("../policies/kb"),
		rego.WithFilter(func(_ string, info fs.FileInfo, _ int) bool { return strings.HasSuffix(info.Name(), "_test.rego") }),
	).PrepareForEval(context.Background())
	if err != nil {
		t.Fatalf("prepare the addons rule: %v", err)
	}
	return pq
}

// stateOf maps the rule's findings to the state they mean: eol-addon is ended,
// eol-approaching ending, none active.
func stateOf(categories []any) kb.SupportState {
	switch {
	case len(categories) == 0:
		return kb.SupportActive
	case categories[0] == "eol-addon":
		return kb.SupportEnded
	case categories[0] == "eol-approaching":
		return kb.SupportEnding
	}
	return kb.SupportState(fmt.Sprint(categories))
}

// ruleJudges evaluates the rule for entry (and line row of it) on now.
func ruleJudges(t *testing.T, pq rego.PreparedEvalQuery, a kb.Addon, row kb.AddonLine, now time.Time) (product, line kb.SupportState) {
	t.Helper()
	in := map[string]any{"now": now.UTC().Format(time.RFC3339), "id": a.ID, "entry": a, "row": row}
	rs, err := pq.Eval(context.Background(), rego.EvalInput(in))
	if err != nil || len(rs) != 1 {
		t.Fatalf("evaluate the addons rule on %s: %v (%d results)", now, err, len(rs))
	}
	return stateOf(rs[0].Bindings["product"].([]any)), stateOf(rs[0].Bindings["line"].([]any))
}

// TestSupportIsJudgedByDateAsTheAddonsRuleJudgesIt holds kb.AddonSupport and kb.LineSupport,
// which the dashboard's knowledge page shows, to the addons rule over the days around each
// boundary: the day before an end of life, the day itself and the day after, and the first
// and last days of the approaching window, at the start and the end of a UTC day.
func TestSupportIsJudgedByDateAsTheAddonsRuleJudgesIt(t *testing.T) {
	pq := addonsRego(t)
	k := kbtest.Builtin(t)
	real := k.Addons()[0]
	eol := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	entries := []struct {
		name   string
		status string
		eol    string
	}{
		{"a supported add-on with an end of life", "supported", "2026-11-30"},
		{"a retired add-on with an end of life ahead", "retired", "2026-11-30"},
		{"a retired add-on without a date", "retired", "unknown"},
		{"a supported add-on without a date", "supported", "unknown"},
	}
	days := map[string]time.Time{
		"the day before the end of life":      eol.AddDate(0, 0, -1),
		"the day of the end of life":          eol,
		"the day after the end of life":       eol.AddDate(0, 0, 1),
		"the first day of the warning":        eol.AddDate(0, 0, -90),
		"the day before the warning":          eol.AddDate(0, 0, -91),
		"the last second of the day before":   eol.Add(-time.Second),
		"the last second of the day of e.o.l": eol.AddDate(0, 0, 1).Add(-time.Second),
	}
	for _, e := range entries {
		for day, now := range days {
			t.Run(e.name+" on "+day, func(t *testing.T) {
				a := real
				// the rule's findings cite their source: an entry without one makes none
				a.Support = kb.AddonSupport{Status: e.status, EOL: e.eol, Citations: []string{"https://endoflife.date"}}
				row := kb.AddonLine{Line: "1.2", EOL: e.eol, Citations: a.Support.Citations}
				product, line := ruleJudges(t, pq, a, row, now)
				if got := k.AddonSupport(&a, now).State; got != product {
					t.Errorf("on %s the page judges the add-on %s, the rule %s", now.Format(time.RFC3339), got, product)
				}
				if got := k.LineSupport(&row, now).State; got != line {
					t.Errorf("on %s the page judges the line %s, the rule %s", now.Format(time.RFC3339), got, line)
				}
			})
		}
	}
}

// TestEveryBuiltinAddonIsJudgedAsTheRuleJudgesItToday runs the same comparison over the
// registry as shipped, on the days around each entry's own dates.
func TestEveryBuiltinAddonIsJudgedAsTheRuleJudgesItToday(t *testing.T) {
	pq := addonsRego(t)
	k := kbtest.Builtin(t)
	for _, a := range k.Addons() {
		for _, l := range append([]kb.AddonLine{{Line: "none", Citations: []string{"https://endoflife.date"}}}, a.Lines...) {
			for _, date := range []string{a.Support.EOL, l.EOL} {
				at, err := time.Parse(time.DateOnly, date)
				if err != nil {
					continue
				}
				for _, now := range []time.Time{at.AddDate(0, 0, -1), at, at.AddDate(0, 0, 1)} {
					product, line := ruleJudges(t, pq, a, l, now)
					if got := k.AddonSupport(&a, now).State; got != product {
						t.Errorf("%s on %s: the page judges %s, the rule %s", a.ID, now.Format(time.DateOnly), got, product)
					}
					if got := k.LineSupport(&l, now).State; got != line {
						t.Errorf("%s %s on %s: the page judges %s, the rule %s", a.ID, l.Line, now.Format(time.DateOnly), got, line)
					}
				}
			}
		}
	}
}
