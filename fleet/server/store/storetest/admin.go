package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

func testClusterByID(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	bound, err := s.BindCluster(ctx, "prod-eu", "uid-1")
	if err != nil {
		t.Fatalf("BindCluster: %v", err)
	}
	if bound.ServerVersion != "" || bound.LatestSnapshotID != 0 {
		t.Errorf("BindCluster before any snapshot = %+v, want no server version and no latest snapshot", bound)
	}
	res := mustIngest(t, s, push("prod-eu", "uid-1", hash(1), "1.31"))
	c, err := s.Cluster(ctx, bound.ID)
	if err != nil {
		t.Fatalf("Cluster: %v", err)
	}
	if c.ID != bound.ID || c.Name != "prod-eu" || c.UID != "uid-1" || c.ServerVersion != "v1.30.4" ||
		c.LatestSnapshotID != res.SnapshotID || !c.FirstSeen.Equal(bound.FirstSeen) || c.LastSeen.Before(c.FirstSeen) {
		t.Errorf("Cluster = %+v, want prod-eu with version v1.30.4 and latest snapshot %d", c, res.SnapshotID)
	}
	if listed := clusterByName(t, s, "prod-eu"); !reflect.DeepEqual(listed, c) {
		t.Errorf("Clusters lists %+v, want %+v as Cluster answers", listed, c)
	}
	if again, err := s.BindCluster(ctx, "prod-eu", "uid-1"); err != nil || !reflect.DeepEqual(again, c) {
		t.Errorf("BindCluster after the ingest = %+v, %v; want %+v", again, err, c)
	}
	if _, err := s.Cluster(ctx, bound.ID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Cluster(unknown) error = %v, want ErrNotFound", err)
	}
}

func testDeleteCluster(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	gone := mustIngest(t, s, push("gone", "uid-g", hash(1), "1.31", "1.32"))
	mustIngest(t, s, push("gone", "uid-g", hash(2), "1.31"))
	kept := mustIngest(t, s, push("kept", "uid-k", hash(3), "1.31"))
	mustToken(t, s, "gone", hash(10))
	revoked := mustToken(t, s, "gone", hash(11))
	if _, err := s.RevokeTokens(ctx, revoked.ID, false); err != nil {
		t.Fatalf("RevokeTokens: %v", err)
	}
	mustToken(t, s, "kept", hash(12))
	before := rowCounts(t, s, kept.ClusterID)

	if err := s.DeleteCluster(ctx, gone.ClusterID); err != nil {
		t.Fatalf("DeleteCluster: %v", err)
	}
	assertClusters(t, s, "kept=uid-k")
	assertFleet(t, s, "kept 1.31 snap1 score90")
	if got := rowCounts(t, s, gone.ClusterID); got != "0 snapshots, 0 evaluations, 0 fleet cells" {
		t.Errorf("rows of the deleted cluster: %s, want none", got)
	}
	if got := rowCounts(t, s, kept.ClusterID); got != before {
		t.Errorf("rows of the other cluster: %s, want %s as before", got, before)
	}
	if got := tokenList(t, s); got != "kept" {
		t.Errorf("tokens after the delete are for %q, want only kept's", got)
	}
	if _, err := s.IngestTokenCluster(ctx, hash(10)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("IngestTokenCluster(deleted cluster's token) error = %v, want ErrNotFound", err)
	}
	if _, err := s.Cluster(ctx, gone.ClusterID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Cluster(deleted) error = %v, want ErrNotFound", err)
	}
	if _, err := s.LatestSnapshot(ctx, gone.ClusterID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LatestSnapshot(deleted) error = %v, want ErrNotFound", err)
	}
	// The name is free again, for a new cluster: ids are never reused.
	again := mustIngest(t, s, push("gone", "uid-other", hash(1), "1.31"))
	if again.Duplicate || again.ClusterID == gone.ClusterID {
		t.Errorf("Ingest of the deleted name = %+v, want a new snapshot of a new cluster", again)
	}
}

func testDeleteUnknownCluster(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	c, err := s.BindCluster(t.Context(), "only", "uid-1")
	if err != nil {
		t.Fatalf("BindCluster: %v", err)
	}
	if err := s.DeleteCluster(t.Context(), c.ID+1000); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteCluster(unknown) error = %v, want ErrNotFound", err)
	}
	if err := s.DeleteCluster(t.Context(), c.ID); err != nil {
		t.Fatalf("DeleteCluster: %v", err)
	}
	if err := s.DeleteCluster(t.Context(), c.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("DeleteCluster twice: error = %v, want ErrNotFound", err)
	}
	assertClusters(t, s)
}

func testRenameCluster(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	mustIngest(t, s, push("old", "uid-1", hash(1), "1.31"))
	second := mustIngest(t, s, push("old", "uid-1", hash(2), "1.31"))
	mustToken(t, s, "old", hash(10))
	before, err := s.Cluster(ctx, second.ClusterID)
	if err != nil {
		t.Fatalf("Cluster: %v", err)
	}

	c, err := s.RenameCluster(ctx, second.ClusterID, "new")
	if err != nil {
		t.Fatalf("RenameCluster: %v", err)
	}
	want := before
	want.Name = "new"
	if !reflect.DeepEqual(c, want) {
		t.Errorf("RenameCluster = %+v, want %+v", c, want)
	}
	assertClusters(t, s, "new=uid-1")
	assertFleet(t, s, "new 1.31 snap2 score90")
	if got := history(t, s, c.ID, "1.31", 0); len(got) != 2 {
		t.Errorf("history after the rename has %d points, want 2", len(got))
	}
	if name, err := s.IngestTokenCluster(ctx, hash(10)); err != nil || name != "new" {
		t.Errorf("IngestTokenCluster after the rename = %q, %v; want new", name, err)
	}
	if _, err := s.Head(ctx, "old"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Head(old name) error = %v, want ErrNotFound", err)
	}
	if res := mustIngest(t, s, push("new", "uid-1", hash(2), "1.31")); !res.Duplicate ||
		res.SnapshotID != second.SnapshotID {
		t.Errorf("Ingest as the new name = %+v, want a duplicate of snapshot %d", res, second.SnapshotID)
	}
}

func testRenameToTakenName(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	a := mustIngest(t, s, push("a", "uid-a", hash(1), "1.31"))
	mustIngest(t, s, push("b", "uid-b", hash(2), "1.31"))
	mustToken(t, s, "a", hash(10))
	mustToken(t, s, "b", hash(11))
	_, err := s.RenameCluster(ctx, a.ClusterID, "b")
	wantConflict(t, err, store.ReasonNameTaken)
	assertClusters(t, s, "a=uid-a", "b=uid-b")
	assertFleet(t, s, "a 1.31 snap1 score90", "b 1.31 snap1 score90")
	if got := tokenList(t, s); got != "a b" {
		t.Errorf("tokens after the refused rename are for %q, want a b", got)
	}
}

func testRenameUnknownCluster(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	c, err := s.BindCluster(t.Context(), "only", "uid-1")
	if err != nil {
		t.Fatalf("BindCluster: %v", err)
	}
	if _, err := s.RenameCluster(t.Context(), c.ID+1000, "other"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RenameCluster(unknown) error = %v, want ErrNotFound", err)
	}
	assertClusters(t, s, "only=uid-1")
}

// testPrune stores, before a cutoff, for cluster a: s1 at 1.31 and 1.32, s2 and s3 at
// 1.31, s4 unevaluated (the latest); for b: t1 and t2 at 1.31; and after the cutoff c1 and
// c2 for c. Only s2 and t1 are old and neither latest nor a fleet cell's (1.31 → s3, 1.32
// → s1, b 1.31 → t2).
func testPrune(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	s1 := mustIngest(t, s, push("a", "uid-a", hash(1), "1.31", "1.32"))
	mustIngest(t, s, push("a", "uid-a", hash(2), "1.31"))
	s3 := mustIngest(t, s, push("a", "uid-a", hash(3), "1.31"))
	s4 := mustIngest(t, s, push("a", "uid-a", hash(4)))
	mustIngest(t, s, push("b", "uid-b", hash(5), "1.31"))
	t2 := mustIngest(t, s, push("b", "uid-b", hash(6), "1.31"))
	cutoff := pause()
	c1 := mustIngest(t, s, push("c", "uid-c", hash(7), "1.31"))
	c2 := mustIngest(t, s, push("c", "uid-c", hash(8), "1.31"))
	fleet := fleetRows(t, s)

	if n, err := s.Prune(ctx, cutoff); err != nil || n != 2 {
		t.Fatalf("Prune = %d, %v; want 2 deleted", n, err)
	}
	wantSnapshots(t, s, s1.ClusterID, "1.31", s3.SnapshotID, s1.SnapshotID)
	wantSnapshots(t, s, s1.ClusterID, "1.32", s1.SnapshotID)
	wantSnapshots(t, s, t2.ClusterID, "1.31", t2.SnapshotID)
	wantSnapshots(t, s, c1.ClusterID, "1.31", c2.SnapshotID, c1.SnapshotID)
	if snap, err := s.LatestSnapshot(ctx, s1.ClusterID); err != nil || snap.ID != s4.SnapshotID {
		t.Errorf("LatestSnapshot after pruning = %d, %v; want %d", snap.ID, err, s4.SnapshotID)
	}
	if got := fleetRows(t, s); got != fleet {
		t.Errorf("Fleet after pruning = %s, want %s as before", got, fleet)
	}
	if n, err := s.Prune(ctx, cutoff); err != nil || n != 0 {
		t.Errorf("Prune again = %d, %v; want 0", n, err)
	}
	// A cutoff after every ingest makes every snapshot old: only c1 is neither kept kind.
	if n, err := s.Prune(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("Prune with a future cutoff = %d, %v; want 1", n, err)
	}
	wantSnapshots(t, s, c1.ClusterID, "1.31", c2.SnapshotID)
}

// pause answers a time strictly between the store's clock readings before and after it.
func pause() time.Time {
	time.Sleep(10 * time.Millisecond)
	cutoff := time.Now()
	time.Sleep(10 * time.Millisecond)
	return cutoff
}

func testTeamsRoundTrip(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	in := push("prod", "uid-1", hash(1), "1.31", "1.32", "1.30")
	teams := map[string]store.TeamCell{
		"payments": {Verdict: "blocked", Score: 40, Blockers: 2, Warnings: 1},
		"search":   {Verdict: "ready", Score: 100},
	}
	in.Evaluations[0].Teams = teams
	in.Evaluations[2].Teams = map[string]store.TeamCell{} // empty reads back as none
	res := mustIngest(t, s, in)
	wantTeams(t, s, res.ClusterID, map[string]map[string]store.TeamCell{"1.31": teams, "1.32": nil, "1.30": nil})

	// A new snapshot moves the fleet cell's teams with it.
	next := push("prod", "uid-1", hash(2), "1.31")
	moved := map[string]store.TeamCell{"payments": {Verdict: "ready", Score: 95, Warnings: 3}}
	next.Evaluations[0].Teams = moved
	mustIngest(t, s, next)
	wantTeams(t, s, res.ClusterID, map[string]map[string]store.TeamCell{"1.31": moved, "1.32": nil, "1.30": nil})
	mustIngest(t, s, push("prod", "uid-1", hash(3), "1.31"))
	wantTeams(t, s, res.ClusterID, map[string]map[string]store.TeamCell{"1.31": nil, "1.32": nil, "1.30": nil})
}

// wantTeams checks, per target, the teams LatestEvaluation and the fleet cell answer.
func wantTeams(t *testing.T, s store.Store, clusterID int64, want map[string]map[string]store.TeamCell) {
	t.Helper()
	for target, teams := range want {
		e, err := s.LatestEvaluation(t.Context(), clusterID, target)
		if err != nil {
			t.Fatalf("LatestEvaluation at %s: %v", target, err)
		}
		if !sameTeams(e.Teams, teams) {
			t.Errorf("LatestEvaluation at %s: teams %#v, want %#v", target, e.Teams, teams)
		}
	}
	rows, err := s.Fleet(t.Context())
	if err != nil {
		t.Fatalf("Fleet: %v", err)
	}
	for _, r := range rows {
		if !sameTeams(r.Teams, want[r.Target]) {
			t.Errorf("fleet cell at %s: teams %#v, want %#v", r.Target, r.Teams, want[r.Target])
		}
	}
}

// sameTeams is equality where no team is nil, never an empty map.
func sameTeams(got, want map[string]store.TeamCell) bool {
	if len(want) == 0 {
		return got == nil
	}
	return maps.Equal(got, want)
}

func testIngestRevokedToken(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	tok := mustToken(t, s, "prod", hash(10))
	first := withToken(push("prod", "uid-1", hash(1), "1.31"), hash(10))
	res := mustIngest(t, s, first)
	if _, err := s.RevokeTokens(ctx, tok.ID, false); err != nil {
		t.Fatalf("RevokeTokens: %v", err)
	}
	for _, tc := range []struct{ what, cluster, token string }{
		{"a revoked token", "prod", hash(10)},
		{"an unknown token", "prod", hash(11)},
		{"a revoked token for a new cluster", "new", hash(10)},
	} {
		_, err := s.Ingest(ctx, withToken(push(tc.cluster, "uid-1", hash(2), "1.31"), tc.token))
		if !errors.Is(err, store.ErrRevoked) {
			t.Errorf("Ingest with %s: error = %v, want ErrRevoked", tc.what, err)
		}
	}
	assertClusters(t, s, "prod=uid-1")
	if head, err := s.Head(ctx, "prod"); err != nil || head.LatestSnapshotID != res.SnapshotID {
		t.Errorf("Head after refused ingests = %+v, %v; want latest snapshot %d", head, err, res.SnapshotID)
	}
	if got := history(t, s, res.ClusterID, "1.31", 0); len(got) != 1 {
		t.Errorf("history after refused ingests has %d points, want 1", len(got))
	}
}

func testIngestMovedToken(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	mustToken(t, s, "old", hash(10))
	mustToken(t, s, "other", hash(11))
	res := mustIngest(t, s, withToken(push("old", "uid-1", hash(1), "1.31"), hash(10)))
	if _, err := s.RenameCluster(ctx, res.ClusterID, "new"); err != nil {
		t.Fatalf("RenameCluster: %v", err)
	}
	_, err := s.Ingest(ctx, withToken(push("old", "uid-1", hash(2), "1.31"), hash(10)))
	wantConflict(t, err, store.ReasonTokenMoved)
	_, err = s.Ingest(ctx, withToken(push("new", "uid-1", hash(2), "1.31"), hash(11)))
	wantConflict(t, err, store.ReasonTokenMoved)
	assertClusters(t, s, "new=uid-1")
	assertFleet(t, s, "new 1.31 snap1 score90")
	if got := mustIngest(t, s, withToken(push("new", "uid-1", hash(2), "1.31"), hash(10))); got.Duplicate {
		t.Errorf("Ingest as the new name with the moved token = %+v, want a new snapshot", got)
	}
}

// testWithLock holds a lock and takes it again from inside, on the same handle: every
// backend refuses that. Whether another handle on the database is refused too is the
// backend's promise (PostgreSQL: yes, across replicas; SQLite: the lock is the handle's,
// a SQLite file having one server), so it is tested beside each backend, not here.
func testWithLock(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	calls := 0
	ran, err := s.WithLock(ctx, "prune", func(ctx context.Context) error {
		calls++
		inner, err := s.WithLock(ctx, "prune", func(context.Context) error {
			t.Error("a second taker of a held lock ran")
			return nil
		})
		if inner || err != nil {
			t.Errorf("WithLock of a held lock = %v, %v; want false, nil", inner, err)
		}
		other, err := s.WithLock(ctx, "other", func(context.Context) error { calls++; return nil })
		if !other || err != nil {
			t.Errorf("WithLock of another name while one is held = %v, %v; want true, nil", other, err)
		}
		return nil
	})
	if !ran || err != nil || calls != 2 {
		t.Fatalf("WithLock = %v, %v with %d calls; want true, nil, 2 calls", ran, err, calls)
	}
	boom := errors.New("boom")
	if ran, err := s.WithLock(ctx, "prune", func(context.Context) error { return boom }); !ran ||
		!errors.Is(err, boom) {
		t.Errorf("WithLock of a failing fn = %v, %v; want true and its error", ran, err)
	}
	if ran, err := s.WithLock(ctx, "prune", func(context.Context) error { return nil }); !ran || err != nil {
		t.Errorf("WithLock after release = %v, %v; want true, nil", ran, err)
	}
}

func withToken(in store.Ingest, tokenHash string) store.Ingest {
	in.TokenHash = tokenHash
	return in
}

func mustToken(t *testing.T, s store.Store, cluster, h string) store.Token {
	t.Helper()
	tok, err := s.CreateIngestToken(t.Context(), cluster, h, h[:8])
	if err != nil {
		t.Fatalf("CreateIngestToken for %s: %v", cluster, err)
	}
	return tok
}

// tokenList answers the clusters of every stored token, in id order, space-separated.
func tokenList(t *testing.T, s store.Store) string {
	t.Helper()
	toks, err := s.Tokens(t.Context())
	if err != nil {
		t.Fatalf("Tokens: %v", err)
	}
	var names []string
	for _, tok := range toks {
		names = append(names, tok.Cluster)
	}
	return strings.Join(names, " ")
}

// rowCounts counts the cluster's rows in the tables DeleteCluster empties by cascade,
// reading them directly: no Store method lists a deleted cluster's leftovers.
func rowCounts(t *testing.T, s store.Store, clusterID int64) string {
	t.Helper()
	var out []string
	for _, table := range []string{"snapshots", "evaluations", "fleet_cells"} {
		var n int
		if err := sqlDB(t, s).QueryRowContext(t.Context(),
			`SELECT count(*) FROM `+table+` WHERE cluster_id = $1`, clusterID).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		out = append(out, fmt.Sprintf("%d %s", n, strings.ReplaceAll(table, "_", " ")))
	}
	return strings.Join(out, ", ")
}

// wantSnapshots compares the snapshot ids of the cluster's history at target, newest first.
func wantSnapshots(t *testing.T, s store.Store, clusterID int64, target string, want ...int64) {
	t.Helper()
	var got []int64
	for _, p := range history(t, s, clusterID, target, 0) {
		got = append(got, p.SnapshotID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("cluster %d at %s: snapshots %v, want %v", clusterID, target, got, want)
	}
}

// fleetRows is Fleet as one comparable string of cluster, target and snapshot id.
func fleetRows(t *testing.T, s store.Store) string {
	t.Helper()
	rows, err := s.Fleet(t.Context())
	if err != nil {
		t.Fatalf("Fleet: %v", err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s %s %d", r.ClusterName, r.Target, r.SnapshotID))
	}
	return strings.Join(out, "|")
}

// testRenameRacingIngests renames a cluster on one handle while goroutines on another
// push as its old name with its token. Each push lands under the cluster before the
// rename or is refused after it (ReasonTokenMoved): none re-registers the old name, and
// none fails otherwise (on Postgres a deadlock between the token and cluster rows would).
func testRenameRacingIngests(t *testing.T, open Opener) {
	const (
		goroutines = 6
		perG       = 4
	)
	a, b := mustOpen(t, open), mustOpen(t, open)
	mustToken(t, a, "old", hash(100))
	first := mustIngest(t, a, withToken(push("old", "uid-1", hash(0), "1.31"), hash(100)))
	var (
		wg       sync.WaitGroup
		start    = make(chan struct{})
		mu       sync.Mutex
		stored   = 1
		unwanted []error
	)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range perG {
				in := withToken(push("old", "uid-1", hash(1+g*perG+i), "1.31"), hash(100))
				_, err := a.Ingest(context.Background(), in)
				mu.Lock()
				switch {
				case err == nil:
					stored++
				case !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), store.ReasonTokenMoved):
					unwanted = append(unwanted, err)
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	if _, err := b.RenameCluster(t.Context(), first.ClusterID, "new"); err != nil {
		t.Errorf("RenameCluster: %v", err)
	}
	wg.Wait()
	for _, err := range unwanted {
		t.Errorf("Ingest during the rename: %v, want success or ErrConflict (%s)", err, store.ReasonTokenMoved)
	}
	assertClusters(t, b, "new=uid-1")
	if got := history(t, b, first.ClusterID, "1.31", 0); len(got) != stored {
		t.Errorf("history has %d points, want the %d ingests that succeeded", len(got), stored)
	}
}

func testAgentBundles(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	bundles := func(name string) []store.Bundle { return clusterByName(t, s, name).AgentBundles }
	in := push("prod-eu", "uid-1", hash(1), "1.31")
	in.AgentBundles = []store.Bundle{{Name: "rules", Revision: "r1"}, {Name: "kb", Revision: "k1"}}
	res := mustIngest(t, s, in)
	if got := bundles("prod-eu"); !reflect.DeepEqual(got, in.AgentBundles) {
		t.Errorf("after the first push: %+v, want %+v", got, in.AgentBundles)
	}
	in.AgentBundles = []store.Bundle{{Name: "rules", Revision: "r1"}, {Name: "kb", Revision: "k2"}}
	if again := mustIngest(t, s, in); !again.Duplicate {
		t.Fatalf("the same hash again is not a duplicate: %+v", again)
	}
	if got := bundles("prod-eu"); !reflect.DeepEqual(got, in.AgentBundles) {
		t.Errorf("after a duplicate with a new kb: %+v, want %+v", got, in.AgentBundles)
	}
	if c, err := s.Cluster(ctx, res.ClusterID); err != nil || !reflect.DeepEqual(c.AgentBundles, in.AgentBundles) {
		t.Errorf("Cluster = %+v, %v", c, err)
	}
	in.AgentBundles = nil
	mustIngest(t, s, in)
	if got := bundles("prod-eu"); got != nil {
		t.Errorf("after an agent that names none: %+v, want nil", got)
	}
}
