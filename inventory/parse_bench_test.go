package inventory_test

import (
	"encoding/json"
	"testing"

	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/inventory"
)

// cluster500 is the 1.2 MB inventory of a 500-namespace cluster: the size the fleet server
// parses once per pushed snapshot.
func cluster500(b *testing.B) []byte {
	b.Helper()
	data, err := json.Marshal(corpus.Cluster(500, 1))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkParseCluster500 is the fast path: 15.4 ms, 4.1 MB and 42 k allocations on this
// project's 2-core machine (2026-11-30), where the generic JSON Schema pass and
// encoding/json took 96 ms, 37.5 MB and 689 k.
func BenchmarkParseCluster500(b *testing.B) {
	data := cluster500(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inventory.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateCluster500 is the fast acceptor alone: 4.7 ms and 2.3 k allocations on
// the same machine, where jsonschema behind the bounds check took about 67 ms.
func BenchmarkValidateCluster500(b *testing.B) {
	data := cluster500(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := inventory.Validate(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseCluster500SlowPath is a document the fast acceptor leaves to the slow path
// (a count of 19 digits): the bounds check, jsonschema and encoding/json. 79–105 ms, 38.3 MB
// and 699 k allocations on this project's 2-core machine under load (2026-12-01); refusing
// duplicate names there added 0.4 MB and 2.3 k allocations (37.9 MB, 696 k before).
func BenchmarkParseCluster500SlowPath(b *testing.B) {
	d := corpus.Cluster(500, 1)
	d.APIUsage[0].Count = 1_000_000_000_000_000_000
	data, err := json.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	if inventory.AcceptFast(data) {
		b.Fatal("the fast acceptor takes the document: the benchmark would not measure the slow path")
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inventory.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
