package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestEachCommandTunesTheCollectorUnlessTheEnvironmentSaysOtherwise(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, tc := range []struct {
		name    string
		tune    func()
		percent int
		limit   int64
	}{
		{"one-shot commands collect less often under a soft limit", tuneGCForOneShot, oneShotGCPercent, oneShotMemoryLimit},
		{"serve collects less often under a soft limit", tuneGCForServe, serveGCPercent, serveMemoryLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(100)
			debug.SetMemoryLimit(math.MaxInt64)
			t.Setenv("GOGC", "")
			t.Setenv("GOMEMLIMIT", "")
			tc.tune()
			if got := debug.SetGCPercent(100); got != tc.percent {
				t.Errorf("GC percent = %d, want %d", got, tc.percent)
			}
			if got := debug.SetMemoryLimit(math.MaxInt64); got != tc.limit {
				t.Errorf("memory limit = %d, want %d", got, tc.limit)
			}

			t.Setenv("GOGC", "100")
			t.Setenv("GOMEMLIMIT", "1GiB")
			tc.tune()
			if got := debug.SetGCPercent(100); got != 100 {
				t.Errorf("with GOGC set, GC percent = %d, want it left at 100", got)
			}
			if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
				t.Errorf("with GOMEMLIMIT set, memory limit = %d, want it left alone", got)
			}
		})
	}
}
