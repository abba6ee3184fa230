package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/report"
)

var (
	dryRunFleetSize  = flag.Int("dryrun-fleet", 1000, "clusters in BenchmarkDryRunStoredFleet")
	dryRunFleetKinds = flag.Int("dryrun-distinct", 16, "distinct inventories the fleet of BenchmarkDryRunStoredFleet is made of")
	dryRunFleetAge   = flag.Duration("dryrun-age", 0, "how long before the dry run the fleet of BenchmarkDryRunStoredFleet was evaluated (24h: yesterday, so the current side is judged again)")
)

// BenchmarkDryRunStoredFleet is POST /api/v1/bundles/dry-run end to end over HTTP: a signed
// new kb revision as the candidate, judged over a stored fleet of 500-namespace clusters
// (hack/corpus.Cluster(500, seed), v1.35) at two targets each (the next minor, 1.36, and
// --targets 1.37), and the streamed answer read to its summary. The fleet is seeded straight
// into the store with real evaluations of -dryrun-distinct inventories, reused across the
// clusters; each cluster's snapshot and reports are still read, decoded and judged on their
// own. Run it once:
//
//	go test -run XXX -bench DryRunStoredFleet -benchtime 1x ./server [-args -dryrun-fleet 1000]
//
// -dryrun-age 24h stores the evaluations a day before the dry run, so the current side is
// judged again. The numbers are in docs/performance.md.
func BenchmarkDryRunStoredFleet(b *testing.B) {
	dir := b.TempDir()
	private, public := bundletest.Keys(b, dir)
	candidate := bundletest.KB(b, private, "2099-01-01.1", "1.37")
	vc, err := bundles.VerificationFromFile(public, "RS256")
	if err != nil {
		b.Fatal(err)
	}
	st := benchStore(b)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	seedStoredFleet(b, st, *dryRunFleetSize, *dryRunFleetKinds, now.Add(-*dryRunFleetAge))
	ts := benchServer(b, st, server.Config{ReadToken: "bench", Targets: []string{"1.37"}, Verification: vc,
		Now: func() time.Time { return now },
		WithCandidate: func(ctx context.Context, c *bundles.Fetched) (*engine.Engine, error) {
			return engine.New(ctx, engine.WithBundle(c.Source, c.Bundle, c.Signature))
		}})
	cpuBefore := cpuTime(b)
	b.ResetTimer()
	for b.Loop() {
		lines, summary := postDryRun(b, ts.URL, candidate)
		if lines != *dryRunFleetSize || summary.Clusters != *dryRunFleetSize || len(summary.Unjudged)+len(summary.CandidateErrors) > 0 {
			b.Fatalf("%d lines, summary %+v", lines, summary)
		}
	}
	clusters := float64(b.N * (*dryRunFleetSize))
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/clusters, "ms/cluster")
	// CPU time says what the dry run costs on a machine shared with other work, where the
	// wall time says how much of it the run was given.
	b.ReportMetric(float64((cpuTime(b)-cpuBefore).Milliseconds())/clusters, "cpu-ms/cluster")
}

// cpuTime is the CPU time (user and system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// postDryRun posts the candidate and reads the stream: the cluster lines and the summary.
func postDryRun(b *testing.B, base string, candidate []byte) (int, struct {
	Clusters        int
	Unjudged        []string
	CandidateErrors []string
}) {
	req, err := http.NewRequest("POST", base+"/api/v1/bundles/dry-run?budget=15m", bytes.NewReader(candidate))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer bench")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("dry run: %s", resp.Status)
	}
	var last struct {
		Summary struct {
			Clusters        int
			Unjudged        []string
			CandidateErrors []string
		}
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	lines := -1 // the summary is not a cluster's
	for sc.Scan() {
		lines++
		last.Summary.Clusters = 0
		_ = json.Unmarshal(sc.Bytes(), &last)
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return lines, last.Summary
}

// seedStoredFleet stores clusters snapshots of distinct corpus inventories, each with the
// server's own evaluations of it at 1.36 and 1.37 made at at, as an ingest would have
// stored them.
func seedStoredFleet(b *testing.B, st store.Store, clusters, distinct int, at time.Time) {
	eng, err := sharedEngine()
	if err != nil {
		b.Fatal(err)
	}
	key := server.BundlesKey(eng)
	type seed struct {
		body    []byte
		version string
		evals   []store.Evaluation
	}
	seeds := make([]seed, distinct)
	for i := range seeds {
		doc := corpus.Cluster(500, i+1)
		rep, err := eng.Evaluate(b.Context(), doc, []string{"1.36", "1.37"}, at)
		if err != nil {
			b.Fatal(err)
		}
		seeds[i] = seed{body: encodePush(b, "seed", doc), version: doc.ServerVersion}
		for _, tr := range rep.Targets {
			single := *rep
			single.Targets = []report.TargetResult{tr}
			seeds[i].evals = append(seeds[i].evals, store.Evaluation{Target: tr.Target, Verdict: tr.Verdict, Score: tr.Score,
				Blockers: tr.Blockers, Warnings: tr.Warnings, EvaluatedAt: at, BundlesKey: key, Report: gzipped(b, &single)})
		}
	}
	for c := range clusters {
		s := seeds[c%distinct]
		in := store.Ingest{ClusterName: fmt.Sprintf("cluster-%04d", c), ClusterUID: fmt.Sprintf("uid-%d", c),
			Hash: fmt.Sprintf("hash-%d", c), ServerVersion: s.version, Inventory: s.body, Evaluations: s.evals}
		if _, err := st.Ingest(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
}

func gzipped(b *testing.B, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return gzipBytes(b, data)
}
