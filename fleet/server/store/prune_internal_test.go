package store

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestPruneInBatches prunes with a batch smaller than what is to delete: every batch is
// committed and counted, and the last, short one ends the loop.
func TestPruneInBatches(t *testing.T) {
	s, err := openSQLite(t.Context(), filepath.Join(t.TempDir(), "upgradescope.db"))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	const snapshots = 8
	for i := range snapshots {
		in := Ingest{ClusterName: "c", ClusterUID: "uid", Hash: fmt.Sprint(i),
			Evaluations: []Evaluation{{Target: "1.31", Verdict: "ready"}}}
		if _, err := s.Ingest(t.Context(), in); err != nil {
			t.Fatalf("Ingest %d: %v", i, err)
		}
	}
	// The newest is both the latest and the fleet cell's: the rest go, 3 per batch.
	n, err := s.prune(t.Context(), qPruneBatch, time.Now().Add(time.Hour), 3)
	if err != nil || n != snapshots-1 {
		t.Fatalf("prune = %d, %v; want %d", n, err, snapshots-1)
	}
	var left int
	if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM snapshots`).Scan(&left); err != nil || left != 1 {
		t.Errorf("snapshots left = %d, %v; want 1", left, err)
	}
}
