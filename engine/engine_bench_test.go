package engine_test

import (
	"context"
	"testing"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/hack/corpus"
)

// BenchmarkEvaluate100k judges the inventory of the 100k-object bench corpus. Rules iterate
// the inventory's per-GVK entries, never objects, so the cost is that of a few dozen entries.
//
// 2026-11-29, this 2-core machine (go test -bench Evaluate -benchmem ./engine):
// see docs/performance.md for the last measured numbers.
func BenchmarkEvaluate100k(b *testing.B) {
	dir := b.TempDir()
	if err := corpus.Write(dir, 100_000, corpus.Classic); err != nil {
		b.Fatal(err)
	}
	eng := newEngine(b)
	res, err := files.Collect(dir, files.Options{Watched: eng.WatchedKinds(), Known: eng.KnownKinds(), BuiltinGroups: eng.BuiltinGroups()})
	if err != nil {
		b.Fatal(err)
	}
	inv := files.Inventory(res, now)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := eng.Evaluate(ctx, inv, []string{"1.37"}, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvaluateLargeCluster judges a large live cluster's inventory (2,000 nodes, 1,000
// Helm releases, 200 namespaces with teams, 30 add-on images, 250 CRDs) for four targets.
func BenchmarkEvaluateLargeCluster(b *testing.B) {
	eng := newEngine(b)
	inv := corpus.LargeCluster()
	ctx := context.Background()
	targets := []string{"1.34", "1.35", "1.36", "1.37"}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := eng.Evaluate(ctx, inv, targets, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkActivateNewKB is what an agent spends, off the tick, when a new kb revision
// arrives: compiling the embedded rules with the new kb and probing the set once.
func BenchmarkActivateNewKB(b *testing.B) {
	ctx := context.Background()
	kb := kbWithHorizon(b, "2027-01-05.1", "1.37")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := engine.New(ctx, engine.WithBundle("kb.tar.gz", kb)); err != nil {
			b.Fatal(err)
		}
	}
}
