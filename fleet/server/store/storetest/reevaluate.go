package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// reevaluation is cluster's snapshot evaluated again at targets with bundle set core@r2:
// each score is 50 less than push's, so a read tells the two sets apart.
func reevaluation(clusterID, snapshotID int64, h string, targets ...string) store.Reevaluation {
	re := store.Reevaluation{ClusterID: clusterID, SnapshotID: snapshotID}
	for _, ev := range push("", "", h, targets...).Evaluations {
		ev.Score -= 50
		ev.Bundles = []store.Bundle{{Name: "core", Revision: "r2"}}
		ev.BundlesKey = "core@r2"
		ev.Report = []byte("r2:" + string(ev.Report))
		re.Evaluations = append(re.Evaluations, ev)
	}
	return re
}

// withNotification adds a message to sinks, its delivery id named by tag.
func withNotification(re store.Reevaluation, tag string, sinks ...string) store.Reevaluation {
	re.Notification = &store.Notification{DeliveryID: fmt.Sprintf("%032s", tag), Body: []byte(`{"re":"` + tag + `"}`),
		Sinks: sinks}
	return re
}

// reevaluationCases run under Run.
var reevaluationCases = []struct {
	name string
	test func(t *testing.T, open Opener)
}{
	{"a re-evaluation stores the latest snapshot's evaluations beside the old set's and moves the fleet cells", testReevaluate},
	{"a re-evaluation stored already, by this handle or another, stores nothing and enqueues nothing", testReevaluateTwice},
	{"a re-evaluation of a snapshot a push superseded stores nothing", testReevaluateSuperseded},
	{"a re-evaluation against a moved baseline stores nothing", testReevaluateBaselineMoved},
	{"a re-evaluation of an unknown cluster is not found", testReevaluateUnknownCluster},
	{"a duplicate push after a re-evaluation adds only targets the new set lacks", testDuplicateAfterReevaluate},
	{"a re-evaluation with a set rolled back to replaces that set's evaluation and takes the fleet cells back", testReevaluateRollback},
	{"a re-evaluation made later with the same set replaces the evaluation the fleet cell shows, as the newest", testReevaluateNextDay},
	{"pruning deletes a kept snapshot's evaluations a newer bundle set's superseded", testPruneSupersededEvaluations},
}

// A cluster's latest snapshot is never pruned, so the evaluations each new bundle set adds
// to it would gather for ever: those a newer one of the same target superseded go with
// the retention; the cell's and the history since the cutoff stay.
func testPruneSupersededEvaluations(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	res := mustIngest(t, s, push("prod", "uid", hash(1), "1.31"))
	if n, err := s.Reevaluate(t.Context(), reevaluation(res.ClusterID, res.SnapshotID, hash(1), "1.31")); err != nil || n != 1 {
		t.Fatalf("Reevaluate = %d, %v; want 1 stored", n, err)
	}
	if got := keys(history(t, s, res.ClusterID, "1.31", 0)); got != "core@r2 core@r1" {
		t.Fatalf("history before pruning = %s", got)
	}
	if n, err := s.Prune(t.Context(), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)); err != nil || n != 0 {
		t.Fatalf("Prune before the evaluations were made = %d, %v", n, err)
	}
	if got := keys(history(t, s, res.ClusterID, "1.31", 0)); got != "core@r2 core@r1" {
		t.Errorf("history after pruning before both = %s, want both kept", got)
	}
	if n, err := s.Prune(t.Context(), time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("Prune = %d, %v; want the latest snapshot kept", n, err)
	}
	if got := keys(history(t, s, res.ClusterID, "1.31", 0)); got != "core@r2" {
		t.Errorf("history after pruning = %s, want only the fleet cell's evaluation", got)
	}
	assertFleet(t, s, "prod 1.31 snap1 score40")
}

func testReevaluate(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	res := mustIngest(t, s, push("prod", "uid", hash(1), "1.31", "1.32"))
	re := withNotification(reevaluation(res.ClusterID, res.SnapshotID, hash(1), "1.31", "1.32"), "r2", "webhook")
	n, err := s.Reevaluate(t.Context(), re)
	if err != nil || n != 2 {
		t.Fatalf("Reevaluate = %d, %v; want both evaluations stored", n, err)
	}
	assertFleet(t, s, "prod 1.31 snap1 score40", "prod 1.32 snap1 score39")
	rows, err := s.Fleet(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.BundlesKey != "core@r2" || r.SnapshotID != res.SnapshotID {
			t.Errorf("fleet cell %s: key %s snapshot %d, want core@r2 on snapshot %d", r.Target, r.BundlesKey, r.SnapshotID, res.SnapshotID)
		}
	}
	if got := keys(history(t, s, res.ClusterID, "1.31", 0)); got != "core@r2 core@r1" {
		t.Errorf("history at 1.31 = %s, want the new set's evaluation above the old one's", got)
	}
	latest, err := s.LatestEvaluation(t.Context(), res.ClusterID, "1.32")
	if err != nil || evalString(latest.Evaluation) != evalString(re.Evaluations[1]) {
		t.Errorf("LatestEvaluation at 1.32 = %s, %v; want %s", evalString(latest.Evaluation), err, evalString(re.Evaluations[1]))
	}
	assertQueued(t, s, "webhook=1")
}

func testReevaluateTwice(t *testing.T, open Opener) {
	a, b := mustOpen(t, open), mustOpen(t, open)
	res := mustIngest(t, a, push("prod", "uid", hash(1), "1.31"))
	if n, err := a.Reevaluate(t.Context(), reevaluation(res.ClusterID, res.SnapshotID, hash(1), "1.31")); err != nil || n != 1 {
		t.Fatalf("first Reevaluate = %d, %v; want 1 stored", n, err)
	}
	for name, s := range map[string]store.Store{"this handle": a, "another handle": b} {
		again := withNotification(reevaluation(res.ClusterID, res.SnapshotID, hash(1), "1.31"), name, "webhook")
		again.Evaluations[0].Score = 1
		if n, err := s.Reevaluate(t.Context(), again); err != nil || n != 0 {
			t.Errorf("Reevaluate again on %s = %d, %v; want 0, nil", name, n, err)
		}
	}
	assertFleet(t, a, "prod 1.31 snap1 score40")
	if got := keys(history(t, a, res.ClusterID, "1.31", 0)); got != "core@r2 core@r1" {
		t.Errorf("history at 1.31 = %s, want one evaluation per bundle set", got)
	}
	assertQueued(t, a, "")
}

func testReevaluateSuperseded(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	first := mustIngest(t, s, push("prod", "uid", hash(1), "1.31"))
	mustIngest(t, s, push("prod", "uid", hash(2), "1.31"))
	stale := withNotification(reevaluation(first.ClusterID, first.SnapshotID, hash(1), "1.31"), "stale", "webhook")
	n, err := s.Reevaluate(t.Context(), stale)
	if !errors.Is(err, store.ErrSuperseded) || n != 0 {
		t.Fatalf("Reevaluate of a superseded snapshot = %d, %v; want 0, ErrSuperseded", n, err)
	}
	assertFleet(t, s, "prod 1.31 snap2 score90")
	if got := keys(history(t, s, first.ClusterID, "1.31", 0)); got != "core@r1 core@r1" {
		t.Errorf("history at 1.31 = %s, want the two pushes' evaluations only", got)
	}
	assertQueued(t, s, "")
}

func testReevaluateBaselineMoved(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	res := mustIngest(t, s, push("prod", "uid", hash(1), "1.31"))
	base, err := s.LastDecidedEvaluation(t.Context(), res.ClusterID, "1.31")
	if err != nil {
		t.Fatal(err)
	}
	re := withNotification(reevaluation(res.ClusterID, res.SnapshotID, hash(1), "1.31"), "moved", "webhook")
	re.Baselines = map[string]int64{"1.31": 0}
	if n, err := s.Reevaluate(t.Context(), re); !errors.Is(err, store.ErrBaselineMoved) || n != 0 {
		t.Fatalf("Reevaluate against a moved baseline = %d, %v; want 0, ErrBaselineMoved", n, err)
	}
	assertFleet(t, s, "prod 1.31 snap1 score90")
	assertQueued(t, s, "")
	re.Baselines = map[string]int64{"1.31": base.ID}
	if n, err := s.Reevaluate(t.Context(), re); err != nil || n != 1 {
		t.Fatalf("Reevaluate against the current baseline = %d, %v; want 1 stored", n, err)
	}
	assertQueued(t, s, "webhook=1")
}

func testReevaluateUnknownCluster(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	if _, err := s.Reevaluate(t.Context(), reevaluation(404, 1, hash(1), "1.31")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Reevaluate of an unknown cluster: %v, want ErrNotFound", err)
	}
}

func testDuplicateAfterReevaluate(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	res := mustIngest(t, s, push("prod", "uid", hash(1), "1.31"))
	if _, err := s.Reevaluate(t.Context(), reevaluation(res.ClusterID, res.SnapshotID, hash(1), "1.31")); err != nil {
		t.Fatal(err)
	}
	// The agent pushes the same inventory; the server, on r2 now, evaluated it at both.
	dup := push("prod", "uid", hash(1))
	dup.Evaluations = reevaluation(res.ClusterID, res.SnapshotID, hash(1), "1.31", "1.32").Evaluations
	if got := mustIngest(t, s, dup); !got.Duplicate {
		t.Fatalf("Ingest = %+v, want a duplicate", got)
	}
	assertFleet(t, s, "prod 1.31 snap1 score40", "prod 1.32 snap1 score39")
	if got := keys(history(t, s, res.ClusterID, "1.31", 0)); got != "core@r2 core@r1" {
		t.Errorf("history at 1.31 = %s, want one evaluation per bundle set", got)
	}
}

func keys(points []store.HistoryPoint) string {
	var out []string
	for _, p := range points {
		out = append(out, p.BundlesKey)
	}
	return strings.Join(out, " ")
}

func testReevaluateRollback(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	first := push("prod", "uid", hash(1), "1.31")
	res := mustIngest(t, s, first)
	if _, err := s.Reevaluate(t.Context(), reevaluation(res.ClusterID, res.SnapshotID, hash(1), "1.31")); err != nil {
		t.Fatal(err)
	}
	back := withNotification(store.Reevaluation{ClusterID: res.ClusterID, SnapshotID: res.SnapshotID,
		Evaluations: first.Evaluations}, "back", "webhook")
	if n, err := s.Reevaluate(t.Context(), back); err != nil || n != 1 {
		t.Fatalf("Reevaluate with the first set again = %d, %v; want it stored (1)", n, err)
	}
	assertFleet(t, s, "prod 1.31 snap1 score90")
	if got := keys(history(t, s, res.ClusterID, "1.31", 0)); got != "core@r1 core@r2" {
		t.Errorf("history at 1.31 = %s, want the first set's evaluation, now the newest, above r2's", got)
	}
	for name, read := range map[string]func(context.Context, int64, string) (store.EvaluationRecord, error){
		"LatestEvaluation": s.LatestEvaluation, "LastDecidedEvaluation": s.LastDecidedEvaluation} {
		if ev, err := read(t.Context(), res.ClusterID, "1.31"); err != nil || ev.BundlesKey != "core@r1" {
			t.Errorf("%s after the rollback = %s, %v; want the first set's", name, ev.BundlesKey, err)
		}
	}
	assertQueued(t, s, "webhook=1")
	back.Notification.DeliveryID = fmt.Sprintf("%032s", "again")
	if n, err := s.Reevaluate(t.Context(), back); err != nil || n != 0 {
		t.Errorf("Reevaluate with the first set a second time = %d, %v; want 0, nil", n, err)
	}
	assertQueued(t, s, "webhook=1")
}

// The server judges an unchanged cluster again each day with the same bundle set: the new
// day's evaluation takes the old one's place, under a new id (the newest, which the fleet's
// version, the latest evaluation and the notification baseline go by), and its fleet cell
// is written again. One made at the same time or earlier stores nothing.
func testReevaluateNextDay(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	first := push("prod", "uid", hash(1), "1.31")
	res := mustIngest(t, s, first)
	before, err := s.FleetVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	old, err := s.LatestEvaluation(t.Context(), res.ClusterID, "1.31")
	if err != nil {
		t.Fatal(err)
	}
	next := first.Evaluations[0]
	next.EvaluatedAt = next.EvaluatedAt.Add(24 * time.Hour)
	next.Verdict, next.Score, next.Blockers = "blocked", 75, 1
	re := withNotification(store.Reevaluation{ClusterID: res.ClusterID, SnapshotID: res.SnapshotID,
		Evaluations: []store.Evaluation{next}}, "day2", "webhook")
	if n, err := s.Reevaluate(t.Context(), re); err != nil || n != 1 {
		t.Fatalf("Reevaluate on the next day = %d, %v; want it stored (1)", n, err)
	}
	assertFleet(t, s, "prod 1.31 snap1 score75")
	if after, err := s.FleetVersion(t.Context()); err != nil || after == before {
		t.Errorf("FleetVersion = %q, %v; want it changed from %q, so cached fleets are read again", after, err, before)
	}
	hist := history(t, s, res.ClusterID, "1.31", 0)
	if len(hist) != 1 || hist[0].Verdict != "blocked" || !hist[0].EvaluatedAt.Equal(next.EvaluatedAt) {
		t.Errorf("history at 1.31 = %+v; want one point, the next day's", hist)
	}
	for name, read := range map[string]func(context.Context, int64, string) (store.EvaluationRecord, error){
		"LatestEvaluation": s.LatestEvaluation, "LastDecidedEvaluation": s.LastDecidedEvaluation} {
		if ev, err := read(t.Context(), res.ClusterID, "1.31"); err != nil || ev.ID <= old.ID || ev.Verdict != "blocked" {
			t.Errorf("%s after the next day's = id %d %s, %v; want a newer id than %d, blocked", name, ev.ID, ev.Verdict, err, old.ID)
		}
	}
	assertQueued(t, s, "webhook=1")
	for _, at := range []time.Time{next.EvaluatedAt, first.Evaluations[0].EvaluatedAt} {
		again := next
		again.EvaluatedAt, again.Verdict, again.Score = at, "ready", 10
		re := store.Reevaluation{ClusterID: res.ClusterID, SnapshotID: res.SnapshotID, Evaluations: []store.Evaluation{again}}
		if n, err := s.Reevaluate(t.Context(), re); err != nil || n != 0 {
			t.Errorf("Reevaluate made at %s = %d, %v; want nothing stored", at, n, err)
		}
	}
	assertFleet(t, s, "prod 1.31 snap1 score75")
}
