package main

import (
	"testing"
	"time"
)

func TestPercentileIsNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%.0f = %v, want %v", p, got, want)
		}
	}
	if percentile(nil, 99) != 0 {
		t.Error("the percentile of nothing is not 0")
	}
}

func TestSeedingRunsServeAtTheSeededTargets(t *testing.T) {
	o := options{readers: 1, seedClusters: 10, seedHistory: 2, seedTargets: 4, targets: "1.36,1.37", bigBytes: 1 << 20}
	if err := o.check(); err != nil {
		t.Fatal(err)
	}
	if o.targets != "1.36,1.37,1.38,1.39" {
		t.Errorf("targets %q", o.targets)
	}
	o.seedTargets = 5
	if o.check() == nil {
		t.Error("5 seeded targets accepted; serve takes at most 4")
	}
}
