package storetest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// auditCases run under Run.
var auditCases = []struct {
	name string
	test func(t *testing.T, open Opener)
}{
	{"audit batches are stored per cluster, counted, and read back by id", testAuditRoundTrip},
	{"an audit batch for a name no cluster has is not found and stores nothing", testAuditUnknownCluster},
	{"an audit batch whose update fails stores nothing", testAuditUpdateFails},
	{"concurrent audit batches of one cluster on two handles lose none", testAuditRace},
	{"deleting a cluster deletes its audit calls and renaming carries them", testAuditDeleteAndRename},
}

// countBatch is an update that counts batches in the section itself, as a number: a batch
// lost to a race shows as a count short of the batches sent.
func countBatch(prev []byte) ([]byte, error) {
	n := 0
	if prev != nil {
		var err error
		if n, err = strconv.Atoi(string(prev)); err != nil {
			return nil, err
		}
	}
	return []byte(strconv.Itoa(n + 1)), nil
}

func mustUpdateAudit(t *testing.T, s store.Store, name string, fn func([]byte) ([]byte, error)) store.AuditRecord {
	t.Helper()
	rec, err := s.UpdateAuditCalls(t.Context(), name, fn)
	if err != nil {
		t.Fatalf("UpdateAuditCalls %s: %v", name, err)
	}
	return rec
}

func testAuditRoundTrip(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	prod := mustIngest(t, s, push("prod-eu", "uid-1", hash(1), "1.32"))
	mustIngest(t, s, push("dev", "uid-2", hash(2), "1.32"))
	if _, err := s.AuditCalls(t.Context(), prod.ClusterID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("AuditCalls before a batch: %v, want ErrNotFound", err)
	}
	var seen [][]byte
	first := mustUpdateAudit(t, s, "prod-eu", func(prev []byte) ([]byte, error) {
		seen = append(seen, prev)
		return []byte("one"), nil
	})
	second := mustUpdateAudit(t, s, "prod-eu", func(prev []byte) ([]byte, error) {
		seen = append(seen, prev)
		return []byte("two"), nil
	})
	if seen[0] != nil || string(seen[1]) != "one" {
		t.Errorf("fn saw %q then %q, want nil before the first batch, then the first batch's section", seen[0], seen[1])
	}
	if first.Batches != 1 || second.Batches != 2 || string(second.Section) != "two" || second.ClusterID != prod.ClusterID {
		t.Errorf("records = %+v then %+v, want batches 1 then 2, section two, cluster %d", first, second, prod.ClusterID)
	}
	again := mustOpen(t, open)
	got, err := again.AuditCalls(t.Context(), prod.ClusterID)
	if err != nil {
		t.Fatalf("AuditCalls on another handle: %v", err)
	}
	if string(got.Section) != "two" || got.Batches != 2 || got.FirstBatch != first.FirstBatch ||
		got.LastBatch.Before(got.FirstBatch) || got.FirstBatch.IsZero() {
		t.Errorf("AuditCalls = %+v, want section two, 2 batches, first batch at %v, last not before it", got, first.FirstBatch)
	}
	dev := clusterByName(t, s, "dev")
	if _, err := s.AuditCalls(t.Context(), dev.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AuditCalls of a cluster without batches: %v, want ErrNotFound", err)
	}
}

func testAuditUnknownCluster(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	called := false
	_, err := s.UpdateAuditCalls(t.Context(), "never-pushed", func([]byte) ([]byte, error) {
		called = true
		return []byte("x"), nil
	})
	if !errors.Is(err, store.ErrNotFound) || called {
		t.Errorf("UpdateAuditCalls of an unknown name: %v (fn called: %v), want ErrNotFound without calling fn", err, called)
	}
	res := mustIngest(t, s, push("never-pushed", "uid-1", hash(1), "1.32"))
	if _, err := s.AuditCalls(t.Context(), res.ClusterID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AuditCalls after a refused batch: %v, want ErrNotFound", err)
	}
}

func testAuditUpdateFails(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	res := mustIngest(t, s, push("prod-eu", "uid-1", hash(1), "1.32"))
	boom := errors.New("not an EventList")
	if _, err := s.UpdateAuditCalls(t.Context(), "prod-eu", func([]byte) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("UpdateAuditCalls with a failing fn: %v, want its error", err)
	}
	if _, err := s.AuditCalls(t.Context(), res.ClusterID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AuditCalls after a failed first batch: %v, want ErrNotFound", err)
	}
	mustUpdateAudit(t, s, "prod-eu", countBatch)
	if _, err := s.UpdateAuditCalls(t.Context(), "prod-eu", func([]byte) ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("UpdateAuditCalls with a failing fn: %v, want its error", err)
	}
	got, err := s.AuditCalls(t.Context(), res.ClusterID)
	if err != nil || string(got.Section) != "1" || got.Batches != 1 {
		t.Errorf("AuditCalls after a failed second batch = %+v, %v; want the first batch's section, 1 batch", got, err)
	}
}

// testAuditRace sends batches of one cluster from many goroutines on two handles (two
// replicas on Postgres): each batch reads the section and writes it back one more, so a
// batch that read a section another was replacing would be lost from the count.
func testAuditRace(t *testing.T, open Opener) {
	const goroutines, batches = 8, 10
	stores := []store.Store{mustOpen(t, open), mustOpen(t, open)}
	res := mustIngest(t, stores[0], push("raced", "uid-1", hash(1), "1.32"))
	var wg, start sync.WaitGroup
	start.Add(1)
	for g := range goroutines {
		wg.Go(func() {
			start.Wait()
			for range batches {
				if _, err := stores[g%2].UpdateAuditCalls(context.Background(), "raced", countBatch); err != nil {
					t.Errorf("UpdateAuditCalls: %v", err)
					return
				}
			}
		})
	}
	start.Done()
	wg.Wait()
	got, err := stores[1].AuditCalls(t.Context(), res.ClusterID)
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(goroutines * batches); string(got.Section) != want || got.Batches != goroutines*batches {
		t.Errorf("after %d concurrent batches: section counts %s over %d batches, want %s", goroutines*batches, got.Section, got.Batches, want)
	}
}

func testAuditDeleteAndRename(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	keep := mustIngest(t, s, push("keep", "uid-1", hash(1), "1.32"))
	gone := mustIngest(t, s, push("gone", "uid-2", hash(2), "1.32"))
	mustUpdateAudit(t, s, "keep", countBatch)
	mustUpdateAudit(t, s, "gone", countBatch)
	if err := s.DeleteCluster(ctx, gone.ClusterID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuditCalls(ctx, gone.ClusterID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("AuditCalls of a deleted cluster: %v, want ErrNotFound", err)
	}
	if _, err := s.UpdateAuditCalls(ctx, "gone", countBatch); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a batch for a deleted cluster's name: %v, want ErrNotFound", err)
	}
	if _, err := s.RenameCluster(ctx, keep.ClusterID, "kept"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateAuditCalls(ctx, "keep", countBatch); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a batch for the old name after a rename: %v, want ErrNotFound", err)
	}
	rec := mustUpdateAudit(t, s, "kept", countBatch)
	if rec.ClusterID != keep.ClusterID || string(rec.Section) != "2" || rec.Batches != 2 {
		t.Errorf("a batch for the new name = %+v, want cluster %d's record carried over, section 2, 2 batches", rec, keep.ClusterID)
	}
}
