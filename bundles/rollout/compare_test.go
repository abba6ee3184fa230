package rollout

import (
	"reflect"
	"testing"

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
	want := Delta{Target: "1.37", Before: &Judgement{Verdict: "ready", Score: 95, Warnings: 1},
		After: Judgement{Verdict: "blocked", Score: 70, Blockers: 1, Warnings: 1},
		New:   []string{"d/new"}, Changed: []string{"c/raised"}, Resolved: []string{"b/gone"}}
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

func TestADryRunFailsAtItsThresholdAndAlwaysOnWhatItCouldNotJudge(t *testing.T) {
	turned := func(name, before, after string, newKeys ...string) Result {
		return Result{Cluster: name, Targets: []Delta{{Target: "1.37", Before: &Judgement{Verdict: before},
			After: Judgement{Verdict: after}, New: newKeys}}}
	}
	tests := []struct {
		name    string
		results []Result
		want    map[string]bool // threshold → fails
	}{
		{"nothing changes", []Result{turned("a", "ready", "ready")},
			map[string]bool{FailOnBlocked: false, FailOnUnknown: false, FailOnChanged: false, FailOnNever: false}},
		{"a new finding without a verdict change", []Result{turned("a", "ready", "ready", "x/y")},
			map[string]bool{FailOnBlocked: false, FailOnUnknown: false, FailOnChanged: true}},
		{"a cluster turns unknown", []Result{turned("a", "ready", "unknown")},
			map[string]bool{FailOnBlocked: false, FailOnUnknown: true, FailOnChanged: true}},
		{"a cluster turns blocked", []Result{turned("a", "unknown", "blocked")},
			map[string]bool{FailOnBlocked: true, FailOnUnknown: true, FailOnNever: false}},
		{"the candidate fails on a cluster", []Result{{Cluster: "a", Error: "contract", Candidate: true}},
			map[string]bool{FailOnBlocked: true, FailOnNever: false}},
		{"a cluster could not be judged", []Result{{Cluster: "a", Error: "budget"}},
			map[string]bool{FailOnBlocked: true, FailOnNever: false}},
		{"a cluster turns ready", []Result{turned("a", "blocked", "ready")},
			map[string]bool{FailOnBlocked: false, FailOnUnknown: false, FailOnChanged: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := summarize(tt.results)
			for threshold, fails := range tt.want {
				if got := s.Fails(threshold) != ""; got != fails {
					t.Errorf("at %s: fails %v (%q), want %v", threshold, got, s.Fails(threshold), fails)
				}
			}
		})
	}
}
