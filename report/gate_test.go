package report

import "testing"

func TestTheGateFailsOnWhatTheThresholdCounts(t *testing.T) {
	target := func(verdict string, blockers, warnings int) TargetResult {
		return TargetResult{Target: "1.37", Verdict: verdict, Blockers: blockers, Warnings: warnings,
			NotAssessed: []Gap{{Capability: "api-usage", Required: true}, {Capability: "helm"}}}
	}
	tests := []struct {
		name            string
		t               TargetResult
		failOn          string
		allowIncomplete bool
		want            string
	}{
		{"blockers fail at blocker", target(VerdictBlocked, 3, 0), FailOnBlocker, false, "1.37: 3 blockers"},
		{"one blocker is singular", target(VerdictBlocked, 1, 0), FailOnBlocker, false, "1.37: 1 blocker"},
		{"warnings pass at blocker", target(VerdictReady, 0, 2), FailOnBlocker, false, ""},
		{"warnings fail at warning", target(VerdictReady, 0, 2), FailOnWarning, false, "1.37: 2 warnings"},
		{"never never fails", target(VerdictBlocked, 3, 0), FailOnNever, false, ""},
		{"unknown fails naming required gaps only", target(VerdictUnknown, 0, 0), FailOnBlocker, false, "1.37: verdict unknown (api-usage not assessed)"},
		{"unknown passes when incomplete is allowed", target(VerdictUnknown, 0, 0), FailOnBlocker, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Targets: []TargetResult{tt.t}}
			if got := r.Gate(tt.failOn, tt.allowIncomplete); got != tt.want {
				t.Errorf("Gate(%s) = %q, want %q", tt.failOn, got, tt.want)
			}
		})
	}
}

func TestAPlanGatesOnItsDestinationOnly(t *testing.T) {
	r := &Report{
		Plan:    []Hop{{To: "1.36"}, {To: "1.37"}},
		Targets: []TargetResult{{Target: "1.36", Verdict: VerdictBlocked, Blockers: 1}, {Target: "1.37", Verdict: VerdictReady}},
	}
	if got := r.Gate(FailOnBlocker, false); got != "" {
		t.Errorf("Gate = %q, want a pass: the destination is ready", got)
	}
}

func TestAnUnknownThresholdIsRefusedInTheLibrarysOwnTerms(t *testing.T) {
	_, err := ParseFailOn("error")
	if err == nil || err.Error() != `unknown gate threshold "error": want blocker, warning or never` {
		t.Errorf("ParseFailOn(error) = %v", err)
	}
}
