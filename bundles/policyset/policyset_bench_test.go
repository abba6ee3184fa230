package policyset

import (
	"context"
	"testing"

	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
)

// BenchmarkActivateANewKBRevision is what a new kb costs a server or an agent, off the
// evaluating path: the set compiled with it and rehearsed on the last inventory judged
// (testdata/teams at 1.33 and 1.34), then swapped in.
//
// 2-core AMD EPYC VM, shared (go test -run XXX -bench Activate -benchmem ./policyset/):
// 226 ms, 23 MB allocated and 397k allocations per activation (-benchtime 10x).
func BenchmarkActivateANewKBRevision(b *testing.B) {
	ctx := context.Background()
	set, err := New(ctx, Base{})
	if err != nil {
		b.Fatal(err)
	}
	eng, _ := set.Engine()
	set.Remember(probetest.Scenario(b, "../..", "teams", eng.Observe().Probes), []string{"1.33", "1.34"})
	f := kb(b, "https://b.example/kb.tar.gz", "2027-01-12.1")
	b.ReportAllocs()
	for b.Loop() {
		if err := set.Activate(ctx, f); err != nil {
			b.Fatal(err)
		}
	}
}
