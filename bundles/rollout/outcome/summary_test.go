package outcome

import "testing"

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
			s := Summarize(tt.results)
			for threshold, fails := range tt.want {
				if got := s.Fails(threshold) != ""; got != fails {
					t.Errorf("at %s: fails %v (%q), want %v", threshold, got, s.Fails(threshold), fails)
				}
			}
		})
	}
}
