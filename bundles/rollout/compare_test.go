package rollout

import (
	"reflect"
	"testing"

	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/report"
)

func finding(key, severity string) report.Finding {
	return report.Finding{Key: key, Severity: severity}
}

func TestCompareNamesWhatTheCandidateBringsChangesAndTakesAway(t *testing.T) {
	before := &report.TargetResult{Target: "1.37", Verdict: report.VerdictReady, Score: 95, Warnings: 1,
		Findings: []report.Finding{finding("a/kept", report.SeverityWarning), finding("b/gone", report.SeverityInfo),
			finding("c/raised", report.SeverityWarning)}}
	after := report.TargetResult{Target: "1.37", Verdict: report.VerdictBlocked, Score: 70, Blockers: 1, Warnings: 1,
		Findings: []report.Finding{finding("a/kept", report.SeverityWarning), finding("c/raised", report.SeverityBlocker),
			finding("d/new", report.SeverityInfo), finding("d/new", report.SeverityInfo)}}
	d := Compare(before, after)
	want := outcome.Delta{Target: "1.37", Before: &outcome.Judgement{Verdict: "ready", Score: 95, Warnings: 1},
		After: outcome.Judgement{Verdict: "blocked", Score: 70, Blockers: 1, Warnings: 1},
		New:   []string{"d/new"}, Changed: []string{"c/raised"}, Resolved: []string{"b/gone"}, NewBlockers: []string{"c/raised"}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("Compare = %+v, want %+v", d, want)
	}
	if d.Turned() != report.VerdictBlocked {
		t.Errorf("Turned = %q, want blocked", d.Turned())
	}
}

func TestATargetWithoutAJudgementBeforeTurnsToWhatItIsJudged(t *testing.T) {
	d := Compare(nil, report.TargetResult{Target: "1.37", Verdict: report.VerdictReady, Score: 100})
	if d.Before != nil || d.Turned() != report.VerdictReady || len(d.New) != 0 {
		t.Errorf("%+v", d)
	}
	same := Compare(&report.TargetResult{Verdict: report.VerdictReady}, report.TargetResult{Verdict: report.VerdictReady})
	if same.Turned() != "" {
		t.Errorf("a verdict that stays turned to %q", same.Turned())
	}
}

func TestABlockedTargetThatGainsABlockerNamesIt(t *testing.T) {
	blocked := func(fs ...report.Finding) report.TargetResult {
		return report.TargetResult{Target: "1.37", Verdict: report.VerdictBlocked, Blockers: len(fs), Findings: fs}
	}
	before := blocked(finding("a/kept", report.SeverityBlocker))
	for _, tc := range []struct {
		name  string
		after report.TargetResult
		want  []string
	}{
		{"the same blockers gain nothing", blocked(finding("a/kept", report.SeverityBlocker)), []string{}},
		{"a new blocker listed twice is named once", blocked(finding("a/kept", report.SeverityBlocker),
			finding("e/new", report.SeverityBlocker), finding("e/new", report.SeverityBlocker)), []string{"e/new"}},
		{"a new warning is no new blocker", blocked(finding("a/kept", report.SeverityBlocker),
			finding("f/warn", report.SeverityWarning)), []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Compare(&before, tc.after)
			if !reflect.DeepEqual(d.NewBlockers, tc.want) || d.Turned() != "" {
				t.Errorf("NewBlockers %v, turned %q; want %v and the verdict kept", d.NewBlockers, d.Turned(), tc.want)
			}
		})
	}
}
