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
