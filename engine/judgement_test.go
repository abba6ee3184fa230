package engine_test

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/upgradescope/upgradescope/report"
)

// reportRego prepares query against the built-in bundles as `opa eval --ignore '*_test.rego'
// -b policies/rules -b policies/kb` loads them: the Rego a user reads, not a copy of it.
func reportRego(t *testing.T, query string) rego.PreparedEvalQuery {
	t.Helper()
	pq, err := rego.New(
		rego.Query(query),
		rego.LoadBundle("../policies/rules"),
		rego.LoadBundle("../policies/kb"),
		rego.WithFilter(func(_ string, info fs.FileInfo, _ int) bool {
			return strings.HasSuffix(info.Name(), "_test.rego")
		}),
	).PrepareForEval(context.Background())
	if err != nil {
		t.Fatalf("prepare %s: %v", query, err)
	}
	return pq
}

// judged is what report.rego's score(counts) and verdict(counts, gaps) give.
type judged struct {
	score   int
	verdict string
}

func judgeInRego(t *testing.T, pq rego.PreparedEvalQuery, blockers, warnings, infos int, gaps []report.Gap) judged {
	t.Helper()
	counts := map[string]int{"blocker": blockers, "warning": warnings, "info": infos}
	rs, err := pq.Eval(context.Background(), rego.EvalInput(map[string]any{"counts": counts, "gaps": gaps}))
	if err != nil || len(rs) != 1 {
		t.Fatalf("evaluate report.rego at %v %v: %v (%d results)", counts, gaps, err, len(rs))
	}
	score, err := rs[0].Bindings["score"].(interface{ Int64() (int64, error) }).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return judged{int(score), rs[0].Bindings["verdict"].(string)}
}

// TestGoJudgementMatchesReportRego holds Go's copies of the report's judgement (report.Score,
// report.Verdict and report.JudgeTeam, used where findings are counted after the rules ran)
// to report.rego's own score and verdict, over every count around the caps and every kind
// of gap: the formula is written twice, and this is what keeps the two one.
func TestGoJudgementMatchesReportRego(t *testing.T) {
	pq := reportRego(t, `score := data.upgradescope.report.score(input.counts)
verdict := data.upgradescope.report.verdict(input.counts, input.gaps)`)
	optional := report.Gap{Capability: "helm", Reason: "not available"}
	required := report.Gap{Capability: "api-usage", Required: true, Reason: "not collected"}
	gapSets := [][]report.Gap{{}, {optional}, {required}, {optional, required}}
	for _, blockers := range []int{0, 1, 2, 3, 4, 40} {
		for _, warnings := range []int{0, 1, 3, 4, 5, 60} {
			for _, infos := range []int{0, 7} {
				for _, gaps := range gapSets {
					name := fmt.Sprintf("%d blockers %d warnings %d infos gaps %v", blockers, warnings, infos, gaps)
					want := judgeInRego(t, pq, blockers, warnings, infos, gaps)
					if got := (judged{report.Score(blockers, warnings), report.Verdict(blockers, gaps)}); got != want {
						t.Errorf("%s: Go judges the target %+v, report.rego %+v", name, got, want)
					}
					checkTeam(t, pq, name, report.TeamResult{Blockers: blockers, Warnings: warnings, Infos: infos}, gaps)
				}
			}
		}
	}
}

// checkTeam holds a team's judgement to report.rego: its score is the formula over its own
// counts, its verdict the target's rule with the blockers no team owns added to its own.
func checkTeam(t *testing.T, pq rego.PreparedEvalQuery, name string, counts report.TeamResult, gaps []report.Gap) {
	t.Helper()
	for _, unowned := range []int{0, 1, 3} {
		got := report.JudgeTeam(counts, unowned, gaps)
		own := judgeInRego(t, pq, counts.Blockers, counts.Warnings, counts.Infos, gaps)
		withUnowned := judgeInRego(t, pq, counts.Blockers+unowned, counts.Warnings, counts.Infos, gaps)
		if got.Score != own.score || got.Verdict != withUnowned.verdict {
			t.Errorf("%s, %d unowned: JudgeTeam = %d %s, report.rego = %d %s", name, unowned,
				got.Score, got.Verdict, own.score, withUnowned.verdict)
		}
		if got.Blockers != counts.Blockers || got.Warnings != counts.Warnings || got.Infos != counts.Infos {
			t.Errorf("%s: JudgeTeam changed the counts: %+v", name, got)
		}
	}
}
