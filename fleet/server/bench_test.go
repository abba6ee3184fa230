package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/notify"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/report"
)

// BenchmarkIngestCluster500 pushes distinct 500-namespace inventories
// (hack/corpus.Cluster(500, seed), about 1.2 MB of JSON; the shape of make bench-serve) over
// HTTP to a server on SQLite, each evaluated at two targets (the next minor, 1.36, and
// --targets 1.37). The bodies are encoded before the clock starts, so the client's gzip does
// not take the server's CPU; with RunParallel, as many pushers as GOMAXPROCS, and 1/(ns/op)
// is snapshots a second.
func BenchmarkIngestCluster500(b *testing.B) {
	benchIngest(b, server.Config{IngestToken: "bench", Targets: []string{"1.37"}})
}

// BenchmarkIngestCluster500Notifying is BenchmarkIngestCluster500 with a webhook sink: each
// push also reads and decodes each target's baseline report, compares, and enqueues. No
// worker runs, so delivery is not measured.
func BenchmarkIngestCluster500Notifying(b *testing.B) {
	hook, err := notify.NewWebhook("http://127.0.0.1:9/never-delivered", "")
	if err != nil {
		b.Fatal(err)
	}
	benchIngest(b, server.Config{IngestToken: "bench", Targets: []string{"1.37"}, Sinks: []notify.Sink{hook}})
}

func benchIngest(b *testing.B, cfg server.Config) {
	ts := benchServer(b, benchStore(b), cfg)
	bodies := make([][]byte, b.N)
	for i := range bodies {
		doc := corpus.Cluster(500, i+1)
		doc.ClusterID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i%8)
		bodies[i] = encodePush(b, fmt.Sprintf("cluster-%d", i%8), doc)
	}
	var seq atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1) - 1
			if status := postPush(b, ts, "bench", bodies[i]); status != http.StatusAccepted {
				b.Errorf("push %d: %d", i, status)
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
// reports (two blockers and three warnings, owned by teams) and team rollups.
func seedFleet(b *testing.B, st store.Store, clusters, history int, targets []string) {
	reports := map[string][]byte{}
	for _, t := range targets {
		reports[t] = benchReport(b, t)
	}
	seedFleetWith(b, st, clusters, history, targets, func(_ int, t string) []byte { return reports[t] })
}

// seedFleetWith is seedFleet with each cluster's report at a target from reportOf.
func seedFleetWith(b *testing.B, st store.Store, clusters, history int, targets []string, reportOf func(cluster int, target string) []byte) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for c := range clusters {
		for h := range history {
			in := store.Ingest{ClusterName: fmt.Sprintf("cluster-%04d", c), ClusterUID: fmt.Sprintf("uid-%d", c),
				Hash: fmt.Sprintf("%d-%d", c, h), ServerVersion: "v1.33.4", Inventory: []byte("x")}
			for i, t := range targets {
				in.Evaluations = append(in.Evaluations, store.Evaluation{Target: t, Verdict: "blocked", Score: 60 + i,
					Blockers: 2, Warnings: 3, EvaluatedAt: at.Add(time.Duration(h) * time.Hour),
					BundlesKey: "rules@1,kb@1", Report: reportOf(c, t),
					Teams: map[string]store.TeamCell{fmt.Sprintf("team-%d", c%25): {Verdict: "blocked", Score: 70, Blockers: 1}}})
			}
			if _, err := st.Ingest(b.Context(), in); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkReevaluateWithIngest measures ingest while the background re-evaluation works
// through a fleet: UPGRADESCOPE_BENCH_FLEET clusters (default 20) with 500-namespace
// inventories (hack/corpus.Cluster(500, seed)), stored with evaluations at 1.36 and 1.37 by
// another bundle set, so a server starting on them has every cluster pending. b.N new
// snapshots of 8 other clusters are pushed meanwhile, as in BenchmarkIngestCluster500;
// "quiet" pushes to the same fleet with no re-evaluation running, the baseline under the
// machine's load at that moment. UPGRADESCOPE_BENCH_REEVALUATE_RATE sets
// Config.ReevaluateRate (default the server's). Reported: snapshots/s of ingest, reevals/s
// (clusters re-evaluated while the pushes ran, a second) and pending (clusters left when
// they ended: above 0, the re-evaluation ran for the whole measurement).
//
//	UPGRADESCOPE_BENCH_FLEET=1000 go test -run XXX -bench ReevaluateWithIngest -benchtime 60x -count 2 ./server
//
// The numbers are in docs/performance.md.
func BenchmarkReevaluateWithIngest(b *testing.B) {
	n := envInt(b, "UPGRADESCOPE_BENCH_FLEET", 20)
	for _, reevaluate := range []bool{false, true} {
		name := "quiet"
		if reevaluate {
			name = "reevaluating"
		}
		b.Run(fmt.Sprintf("fleet=%d/%s", n, name), func(b *testing.B) { benchReevaluate(b, n, reevaluate) })
	}
}

func benchReevaluate(b *testing.B, n int, reevaluate bool) {
	rate := float64(envInt(b, "UPGRADESCOPE_BENCH_REEVALUATE_RATE", 0))
	path := filepath.Join(b.TempDir(), "bench.db")
	copyFile(b, reevaluationFleet(b, n), path)
	st, err := store.OpenSQLite(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	eng, err := sharedEngine()
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, Engine: eng, IngestToken: "bench", Targets: []string{"1.37"},
		ReevaluateRate: rate})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	b.Cleanup(ts.Close)
	bodies := make([][]byte, b.N)
	for i := range bodies {
		doc := corpus.Cluster(500, 100000+i)
		doc.ClusterID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i%8)
		bodies[i] = encodePush(b, fmt.Sprintf("pusher-%d", i%8), doc)
	}
	if reevaluate {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); srv.RunReevaluation(ctx) }()
		defer func() { cancel(); <-done }()
	}
	var seq atomic.Int64
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := seq.Add(1) - 1
			if status := postPush(b, ts, "bench", bodies[i]); status != http.StatusAccepted {
				b.Errorf("push %d: %d", i, status)
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	pending := fleetPending(b, ts)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "snapshots/s")
	b.ReportMetric(float64(n-pending)/elapsed.Seconds(), "reevals/s")
	b.ReportMetric(float64(pending), "pending")
}

// reevaluationFleet is a SQLite file holding n clusters for BenchmarkReevaluateWithIngest,
// seeded once per n in a process (a benchmark runs more than once) and copied by each run.
func reevaluationFleet(b *testing.B, n int) string {
	fleetsMu.Lock()
	defer fleetsMu.Unlock()
	if path, ok := fleets[n]; ok {
		return path
	}
	dir, err := os.MkdirTemp("", "upgradescope-bench-fleet")
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "fleet.db")
	st, err := store.OpenSQLite(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for c := range n {
		doc := corpus.Cluster(500, c+1)
		in := store.Ingest{ClusterName: fmt.Sprintf("cluster-%04d", c), ClusterUID: doc.ClusterID,
			Hash: fmt.Sprint(c), ServerVersion: doc.JudgedVersion(), Inventory: encodePush(b, fmt.Sprintf("cluster-%04d", c), doc)}
		for _, t := range []string{"1.36", "1.37"} {
			in.Evaluations = append(in.Evaluations, store.Evaluation{Target: t, Verdict: "ready", Score: 100,
				EvaluatedAt: at, BundlesKey: "upgradescope-kb@old,upgradescope-rules@old", Report: []byte("{}")})
		}
		if _, err := st.Ingest(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
	fleets[n] = path
	return path
}

var (
	fleetsMu sync.Mutex
	fleets   = map[int]string{}
)

// TestMain removes the seeded fleets reevaluationFleet kept for the process.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, path := range fleets {
		_ = os.RemoveAll(filepath.Dir(path))
	}
	os.Exit(code)
}

// fleetPending is the fleet's reevaluation.pending.
func fleetPending(b *testing.B, ts *httptest.Server) int {
	resp, err := ts.Client().Get(ts.URL + "/api/v1/fleet")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Reevaluation struct{ Pending int } `json:"reevaluation"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		b.Fatal(err)
	}
	return v.Reevaluation.Pending
}

func envInt(b *testing.B, name string, def int) int {
	raw := os.Getenv(name)
	if raw == "" {
		return def
	}
	v, err := strconv.Atoi(raw)
	if err != nil || v < 0 {
		b.Fatalf("%s=%q: want a whole number", name, raw)
	}
	return v
}

func copyFile(b *testing.B, from, to string) {
	data, err := os.ReadFile(from)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		b.Fatal(err)
	}
}

// benchReport is a stored report at target of two blockers and three warnings, each owned
// by a team and naming a few objects, gzipped as the server stores it.
// variedReport is cluster c's report at target in a fleet whose clusters differ: 40
// findings (8 blockers, 32 warnings) of a pool of 400 keys, a window that moves with c, so
// neighbouring clusters share most keys and the fleet holds every one; 1 to 20 objects and
// a team each.
func variedReport(b *testing.B, c int, target string) []byte {
	tr := report.TargetResult{Target: target, Verdict: "blocked", Blockers: 8, Warnings: 32}
	for i := range 40 {
		k := (c*7 + i) % 400
		sev := report.SeverityWarning
		if i < 8 {
			sev = report.SeverityBlocker
		}
		tr.Findings = append(tr.Findings, report.Finding{Key: fmt.Sprintf("removed-api/example.com/v1beta1/Kind%03d", k), Category: "removed-api",
			Severity: sev, Target: target, Title: fmt.Sprintf("example.com/v1beta1 Kind%03d is removed in Kubernetes %s (%d objects)", k, target, 1+(c+i)%20),
			ObjectsOmitted: 1 + (c+i)%20, Teams: []string{fmt.Sprintf("team-%d", (c+i)%25)}})
	}
	data, err := json.Marshal(report.Report{SchemaVersion: 1, Targets: []report.TargetResult{tr}})
	if err != nil {
		b.Fatal(err)
	}
	return gzipBytes(b, data)
}

func benchReport(b *testing.B, target string) []byte {
	tr := report.TargetResult{Target: target, Verdict: "blocked", Blockers: 2, Warnings: 3}
	for i := range 5 {
		sev := report.SeverityWarning
		if i < 2 {
			sev = report.SeverityBlocker
		}
		tr.Findings = append(tr.Findings, report.Finding{Key: fmt.Sprintf("removed-api/example.com/v1beta1/Kind%d", i), Category: "removed-api",
			Severity: sev, Target: target, Title: fmt.Sprintf("example.com/v1beta1 Kind%d is removed in Kubernetes %s", i, target),
			ObjectsOmitted: 3 + i, Teams: []string{fmt.Sprintf("team-%d", i%25)}})
	}
	data, err := json.Marshal(report.Report{SchemaVersion: 1, Targets: []report.TargetResult{tr}})
	if err != nil {
		b.Fatal(err)
	}
	return gzipBytes(b, data)
}
