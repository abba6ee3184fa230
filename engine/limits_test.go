package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
)

// A pack whose rule spins: ten billion pairs, no finding.
const spinningPack = `package upgradescope.custom.spin

findings contains {"key": "spin/x", "category": "spin", "severity": "info", "target": t, "title": "x"} if {
	some t in input.targets
	some i in numbers.range(1, 100000)
	some j in numbers.range(1, 100000)
	i == j + 1000000
}
`

// A pack whose rule builds an array of a billion numbers.
const hoardingPack = `package upgradescope.custom.hoard

findings contains {"key": "hoard/x", "category": "hoard", "severity": "info", "target": t, "title": "x"} if {
	some t in input.targets
	count(numbers.range(1, 1e9)) == 0
}
`

// A rule that runs away ends in an error naming its pack and the line it was at, whichever
// bound it crosses, and no report: the verdict is never ready.
func TestARuleThatRunsAwayIsStoppedNamingItsPack(t *testing.T) {
	tests := []struct {
		name   string
		rego   string
		limits engine.Limits
		want   engine.LimitError
		msg    string
	}{
		{
			name:   "a CPU-heavy rule is stopped at the deadline",
			rego:   spinningPack,
			limits: engine.Limits{Timeout: 300 * time.Millisecond},
			want:   engine.LimitError{Limit: engine.LimitTimeout, Bound: "300ms", Pack: "spin"},
			msg:    `policy pack "spin" (`,
		},
		{
			name:   "numbers.range(1, 1e9) is stopped by the memory guard",
			rego:   hoardingPack,
			limits: engine.Limits{Timeout: time.Minute, Memory: 32 << 20},
			want:   engine.LimitError{Limit: engine.LimitMemory, Bound: "32 MiB", Pack: "hoard"},
			msg:    `policy pack "hoard" (`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, engine.WithPolicy(writePack(t, map[string]string{"p.rego": tt.rego})), engine.WithLimits(tt.limits))
			r, err := eng.Evaluate(context.Background(), prodInventory(), []string{"1.37"}, now)
			var le *engine.LimitError
			if !errors.As(err, &le) {
				t.Fatalf("Evaluate = %v, %v; want a LimitError", r, err)
			}
			// At is the line the rule was on when it was stopped: one of its body's.
			at := le.At
			le.At = ""
			if *le != tt.want || !strings.Contains(at, "p.rego:") {
				t.Errorf("LimitError = %+v at %q, want %+v in p.rego", *le, at, tt.want)
			}
			for _, w := range []string{tt.msg, "): evaluation exceeded " + tt.want.Bound} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// A caller that cancels (a signal, a shutdown) is told so, not that a pack ran away.
func TestACallersCancellationIsNotABound(t *testing.T) {
	eng := newEngine(t, engine.WithPolicy(writePack(t, map[string]string{"p.rego": spinningPack})))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := eng.Evaluate(ctx, prodInventory(), []string{"1.37"}, now)
	var le *engine.LimitError
	if err == nil || errors.As(err, &le) {
		t.Errorf("Evaluate = %v, want the caller's cancellation", err)
	}
}

// bits.lsh and sprintf build their result in one call, which no bound interrupts, so their
// sizes are bounded: past the bound the evaluation stops at the call's file and line, and
// below it they mean what they mean in OPA.
func TestBuiltinsThatBuildAValueInOneCallAreBounded(t *testing.T) {
	tests := []struct {
		name string
		expr string
		want string // the error; "" for a finding
	}{
		{"a shift of ten billion bits is refused", `bits.lsh(1, 1e10) == 0`, "p.rego:5: eval_builtin_error: bits.lsh: a shift of 1e10 bits is more than the 65536"},
		{"a gigabyte of padding is refused", `sprintf("%0999999999d", [1]) == ""`, "p.rego:5: eval_builtin_error: sprintf: a width or precision of 0999999999 is more than the 10000"},
		{"a width taken from the arguments is refused", `sprintf("%*d", [999999999, 1]) == ""`, "sprintf: %* takes its width from an argument"},
		{"a small shift still works", `bits.lsh(1, 10) == 1024`, ""},
		{"a small width still works", `sprintf("%05d%%|%.2f", [3, 1.5]) == "00003%|1.50"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rego := "package upgradescope.custom.big\n\nfindings contains {\"key\": \"big/x\", \"category\": \"big\", \"severity\": \"blocker\", \"target\": t, \"title\": \"x\"} if {\n" +
				"\tsome t in input.targets\n\t" + tt.expr + "\n}\n"
			eng := newEngine(t, engine.WithPolicy(writePack(t, map[string]string{"p.rego": rego})))
			r, err := eng.Evaluate(context.Background(), prodInventory(), []string{"1.37"}, now)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Evaluate = %v, want the pack's blocker", err)
			case tt.want == "" && r.Targets[0].Verdict != "blocked":
				t.Errorf("verdict %s, want blocked by the pack", r.Targets[0].Verdict)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Evaluate = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}
