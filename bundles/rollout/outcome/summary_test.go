package outcome

import (
	"strings"
	"testing"
)

func TestADryRunFailsAtItsThresholdAndAlwaysOnWhatItCouldNotJudge(t *testing.T) {
	turned := func(name, before, after string, newKeys ...string) Result {
		return Result{Cluster: name, Targets: []Delta{{Target: "1.37", Before: &Judgement{Verdict: before},
			After: Judgement{Verdict: after}, New: newKeys}}}
	}
	gains := func(name, before string, blockers ...string) Result {
		r := turned(name, before, "blocked", blockers...)
		r.Targets[0].NewBlockers = blockers
		return r
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
			map[string]bool{FailOnBlocked: false, FailOnNewBlocker: false, FailOnUnknown: false, FailOnChanged: true}},
		{"a blocked cluster gains a blocker", []Result{gains("a", "blocked", "x/y")},
			map[string]bool{FailOnBlocked: false, FailOnNewBlocker: true, FailOnUnknown: false, FailOnChanged: true, FailOnNever: false}},
		{"a ready cluster turns blocked by a new blocker", []Result{gains("a", "ready", "x/y")},
			map[string]bool{FailOnBlocked: true, FailOnNewBlocker: true}},
		{"a new finding that is no blocker", []Result{turned("a", "blocked", "blocked", "x/warning")},
			map[string]bool{FailOnNewBlocker: false, FailOnChanged: true}},
		{"a cluster not judged fails at new-blocker too", []Result{{Cluster: "a", Error: "budget"}},
			map[string]bool{FailOnNewBlocker: true}},
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

func TestNewBlockerNamesTheClustersAlreadyBlockedOnceAndTheTurnedOnesAsTurned(t *testing.T) {
	s := Summarize([]Result{
		{Cluster: "already", Targets: []Delta{{Target: "1.37", Before: &Judgement{Verdict: "blocked"},
			After: Judgement{Verdict: "blocked"}, New: []string{"x/y"}, NewBlockers: []string{"x/y"}}}},
		{Cluster: "fresh", Targets: []Delta{{Target: "1.37", Before: &Judgement{Verdict: "ready"},
			After: Judgement{Verdict: "blocked"}, New: []string{"x/y"}, NewBlockers: []string{"x/y"}}}},
		{Cluster: "calm", Targets: []Delta{{Target: "1.37", Before: &Judgement{Verdict: "blocked"}, After: Judgement{Verdict: "blocked"}}}},
	})
	want := "1 cluster would turn blocked (fresh); 1 cluster already blocked would gain a blocker (already)"
	if got := s.Fails(FailOnNewBlocker); got != want {
		t.Errorf("Fails(new-blocker) = %q, want %q", got, want)
	}
	if got := s.NewBlockers; len(got) != 2 || got[0] != "already" || got[1] != "fresh" {
		t.Errorf("NewBlockers = %v, want already and fresh", got)
	}
}

func TestChangedOnlyLeavesOutUnchangedClustersAndCountsThem(t *testing.T) {
	same := func(name string) Result {
		return Result{Cluster: name, Targets: []Delta{{Target: "1.37", Before: &Judgement{Verdict: "ready", Score: 100},
			After: Judgement{Verdict: "ready", Score: 100}}}}
	}
	results := []Result{same("a"), {Cluster: "b", Targets: []Delta{{Target: "1.37", Before: &Judgement{Verdict: "blocked", Score: 75},
		After: Judgement{Verdict: "blocked", Score: 50}, New: []string{"x/y"}, NewBlockers: []string{"x/y"}}}},
		same("c"), {Cluster: "d", Error: "budget ran out"}, {Cluster: "e", Skipped: "no target"}}
	for _, tc := range []struct {
		name    string
		results []Result
		want    string
	}{
		{"changed and unjudged clusters stay", results, `CLUSTER  TARGET  BEFORE      AFTER       NEW  CHANGED  RESOLVED
b        1.37    blocked 75  blocked 50  1    0        0
d        -       -           -           -    -        -
e        -       -           -           -    -        -
2 clusters without change omitted.

b 1.37 new: x/y

d: budget ran out

e: no target
`},
		{"nothing changed", []Result{same("a"), same("c")}, `No cluster changes.
2 clusters without change omitted.
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			s := Summarize(tc.results)
			if err := WriteTable(&b, tc.results, s, ChangedOnly()); err != nil {
				t.Fatal(err)
			}
			if want := tc.want + "\n" + s.String() + "\n"; b.String() != want {
				t.Errorf("table:\n%s\nwant\n%s", b.String(), want)
			}
		})
	}
}

// An unknown verdict's score counts only what was assessed: the table shows none for it,
// before or after, and a score for every other verdict.
func TestTheTableShowsNoScoreForAnUnknownVerdict(t *testing.T) {
	delta := func(cluster string, before *Judgement, after Judgement) Result {
		return Result{Cluster: cluster, Targets: []Delta{{Target: "1.22", Before: before, After: after, New: []string{"x/y"}}}}
	}
	results := []Result{
		delta("legacy-batch", &Judgement{Verdict: "unknown", Score: 100}, Judgement{Verdict: "blocked", Score: 75}),
		delta("new-one", nil, Judgement{Verdict: "unknown", Score: 90}),
	}
	var b strings.Builder
	s := Summarize(results)
	if err := WriteTable(&b, results, s); err != nil {
		t.Fatal(err)
	}
	want := `CLUSTER       TARGET  BEFORE   AFTER       NEW  CHANGED  RESOLVED
legacy-batch  1.22    unknown  blocked 75  1    0        0
new-one       1.22    (none)   unknown     1    0        0

legacy-batch 1.22 new: x/y

new-one 1.22 new: x/y

` + s.String() + "\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant\n%s", b.String(), want)
	}
}
