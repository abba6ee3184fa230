package engine_test

import (
	"context"
	"testing"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/hack/corpus"
)

// BenchmarkEvaluate100k judges the inventory of the 100k-object classic bench corpus. Rules
// iterate the inventory's per-GVK entries, never objects, so the cost is that of a few dozen
// entries. The last measured numbers and the machine are in docs/performance.md.
func BenchmarkEvaluate100k(b *testing.B) { benchmarkCorpus(b, corpus.Classic) }

// BenchmarkEvaluate100kManyImages judges the inventory of the 100k-object many-images corpus:
// 31,000 distinct images, of which the rules read the few an add-on matcher could claim, and
// 250 CRDs with a deprecated version (250 info findings).
func BenchmarkEvaluate100kManyImages(b *testing.B) { benchmarkCorpus(b, corpus.ManyImages) }

func benchmarkCorpus(b *testing.B, shape corpus.Shape) {
	dir := b.TempDir()
	if err := corpus.Write(dir, 100_000, shape); err != nil {
		b.Fatal(err)
	}
	eng := newEngine(b)
	res, err := files.Collect(dir, files.Options{Observe: eng.Observe()})
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

// BenchmarkEvaluateCluster500 judges the inventory of a big live cluster of the fleet bench
// (hack/corpus.Cluster(500, 1): 500 namespaces, ~2,580 Helm releases, ~1,557 images, 230
// CRDs) for two targets.
func BenchmarkEvaluateCluster500(b *testing.B) {
	eng := newEngine(b)
	inv := corpus.Cluster(500, 1)
	ctx := context.Background()
	targets := []string{"1.36", "1.37"}
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
		if _, err := engine.New(ctx, engine.WithBundle("kb.tar.gz", kb, "")); err != nil {
			b.Fatal(err)
		}
	}
}
