package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/server"
	"github.com/upgradescope/upgradescope/server/store"
)

// BenchmarkIngestLargeCluster pushes distinct variants of corpus.LargeCluster (200
// namespaces, 2,000 nodes, 1,000 Helm releases) over HTTP to a server on SQLite, each
// evaluated at its next minor and one --targets minor: two evaluations a push. With
// RunParallel, as many pushers as GOMAXPROCS; 1/(ns/op) is snapshots a second.
func BenchmarkIngestLargeCluster(b *testing.B) {
	ts := benchServer(b, benchStore(b), server.Config{IngestToken: "bench", Targets: []string{"1.35"}})
	base := corpus.LargeCluster()
	var seq atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			doc := *base
			doc.Namespaces = append(append([]inventory.Namespace(nil), base.Namespaces...), inventory.Namespace{Name: fmt.Sprintf("bench-%d", n)})
			status := pushTo(b, ts, "bench", fmt.Sprintf("cluster-%d", n%8), &doc)
			if status != http.StatusAccepted {
				b.Errorf("push %d: %d", n, status)
			}
		}
	})
}

// BenchmarkFleet reads GET /api/v1/fleet of 1,000 clusters × 4 targets with 30 history
// points each, seeded straight into the store (the read is what is measured).
func BenchmarkFleet(b *testing.B) {
	st := benchStore(b)
	seedFleet(b, st, 1000, 30, []string{"1.34", "1.35", "1.36", "1.37"})
	ts := benchServer(b, st, server.Config{})
	b.ResetTimer()
	for b.Loop() {
		resp, err := ts.Client().Get(ts.URL + "/api/v1/fleet")
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("fleet: %v %v", resp, err)
		}
		resp.Body.Close()
	}
}

// benchStore is a fresh SQLite store, closed when b ends.
func benchStore(b *testing.B) store.Store {
	st, err := store.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// benchServer serves cfg on st with the shared engine over loopback HTTP.
func benchServer(b *testing.B, st store.Store, cfg server.Config) *httptest.Server {
	eng, err := sharedEngine()
	if err != nil {
		b.Fatal(err)
	}
	cfg.Store, cfg.Engine = st, eng
	srv, err := server.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(ts.Close)
	return ts
}

// seedFleet stores clusters × history snapshots, each evaluated at targets, with small
// reports and team rollups.
func seedFleet(b *testing.B, st store.Store, clusters, history int, targets []string) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for c := range clusters {
		for h := range history {
			in := store.Ingest{ClusterName: fmt.Sprintf("cluster-%04d", c), ClusterUID: fmt.Sprintf("uid-%d", c),
				Hash: fmt.Sprintf("%d-%d", c, h), ServerVersion: "v1.33.4", Inventory: []byte("x")}
			for i, t := range targets {
				in.Evaluations = append(in.Evaluations, store.Evaluation{Target: t, Verdict: "blocked", Score: 60 + i,
					Blockers: 2, Warnings: 3, EvaluatedAt: at.Add(time.Duration(h) * time.Hour),
					BundlesKey: "rules@1,kb@1", Report: []byte("{}"),
					Teams: map[string]store.TeamCell{fmt.Sprintf("team-%d", c%25): {Verdict: "blocked", Score: 70, Blockers: 1}}})
			}
			if _, err := st.Ingest(b.Context(), in); err != nil {
				b.Fatal(err)
			}
		}
	}
}
