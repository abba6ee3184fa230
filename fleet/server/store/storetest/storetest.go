// Package storetest is the conformance suite every store backend must pass (the pattern of
// Vault's physical.ExerciseBackend): a backend is done when Run is green on a real
// instance of it.
package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// Opener returns a new handle on the database that belongs to t: the first call for a t
// creates an empty database, later calls with the same t open that database again (a
// restart, or a second replica). It may be called from several goroutines at once. The
// runner closes what it opened when t ends; an error is the backend's answer to opening,
// returned as it is.
type Opener func(t *testing.T) (store.Store, error)

// Run runs the conformance suite, each case a sub-test with its own database.
func Run(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, open Opener)
	}{
		{"a first bind registers the name with its UID", testFirstBind},
		{"binding the same UID again returns the same cluster", testRebindSameUID},
		{"another UID for a bound name is a conflict", testOtherUID},
		{"a bind without a UID to a bound name is a conflict", testNoUIDToBound},
		{"a name registered without a UID is bound by the first UID after it", testUIDLessThenBound},
		{"binds racing on two handles bind each name to exactly one UID", testBindRace},
		{"clusters are listed in id order", testClustersOrder},
		{"an ingest token is found by its hash until revoked", testTokenLookup},
		{"a token hash stored twice is a conflict", testTokenTwice},
		{"listing tokens never shows a hash", testTokenList},
		{"revoking by id, twice, unknown and all", testRevoke},
		{"a read token is found by its hash until revoked", testReadTokenLookup},
		{"revoking read tokens by id, twice, unknown and all leaves ingest tokens", testReadTokenRevoke},
		{"listing read tokens never shows a hash and keeps teams sorted and distinct", testReadTokenList},
		{"a read token closes the read API for every handle, for good", testReadAPIClosed},
		{"reopening applies no migration twice and keeps the data", testReopen},
		{"handles opening an empty database together migrate it once", testConcurrentMigrate},
		{"a database with a newer schema version is refused", testSchemaTooNew},
		{"a first ingest stores the snapshot and one evaluation per target", testFirstIngest},
		{"the same hash again is a duplicate and adds only evaluations at new targets", testDuplicateIngest},
		{"a changed inventory is a new history point and moves the fleet cell", testChangedIngest},
		{"history is newest first and honours limit", testHistoryOrder},
		{"another UID's ingest is a conflict and stores nothing", testIngestOtherUID},
		{"concurrent ingests of one cluster with the same hash store exactly one snapshot", testIngestRace},
		{"the fleet lists every cluster and target once, and each cluster its own cells", testFleet},
		{"the fleet version changes with every change to a fleet cell and only then", testFleetVersion},
		{"a reopened handle reads every ingest back", testIngestReopen},
		{"a cluster is read by id with its server version and latest snapshot", testClusterByID},
		{"deleting a cluster removes its snapshots, evaluations, fleet cells and tokens and nothing of another's", testDeleteCluster},
		{"deleting an unknown cluster is not found", testDeleteUnknownCluster},
		{"renaming a cluster keeps its history and moves its tokens", testRenameCluster},
		{"renaming a cluster to a taken name is a conflict and changes nothing", testRenameToTakenName},
		{"renaming an unknown cluster is not found", testRenameUnknownCluster},
		{"a rename racing ingests with its token on another handle never re-registers the old name", testRenameRacingIngests},
		{"pruning keeps latest and fleet-cell snapshots and deletes the rest before the cutoff", testPrune},
		{"team rollups round-trip through ingest, the latest evaluation and the fleet", testTeamsRoundTrip},
		{"an ingest with a revoked or unknown token is refused and stores nothing", testIngestRevokedToken},
		{"an ingest whose token moved to another name is a conflict and stores nothing", testIngestMovedToken},
		{"a held lock is refused to a second taker and released after fn", testWithLock},
		{"every push records its agent's bundles on the cluster, a duplicate's too", testAgentBundles},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open) })
	}
	for _, tc := range reevaluationCases {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open) })
	}
	for _, tc := range outboxCases {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open) })
	}
	for _, tc := range auditCases {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open) })
	}
}

func mustOpen(t *testing.T, open Opener) store.Store {
	t.Helper()
	s, err := open(t)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

func testFirstBind(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	before := time.Now().Add(-time.Second)
	c, err := s.BindCluster(t.Context(), "prod-eu", "uid-1")
	if err != nil {
		t.Fatalf("BindCluster: %v", err)
	}
	if c.ID == 0 || c.Name != "prod-eu" || c.UID != "uid-1" {
		t.Errorf("BindCluster = %+v, want an id, prod-eu, uid-1", c)
	}
	if c.FirstSeen.Before(before) || c.LastSeen.Before(before) || c.FirstSeen.Location() != time.UTC {
		t.Errorf("FirstSeen %v, LastSeen %v: want UTC times from now", c.FirstSeen, c.LastSeen)
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

func testRebindSameUID(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	first, err := s.BindCluster(t.Context(), "prod-eu", "uid-1")
	if err != nil {
		t.Fatalf("first BindCluster: %v", err)
	}
	again, err := s.BindCluster(t.Context(), "prod-eu", "uid-1")
	if err != nil {
		t.Fatalf("second BindCluster: %v", err)
	}
	if !reflect.DeepEqual(again, first) {
		t.Errorf("second BindCluster = %+v, want %+v", again, first)
	}
}

func testOtherUID(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	if _, err := s.BindCluster(t.Context(), "prod-eu", "uid-1"); err != nil {
		t.Fatalf("BindCluster: %v", err)
	}
	_, err := s.BindCluster(t.Context(), "prod-eu", "uid-2")
	wantConflict(t, err, store.ReasonOtherUID)
	assertClusters(t, s, "prod-eu=uid-1")
}

func testNoUIDToBound(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	if _, err := s.BindCluster(t.Context(), "prod-eu", "uid-1"); err != nil {
		t.Fatalf("BindCluster: %v", err)
	}
	_, err := s.BindCluster(t.Context(), "prod-eu", "")
	wantConflict(t, err, store.ReasonNoUID)
	assertClusters(t, s, "prod-eu=uid-1")
}

func testUIDLessThenBound(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	first, err := s.BindCluster(ctx, "legacy", "")
	if err != nil || first.UID != "" {
		t.Fatalf("BindCluster without UID = %+v, %v; want a UID-less cluster", first, err)
	}
	if again, err := s.BindCluster(ctx, "legacy", ""); err != nil || again.ID != first.ID {
		t.Fatalf("a second UID-less BindCluster = %+v, %v; want the same cluster (UID-less agents share)", again, err)
	}
	bound, err := s.BindCluster(ctx, "legacy", "uid-1")
	if err != nil || bound.ID != first.ID || bound.UID != "uid-1" {
		t.Fatalf("BindCluster with a UID = %+v, %v; want cluster %d bound to uid-1", bound, err, first.ID)
	}
	_, err = s.BindCluster(ctx, "legacy", "uid-2")
	wantConflict(t, err, store.ReasonOtherUID)
	_, err = s.BindCluster(ctx, "legacy", "")
	wantConflict(t, err, store.ReasonNoUID)
	assertClusters(t, s, "legacy=uid-1")
}

// testBindRace has goroutines on two handles bind the same names at once, half with one
// UID, half with another; every other name was registered without a UID first, so its
// race is on binding the UID. Each name must end bound to one UID, every bind with that
// UID succeeding and every other failing with ErrConflict.
func testBindRace(t *testing.T, open Opener) {
	const (
		names      = 10
		perHandle  = 8
		handles    = 2
		goroutines = perHandle * handles
	)
	stores := []store.Store{mustOpen(t, open), mustOpen(t, open)}
	for n := 1; n < names; n += 2 {
		if _, err := stores[0].BindCluster(t.Context(), fmt.Sprintf("race-%d", n), ""); err != nil {
			t.Fatalf("BindCluster without UID: %v", err)
		}
	}
	var (
		mu   sync.Mutex
		won  = map[string]map[string]int{} // name → uid → successful binds
		lost = map[string]int{}
		bad  []error
	)
	for n := range names {
		name := fmt.Sprintf("race-%d", n)
		var start, done sync.WaitGroup
		start.Add(1)
		for g := range goroutines {
			done.Add(1)
			go func() {
				defer done.Done()
				s, uid := stores[g%handles], fmt.Sprintf("uid-%d", g/handles%2)
				start.Wait()
				c, err := s.BindCluster(context.Background(), name, uid)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && c.UID == uid && c.Name == name:
					if won[name] == nil {
						won[name] = map[string]int{}
					}
					won[name][uid]++
				case errors.Is(err, store.ErrConflict):
					lost[name]++
				default:
					bad = append(bad, fmt.Errorf("%s as %s: %+v, %v", name, uid, c, err))
				}
			}()
		}
		start.Done()
		done.Wait()
	}
	for _, err := range bad {
		t.Errorf("unexpected answer: %v", err)
	}
	var want []string
	for n := range names {
		name := fmt.Sprintf("race-%d", n)
		if len(won[name]) != 1 {
			t.Errorf("%s: winning UIDs %v, want exactly one", name, won[name])
			continue
		}
		for uid, wins := range won[name] {
			if wins != goroutines/2 || lost[name] != goroutines/2 {
				t.Errorf("%s: %d binds as %s won and %d lost, want %d and %d", name, wins, uid, lost[name],
					goroutines/2, goroutines/2)
			}
			want = append(want, name+"="+uid)
		}
	}
	got := clusterList(t, stores[1])
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Clusters = %v, want %v", got, want)
	}
}

func testClustersOrder(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	for _, name := range []string{"zeta", "alpha", "mid"} {
		if _, err := s.BindCluster(t.Context(), name, name+"-uid"); err != nil {
			t.Fatalf("BindCluster %s: %v", name, err)
		}
	}
	assertClusters(t, s, "zeta=zeta-uid", "alpha=alpha-uid", "mid=mid-uid")
}

func testTokenLookup(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	tok, err := s.CreateIngestToken(ctx, "not-pushed-yet", hash(1), "abcd1234")
	if err != nil {
		t.Fatalf("CreateIngestToken: %v", err)
	}
	if tok.ID == 0 || tok.Cluster != "not-pushed-yet" || tok.Prefix != "abcd1234" || tok.Created.IsZero() ||
		!tok.Revoked.IsZero() {
		t.Errorf("CreateIngestToken = %+v, want an id, the cluster, the prefix, created, not revoked", tok)
	}
	if name, err := s.IngestTokenCluster(ctx, hash(1)); err != nil || name != "not-pushed-yet" {
		t.Errorf("IngestTokenCluster = %q, %v; want not-pushed-yet", name, err)
	}
	if _, err := s.IngestTokenCluster(ctx, hash(2)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("IngestTokenCluster(unknown) error = %v, want ErrNotFound", err)
	}
	if n, err := s.RevokeTokens(ctx, tok.ID, false); err != nil || n != 1 {
		t.Fatalf("RevokeTokens = %d, %v; want 1", n, err)
	}
	if _, err := s.IngestTokenCluster(ctx, hash(1)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("IngestTokenCluster(revoked) error = %v, want ErrNotFound", err)
	}
}

func testTokenTwice(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	if _, err := s.CreateIngestToken(t.Context(), "a", hash(1), "prefix01"); err != nil {
		t.Fatalf("CreateIngestToken: %v", err)
	}
	_, err := s.CreateIngestToken(t.Context(), "b", hash(1), "prefix01")
	wantConflict(t, err, store.ReasonTokenTaken)
}

func testTokenList(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	var ids []int64
	for i, cluster := range []string{"b", "a", "b"} {
		tok, err := s.CreateIngestToken(ctx, cluster, hash(i), fmt.Sprintf("prefix%02d", i))
		if err != nil {
			t.Fatalf("CreateIngestToken: %v", err)
		}
		ids = append(ids, tok.ID)
	}
	if _, err := s.RevokeTokens(ctx, ids[1], false); err != nil {
		t.Fatalf("RevokeTokens: %v", err)
	}
	toks, err := s.Tokens(ctx)
	if err != nil {
		t.Fatalf("Tokens: %v", err)
	}
	var got []string
	for i, tok := range toks {
		if i >= len(ids) || tok.ID != ids[i] {
			t.Errorf("Tokens[%d].ID = %d, want the ids created, in order: %v", i, tok.ID, ids)
		}
		state := "active"
		if !tok.Revoked.IsZero() {
			state = "revoked"
		}
		got = append(got, fmt.Sprintf("%s %s %s", tok.Cluster, tok.Prefix, state))
		for i := range 3 {
			if strings.Contains(fmt.Sprintf("%#v", tok), hash(i)) {
				t.Errorf("Tokens shows a stored hash: %#v", tok)
			}
		}
	}
	want := "b prefix00 active|a prefix01 revoked|b prefix02 active"
	if strings.Join(got, "|") != want {
		t.Errorf("Tokens = %q, want %q", strings.Join(got, "|"), want)
	}
}

// checkRevoking revokes, of three active tokens whose newest is last, that one, it again, an
// unknown id, then all twice, and checks each count and error.
func checkRevoking(t *testing.T, name string, last int64, revoke func(id int64, all bool) (int, error)) {
	t.Helper()
	for _, tc := range []struct {
		what    string
		id      int64
		all     bool
		want    int
		wantErr error
	}{
		{"revoking the last token", last, false, 1, nil},
		{"revoking it again", last, false, 0, nil},
		{"revoking an unknown id", last + 1000, false, 0, store.ErrNotFound},
		{"revoking all", 0, true, 2, nil},
		{"revoking all again", 0, true, 0, nil},
	} {
		n, err := revoke(tc.id, tc.all)
		if n != tc.want || !errors.Is(err, tc.wantErr) || (err != nil) != (tc.wantErr != nil) {
			t.Errorf("%s: %s = %d, %v; want %d, %v", tc.what, name, n, err, tc.want, tc.wantErr)
		}
	}
}

func testRevoke(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	var last int64
	for i := range 3 {
		tok, err := s.CreateIngestToken(ctx, "c", hash(i), "prefix00")
		if err != nil {
			t.Fatalf("CreateIngestToken: %v", err)
		}
		last = tok.ID
	}
	checkRevoking(t, "RevokeTokens", last, func(id int64, all bool) (int, error) { return s.RevokeTokens(ctx, id, all) })
	for i := range 3 {
		if _, err := s.IngestTokenCluster(ctx, hash(i)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("token %d after revoking all: %v, want ErrNotFound", i, err)
		}
	}
}

func testReopen(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	if _, err := s.BindCluster(t.Context(), "kept", "uid-1"); err != nil {
		t.Fatalf("BindCluster: %v", err)
	}
	versions := schemaVersions(t, s)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	again := mustOpen(t, open)
	if got := schemaVersions(t, again); got != versions {
		t.Errorf("schema_migrations after reopening = %s, want %s as before", got, versions)
	}
	assertClusters(t, again, "kept=uid-1")
}

func testConcurrentMigrate(t *testing.T, open Opener) {
	const handles = 4
	var (
		wg     sync.WaitGroup
		stores [handles]store.Store
		errs   [handles]error
	)
	for i := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = open(t)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	for i, s := range stores {
		if _, err := s.BindCluster(t.Context(), "shared", "uid-1"); err != nil {
			t.Errorf("BindCluster on handle %d: %v", i, err)
		}
	}
	if got, want := schemaVersions(t, stores[0]), schemaVersions(t, stores[handles-1]); got != want || got == "" {
		t.Errorf("schema_migrations = %q and %q, want one history", got, want)
	}
	assertClusters(t, stores[0], "shared=uid-1")
}

func testSchemaTooNew(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	known := schemaVersions(t, s)
	if _, err := sqlDB(t, s).ExecContext(t.Context(),
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'from_the_future', 0)`); err != nil {
		t.Fatalf("plant a future schema version: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, err := open(t)
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("open error = %v, want ErrSchemaTooNew", err)
	}
	want := fmt.Sprintf("database schema version 9999 is newer than this binary (knows %d): run a newer upgradescope",
		strings.Count(known, ",")+1)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("open error = %q, want it to say %q", err, want)
	}
}

func wantConflict(t *testing.T, err error, reason string) {
	t.Helper()
	if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), reason) {
		t.Errorf("error = %v, want ErrConflict saying %q", err, reason)
	}
}

// assertClusters compares Clusters with want, "name=uid" in id order.
func assertClusters(t *testing.T, s store.Store, want ...string) {
	t.Helper()
	if got := clusterList(t, s); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Clusters = %s, want %s", strings.Join(got, " "), strings.Join(want, " "))
	}
}

// clusterList answers Clusters as "name=uid" and checks their ids ascend.
func clusterList(t *testing.T, s store.Store) []string {
	t.Helper()
	cs, err := s.Clusters(t.Context())
	if err != nil {
		t.Fatalf("Clusters: %v", err)
	}
	var got []string
	for i, c := range cs {
		if i > 0 && c.ID <= cs[i-1].ID {
			t.Errorf("Clusters not in id order: %d after %d", c.ID, cs[i-1].ID)
		}
		got = append(got, c.Name+"="+c.UID)
	}
	return got
}

func schemaVersions(t *testing.T, s store.Store) string {
	t.Helper()
	rows, err := sqlDB(t, s).QueryContext(t.Context(), `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	defer rows.Close()
	var vs []string
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatalf("read schema_migrations: %v", err)
		}
		vs = append(vs, fmt.Sprint(v))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	return strings.Join(vs, ",")
}

func sqlDB(t *testing.T, s store.Store) *sql.DB {
	t.Helper()
	b, ok := s.(interface{ SQLDB() *sql.DB })
	if !ok {
		t.Fatalf("%T has no SQLDB method: the suite cannot read its schema_migrations", s)
	}
	return b.SQLDB()
}

func hash(i int) string { return fmt.Sprintf("%064x", 0xfeed0000+i) }
