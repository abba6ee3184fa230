package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestOneShotCommandsCollectLessOftenUnlessTheEnvironmentSaysOtherwise(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	tuneGCForOneShot()
	if got := debug.SetGCPercent(100); got != oneShotGCPercent {
		t.Errorf("GC percent = %d, want %d", got, oneShotGCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != oneShotMemoryLimit {
		t.Errorf("memory limit = %d, want %d", got, oneShotMemoryLimit)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOGC", "100")
	t.Setenv("GOMEMLIMIT", "1GiB")
	tuneGCForOneShot()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, GC percent = %d, want it left at 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, memory limit = %d, want it left alone", got)
	}
}

func TestServeCollectsLessOftenUnderASoftLimitUnlessTheEnvironmentSaysOtherwise(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	tuneGCForServe()
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Errorf("GC percent = %d, want %d", got, serveGCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != serveMemoryLimit {
		t.Errorf("memory limit = %d, want %d", got, serveMemoryLimit)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOGC", "off")
	t.Setenv("GOMEMLIMIT", "1GiB")
	tuneGCForServe()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, GC percent = %d, want it left at 100", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, memory limit = %d, want it left alone", got)
	}
}
