package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/hack/corpus"
)

// seed fills the fresh store with o.seedClusters clusters of o.seedHistory snapshots each,
// every snapshot evaluated at o.seedTargets targets, through store.Ingest directly (before
// serve starts): what 30,000 pushes would leave in the store without 30,000 evaluations.
// The fleet read never opens a snapshot's inventory or an evaluation's report, so both
// are small placeholders: a 10-namespace corpus inventory per cluster and a stub report.
func seed(dsn string, o options) error {
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	start := time.Now()
	workers := 1 // SQLite has one writer: more would only queue on its lock
	if strings.HasPrefix(dsn, "postgres") {
		workers = 8
	}
	report, err := gzipValue(map[string]any{"schemaVersion": 1, "seeded": true})
	if err != nil {
		return err
	}
	targets := strings.Split(seededTargets(o.seedTargets), ",")
	jobs := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range jobs {
				if err := seedCluster(ctx, st, c, o.seedHistory, targets, report); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for c := range o.seedClusters {
		select {
		case err := <-errs:
			close(jobs)
			wg.Wait()
			return err
		case jobs <- c:
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}
	fmt.Printf("seeded %d clusters × %d snapshots × %d targets in %.1f s (store package, directly)\n",
		o.seedClusters, o.seedHistory, len(targets), time.Since(start).Seconds())
	return nil
}

// seedCluster ingests cluster c's history, oldest first, an hour apart.
func seedCluster(ctx context.Context, st store.Store, c, history int, targets []string, report []byte) error {
	doc := corpus.Cluster(10, 500_000+c)
	inv, err := gzipValue(doc)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	for h := range history {
		at := now.Add(time.Duration(h-history) * time.Hour)
		in := store.Ingest{ClusterName: fmt.Sprintf("fleet-%04d", c), ClusterUID: doc.ClusterID,
			Hash: seedHash(c, h), CollectedAt: at, AgentVersion: "loadserve", KBVersion: "loadserve",
			ServerVersion: doc.ServerVersion, Inventory: inv}
		for i, t := range targets {
			in.Evaluations = append(in.Evaluations, seedEvaluation(c, h, i, t, at, report))
		}
		if _, err := st.Ingest(ctx, in); err != nil {
			return fmt.Errorf("seed cluster %d: %w", c, err)
		}
	}
	return nil
}

func seedHash(c, h int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "seed %d %d", c, h))
	return hex.EncodeToString(sum[:])
}

// seedEvaluation varies verdicts and scores by cluster, snapshot and target: later targets
// block more often, as real fleets do.
func seedEvaluation(c, h, i int, target string, at time.Time, report []byte) store.Evaluation {
	blockers := (c + h + i) % (3 + i)
	verdict := "ready"
	switch {
	case blockers > 1:
		verdict = "blocked"
	case (c+h)%17 == 0:
		verdict = "unknown"
	}
	return store.Evaluation{Target: target, Verdict: verdict, Score: max(100-20*blockers-(c%7), 0),
		Blockers: max(blockers-1, 0), Warnings: (c + i) % 5, Infos: h % 3, EvaluatedAt: at,
		Bundles:    []store.Bundle{{Name: "rules", Revision: "seeded"}, {Name: "kb", Revision: "seeded"}},
		BundlesKey: "kb@seeded,rules@seeded", Report: report}
}

func gzipValue(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
