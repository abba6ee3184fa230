package engine_test

import (
	"context"
	"testing"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/hack/corpus"
)

// BenchmarkEvaluate100k judges the inventory of the 100k-object bench corpus. Rules iterate
// the inventory's per-GVK entries, never objects, so the cost is that of a few dozen entries.
//
// 2026-11-29, this 2-core machine (go test -bench Evaluate -benchmem ./engine):
// see docs/performance.md for the last measured numbers.
func BenchmarkEvaluate100k(b *testing.B) {
	dir := b.TempDir()
	if err := corpus.Write(dir, 100_000); err != nil {
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
