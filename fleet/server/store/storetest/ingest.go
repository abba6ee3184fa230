package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// push is an Ingest of cluster name as uid with inventory hash h, evaluated at targets;
// each evaluation's score, counts and report derive from h and the target, so a read
// can be checked against what was pushed.
func push(name, uid, h string, targets ...string) store.Ingest {
	in := store.Ingest{
		ClusterName:   name,
		ClusterUID:    uid,
		Hash:          h,
		CollectedAt:   time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		AgentVersion:  "v0.9.0",
		KBVersion:     "kb-2026.11",
		ServerVersion: "v1.30.4",
		Inventory:     []byte("gzip:" + name + ":" + h),
	}
	for i, target := range targets {
		in.Evaluations = append(in.Evaluations, store.Evaluation{
			Target:      target,
			Verdict:     "ready",
			Score:       90 - i,
			Blockers:    i,
			Warnings:    len(h) % 7,
			Infos:       3,
			EvaluatedAt: time.Date(2026, 11, 30, 12, 0, 1, 0, time.UTC),
			Bundles:     []store.Bundle{{Name: "core", Revision: "r1"}},
			BundlesKey:  "core@r1",
			Report:      []byte("report:" + h + ":" + target),
		})
	}
	return in
}

func mustIngest(t *testing.T, s store.Store, in store.Ingest) store.IngestResult {
	t.Helper()
	res, err := s.Ingest(t.Context(), in)
	if err != nil {
		t.Fatalf("Ingest %s %s: %v", in.ClusterName, in.Hash, err)
	}
	return res
}

func testFirstIngest(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	in := push("prod-eu", "uid-1", hash(1), "1.31", "1.32")
	res := mustIngest(t, s, in)
	if res.Duplicate || res.SnapshotID == 0 || res.ClusterID == 0 {
		t.Fatalf("Ingest = %+v, want a new snapshot of a new cluster", res)
	}
	assertClusters(t, s, "prod-eu=uid-1")
	head, err := s.Head(ctx, "prod-eu")
	want := store.ClusterHead{ID: res.ClusterID, Name: "prod-eu", UID: "uid-1", ServerVersion: "v1.30.4",
		LatestSnapshotID: res.SnapshotID, LatestHash: hash(1)}
	if err != nil || head != want {
		t.Errorf("Head = %+v, %v; want %+v", head, err, want)
	}
	if _, err := s.Head(ctx, "unknown"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Head(unknown) error = %v, want ErrNotFound", err)
	}
	snap, err := s.LatestSnapshot(ctx, res.ClusterID)
	if err != nil {
		t.Fatalf("LatestSnapshot: %v", err)
	}
	if snap.ID != res.SnapshotID || snap.ClusterID != res.ClusterID || snap.Hash != hash(1) ||
		!bytes.Equal(snap.Inventory, in.Inventory) || !snap.CollectedAt.Equal(in.CollectedAt) ||
		snap.ReceivedAt.IsZero() || snap.AgentVersion != in.AgentVersion || snap.KBVersion != in.KBVersion ||
		snap.ServerVersion != in.ServerVersion {
		t.Errorf("LatestSnapshot = %+v, want what was pushed", snap)
	}
	for _, e := range in.Evaluations {
		got, err := s.LatestEvaluation(ctx, res.ClusterID, e.Target)
		if err != nil {
			t.Fatalf("LatestEvaluation %s: %v", e.Target, err)
		}
		if got.ID == 0 || got.ClusterID != res.ClusterID || got.SnapshotID != res.SnapshotID ||
			evalString(got.Evaluation) != evalString(e) {
			t.Errorf("LatestEvaluation %s = %+v, want %s of snapshot %d", e.Target, got, evalString(e), res.SnapshotID)
		}
	}
	for _, e := range in.Evaluations {
		latest, _ := s.LatestEvaluation(ctx, res.ClusterID, e.Target)
		got, err := s.Evaluation(ctx, latest.ID)
		if err != nil || got.ID != latest.ID || got.Target != e.Target || !bytes.Equal(got.Report, latest.Report) ||
			evalString(got.Evaluation) != evalString(e) {
			t.Errorf("Evaluation(%d) = %+v, %v; want the evaluation LatestEvaluation answers at %s", latest.ID, got, err, e.Target)
		}
	}
	if _, err := s.Evaluation(ctx, 1<<40); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Evaluation(unknown id) error = %v, want ErrNotFound", err)
	}
	if _, err := s.LatestEvaluation(ctx, res.ClusterID, "1.40"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LatestEvaluation(unevaluated target) error = %v, want ErrNotFound", err)
	}
	if _, err := s.LatestSnapshot(ctx, res.ClusterID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LatestSnapshot(unknown cluster) error = %v, want ErrNotFound", err)
	}
	assertFleet(t, s, "prod-eu 1.31 snap1 score90", "prod-eu 1.32 snap1 score89")
}

func testDuplicateIngest(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	first := mustIngest(t, s, push("prod-eu", "uid-1", hash(1), "1.31"))
	before := clusterByName(t, s, "prod-eu")
	changed := push("prod-eu", "uid-1", hash(1), "1.31", "1.32")
	changed.Inventory = []byte("another encoding, same hash")
	changed.Evaluations[0].Score = 10 // 1.31 is evaluated already: this one is dropped
	dup := mustIngest(t, s, changed)
	if !dup.Duplicate || dup.SnapshotID != first.SnapshotID || dup.ClusterID != first.ClusterID {
		t.Errorf("second Ingest = %+v, want a duplicate of %+v", dup, first)
	}
	if got := history(t, s, first.ClusterID, "1.31", 0); len(got) != 1 {
		t.Errorf("history after a duplicate has %d points, want 1", len(got))
	}
	if snap, err := s.LatestSnapshot(t.Context(), first.ClusterID); err != nil ||
		string(snap.Inventory) != "gzip:prod-eu:"+hash(1) {
		t.Errorf("LatestSnapshot after a duplicate = %q, %v; want the first inventory", snap.Inventory, err)
	}
	// 1.32 was not evaluated for that snapshot: the duplicate fills it in.
	assertFleet(t, s, "prod-eu 1.31 snap1 score90", "prod-eu 1.32 snap1 score89")
	if after := clusterByName(t, s, "prod-eu"); after.LastSeen.Before(before.LastSeen) {
		t.Errorf("LastSeen went back from %v to %v", before.LastSeen, after.LastSeen)
	}
}

func testChangedIngest(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	first := mustIngest(t, s, push("prod-eu", "uid-1", hash(1), "1.31", "1.32"))
	next := push("prod-eu", "uid-1", hash(2), "1.31")
	next.Evaluations[0].Verdict, next.Evaluations[0].Score = "blocked", 40
	next.ServerVersion = "" // keeps v1.30.4
	second := mustIngest(t, s, next)
	if second.Duplicate || second.SnapshotID <= first.SnapshotID || second.ClusterID != first.ClusterID {
		t.Fatalf("changed Ingest = %+v after %+v, want a newer snapshot of the same cluster", second, first)
	}
	head, err := s.Head(t.Context(), "prod-eu")
	if err != nil || head.LatestSnapshotID != second.SnapshotID || head.LatestHash != hash(2) ||
		head.ServerVersion != "v1.30.4" {
		t.Errorf("Head = %+v, %v; want snapshot %d, hash 2, v1.30.4 kept", head, err, second.SnapshotID)
	}
	if got := history(t, s, first.ClusterID, "1.31", 0); len(got) != 2 || got[0].SnapshotID != second.SnapshotID {
		t.Errorf("history at 1.31 = %+v, want the new point first of two", got)
	}
	// 1.32 was not evaluated again: its cell and latest evaluation stay on the first snapshot.
	if e, err := s.LatestEvaluation(t.Context(), first.ClusterID, "1.32"); err != nil || e.SnapshotID != first.SnapshotID {
		t.Errorf("LatestEvaluation 1.32 = snapshot %d, %v; want %d", e.SnapshotID, err, first.SnapshotID)
	}
	assertFleet(t, s, "prod-eu 1.31 snap2 score40", "prod-eu 1.32 snap1 score89")
}

func testHistoryOrder(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	var ids []int64
	for i := range 5 {
		ids = append(ids, mustIngest(t, s, push("c", "uid", hash(i), "1.31")).SnapshotID)
	}
	id := clusterByName(t, s, "c").ID
	for _, tc := range []struct {
		limit int
		want  []int64
	}{
		{0, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{2, []int64{ids[4], ids[3]}},
		{9, []int64{ids[4], ids[3], ids[2], ids[1], ids[0]}},
	} {
		var got []int64
		for _, p := range history(t, s, id, "1.31", tc.limit) {
			got = append(got, p.SnapshotID)
			if p.Target != "1.31" || p.BundlesKey != "core@r1" || p.EvaluationID == 0 || p.Infos != 3 {
				t.Errorf("history point %+v, want target 1.31, core@r1, an id, 3 infos", p)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("History limit %d = snapshots %v, want %v", tc.limit, got, tc.want)
		}
	}
	if got := history(t, s, id, "1.99", 0); len(got) != 0 {
		t.Errorf("History of an unevaluated target = %+v, want none", got)
	}
}

func testIngestOtherUID(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	first := mustIngest(t, s, push("prod-eu", "uid-1", hash(1), "1.31"))
	_, err := s.Ingest(t.Context(), push("prod-eu", "uid-2", hash(2), "1.31"))
	wantConflict(t, err, store.ReasonOtherUID)
	_, err = s.Ingest(t.Context(), push("prod-eu", "", hash(3), "1.31"))
	wantConflict(t, err, store.ReasonNoUID)
	head, err := s.Head(t.Context(), "prod-eu")
	if err != nil || head.LatestSnapshotID != first.SnapshotID || head.UID != "uid-1" {
		t.Errorf("Head after conflicts = %+v, %v; want uid-1 and snapshot %d", head, err, first.SnapshotID)
	}
	if got := history(t, s, first.ClusterID, "1.31", 0); len(got) != 1 {
		t.Errorf("history after conflicts has %d points, want 1", len(got))
	}
	assertFleet(t, s, "prod-eu 1.31 snap1 score90")
}

// testIngestRace pushes one inventory from goroutines on two handles at once, to a new
// cluster and then, with another inventory, to the registered one: each time exactly
// one ingest stores a snapshot and the others answer it as a duplicate.
func testIngestRace(t *testing.T, open Opener) {
	const goroutines = 12
	stores := []store.Store{mustOpen(t, open), mustOpen(t, open)}
	for round := range 2 {
		var (
			wg, start sync.WaitGroup
			mu        sync.Mutex
			results   []store.IngestResult
		)
		start.Add(1)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start.Wait()
				res, err := stores[g%2].Ingest(context.Background(), push("raced", "uid-1", hash(round), "1.31", "1.32"))
				if err != nil {
					t.Errorf("round %d: Ingest: %v", round, err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				results = append(results, res)
			}()
		}
		start.Done()
		wg.Wait()
		stored := map[int64]int{}
		var news int
		for _, r := range results {
			stored[r.SnapshotID]++
			if !r.Duplicate {
				news++
			}
		}
		if news != 1 || len(stored) != 1 {
			t.Errorf("round %d: %d new snapshots, answers name %d snapshots; want exactly one", round, news, len(stored))
		}
		id := clusterByName(t, stores[1], "raced").ID
		if got := history(t, stores[1], id, "1.32", 0); len(got) != round+1 {
			t.Errorf("round %d: %d history points, want %d", round, len(got), round+1)
		}
	}
	assertFleet(t, stores[0], "raced 1.31 snap2 score90", "raced 1.32 snap2 score89")
}

func testFleet(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	mustIngest(t, s, push("zeta", "z", hash(1), "1.31", "1.32"))
	mustIngest(t, s, push("Alpha", "A", hash(2), "1.30"))
	mustIngest(t, s, push("alpha", "a", hash(3), "1.32", "1.31"))
	mustIngest(t, s, push("zeta", "z", hash(4), "1.32"))
	mustIngest(t, s, push("never-evaluated", "n", hash(5)))
	// Byte order: "Alpha" before "alpha"; snapN counts each cluster's snapshots.
	assertFleet(t, s, "Alpha 1.30 snap1 score90", "alpha 1.31 snap1 score89", "alpha 1.32 snap1 score90",
		"zeta 1.31 snap1 score90", "zeta 1.32 snap2 score90")
	rows, err := s.Fleet(t.Context())
	if err != nil {
		t.Fatalf("Fleet: %v", err)
	}
	for _, r := range rows {
		if r.ClusterID == 0 || r.ClusterUID == "" || r.LastSeen.IsZero() || r.ServerVersion != "v1.30.4" ||
			r.EvaluationID == 0 || r.Verdict != "ready" || r.BundlesKey != "core@r1" || r.EvaluatedAt.IsZero() {
			t.Errorf("fleet row %+v: want the cluster's id, UID, last seen, version and the cell", r)
		}
	}
	zeta := rows[len(rows)-1].ClusterID
	cells, err := s.ClusterCells(t.Context(), zeta)
	if err != nil || len(cells) != 2 || cells[0].Target != "1.31" || cells[1].Target != "1.32" || cells[1].ClusterName != "zeta" {
		t.Errorf("ClusterCells(zeta) = %+v, %v; want zeta's two cells in target order", cells, err)
	}
	if none, err := s.ClusterCells(t.Context(), 9999); err != nil || len(none) != 0 {
		t.Errorf("ClusterCells(unknown) = %+v, %v; want none", none, err)
	}
}

func testFleetVersion(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	version := func() string {
		t.Helper()
		v, err := s.FleetVersion(t.Context())
		if err != nil {
			t.Fatalf("FleetVersion: %v", err)
		}
		return v
	}
	seen := map[string]string{version(): "an empty store"}
	changed := func(what string) {
		t.Helper()
		v := version()
		if before, ok := seen[v]; ok {
			t.Errorf("after %s the fleet version is %q, as after %s", what, v, before)
		}
		seen[v] = what
	}
	first := mustIngest(t, s, push("prod", "uid-1", hash(1), "1.31", "1.32"))
	changed("a first ingest")
	mustIngest(t, s, push("prod", "uid-1", hash(1), "1.31"))
	if v := version(); seen[v] != "a first ingest" {
		t.Errorf("a duplicate with nothing new changed the fleet version to %q", v)
	}
	mustIngest(t, s, push("prod", "uid-1", hash(2), "1.31"))
	changed("a cell moved to a new snapshot")
	mustIngest(t, s, push("staging", "uid-2", hash(3), "1.31"))
	changed("a second cluster")
	if err := s.DeleteCluster(t.Context(), first.ClusterID); err != nil {
		t.Fatal(err)
	}
	changed("a delete")
}

func testIngestReopen(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	first := mustIngest(t, s, push("kept", "uid-1", hash(1), "1.31"))
	second := mustIngest(t, s, push("kept", "uid-1", hash(2), "1.31"))
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	again := mustOpen(t, open)
	if res := mustIngest(t, again, push("kept", "uid-1", hash(2), "1.31")); !res.Duplicate ||
		res.SnapshotID != second.SnapshotID {
		t.Errorf("Ingest after reopening = %+v, want a duplicate of snapshot %d", res, second.SnapshotID)
	}
	if snap, err := again.LatestSnapshot(t.Context(), first.ClusterID); err != nil || snap.ID != second.SnapshotID {
		t.Errorf("LatestSnapshot after reopening = %d, %v; want %d", snap.ID, err, second.SnapshotID)
	}
	if e, err := again.LatestEvaluation(t.Context(), first.ClusterID, "1.31"); err != nil ||
		string(e.Report) != "report:"+hash(2)+":1.31" || len(e.Bundles) != 1 {
		t.Errorf("LatestEvaluation after reopening = %+v, %v; want the second report", e, err)
	}
	if got := history(t, again, first.ClusterID, "1.31", 0); len(got) != 2 {
		t.Errorf("history after reopening has %d points, want 2", len(got))
	}
	assertFleet(t, again, "kept 1.31 snap2 score90")
}

func history(t *testing.T, s store.Store, clusterID int64, target string, limit int) []store.HistoryPoint {
	t.Helper()
	ps, err := s.History(t.Context(), clusterID, target, limit)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	return ps
}

func clusterByName(t *testing.T, s store.Store, name string) store.Cluster {
	t.Helper()
	cs, err := s.Clusters(t.Context())
	if err != nil {
		t.Fatalf("Clusters: %v", err)
	}
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("cluster %q not registered", name)
	return store.Cluster{}
}

// assertFleet compares Fleet with want, "name target snapN scoreS" in order, where N
// numbers the cluster's snapshots from 1 in the order they were stored.
func assertFleet(t *testing.T, s store.Store, want ...string) {
	t.Helper()
	rows, err := s.Fleet(t.Context())
	if err != nil {
		t.Fatalf("Fleet: %v", err)
	}
	var got []string
	for _, r := range rows {
		n := snapshotOrdinal(t, s, r.ClusterID, r.SnapshotID)
		got = append(got, fmt.Sprintf("%s %s snap%d score%d", r.ClusterName, r.Target, n, r.Score))
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Fleet = %s, want %s", strings.Join(got, "|"), strings.Join(want, "|"))
	}
}

// snapshotOrdinal numbers snapshot id among the cluster's snapshots, from 1. A store
// keeps no list of snapshots yet, so it counts through the snapshot ids every target's
// history names, which in these tests covers every evaluated snapshot.
func snapshotOrdinal(t *testing.T, s store.Store, clusterID, id int64) int {
	t.Helper()
	seen := map[int64]bool{}
	for _, target := range []string{"1.30", "1.31", "1.32"} {
		for _, p := range history(t, s, clusterID, target, 0) {
			if p.SnapshotID <= id {
				seen[p.SnapshotID] = true
			}
		}
	}
	return len(seen)
}

func evalString(e store.Evaluation) string {
	return fmt.Sprintf("%s %s %d/%d/%d/%d %s %v %s %q", e.Target, e.Verdict, e.Score, e.Blockers, e.Warnings, e.Infos,
		e.EvaluatedAt.UTC().Format(time.RFC3339Nano), e.Bundles, e.BundlesKey, e.Report)
}
