package storetest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// outboxCases are the conformance cases of the notification outbox and its baselines.
var outboxCases = []struct {
	name string
	test func(t *testing.T, open Opener)
}{
	{"the last decided evaluation skips unknown ones and is not found before one", testLastDecided},
	{"an ingest enqueues its notification once per sink with the evaluations", testEnqueue},
	{"a duplicate that stores no evaluation enqueues nothing", testDuplicateEnqueuesNothing},
	{"an ingest whose baseline moved stores nothing", testBaselineMoved},
	{"a cluster's later message waits for its earlier one on the same sink only", testClaimOrder},
	{"a lease hides a delivery from claimers whose clocks are ahead", testLease},
	{"once a lease runs out by the store's clock another claimer gets the delivery", testLeaseRunsOut},
	{"a stale claimer's retry, hold and completion change nothing", testStaleClaim},
	{"deliveries of one message completed concurrently leave no message row", testConcurrentCompletion},
	{"replicas dropping expired messages at once count each delivery once", testConcurrentDrop},
	{"a retried delivery counts its attempt and waits until it is due", testRetry},
	{"a held sink is not claimed until the hold ends and other sinks are", testHoldSink},
	{"messages queued before the cutoff are dropped and counted per sink", testDropExpired},
	{"deleting a cluster deletes its queued notifications and no other's", testDeleteClusterOutbox},
	{"claimers racing on two handles never claim one delivery twice", testClaimRace},
	{"pruning keeps a target's last decided evaluation behind unknown ones", testPruneKeepsBaseline},
	{"a claimer gets only deliveries to its own sinks", testClaimOwnSinks},
}

// notified is push with a notification to sinks enqueued with it.
func notified(name, uid, h string, sinks ...string) store.Ingest {
	in := push(name, uid, h, "1.31")
	// Each cluster pushes each hash once in these cases, so the pair names the message.
	id := fmt.Sprintf("%x", sha256.Sum256([]byte(name+h)))[:32]
	in.Notification = &store.Notification{DeliveryID: id,
		Body: []byte(`{"cluster":"` + name + `","hash":"` + h + `"}`), Sinks: sinks}
	return in
}

// allSinks are every sink these cases enqueue to.
var allSinks = []string{"slack", "webhook"}

// later is a time after every enqueue so far: deliveries are due at once.
func later() time.Time { return time.Now().Add(time.Second) }

func claimAll(t *testing.T, s store.Store, now time.Time) []store.Delivery {
	t.Helper()
	ds, err := s.ClaimDeliveries(t.Context(), now, time.Minute, 100, allSinks)
	if err != nil {
		t.Fatalf("ClaimDeliveries: %v", err)
	}
	return ds
}

// claimed names deliveries as "body-cluster:sink" sorted, for comparing.
func claimed(ds []store.Delivery) string {
	var out []string
	for _, d := range ds {
		name, _, _ := strings.Cut(strings.TrimPrefix(string(d.Body), `{"cluster":"`), `"`)
		h := string(d.Body)[len(d.Body)-6 : len(d.Body)-2]
		out = append(out, name+"#"+h+":"+d.Sink)
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

func complete(t *testing.T, s store.Store, ds ...store.Delivery) {
	t.Helper()
	for _, d := range ds {
		if err := s.CompleteDelivery(t.Context(), d.DeliveryRef); err != nil {
			t.Fatalf("CompleteDelivery: %v", err)
		}
	}
}

func testLastDecided(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	first := push("prod", "uid", hash(1), "1.31")
	res := mustIngest(t, s, first)
	if _, err := s.LastDecidedEvaluation(ctx, res.ClusterID, "1.32"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LastDecidedEvaluation at an unevaluated target: %v, want ErrNotFound", err)
	}
	unknown := push("prod", "uid", hash(2), "1.31")
	unknown.Evaluations[0].Verdict = "unknown"
	mustIngest(t, s, unknown)
	got, err := s.LastDecidedEvaluation(ctx, res.ClusterID, "1.31")
	if err != nil || got.SnapshotID != res.SnapshotID || string(got.Report) != string(first.Evaluations[0].Report) {
		t.Errorf("LastDecidedEvaluation after an unknown pass = snapshot %d %q, %v; want the first, ready one (snapshot %d)",
			got.SnapshotID, got.Report, err, res.SnapshotID)
	}
	blocked := push("prod", "uid", hash(3), "1.31")
	blocked.Evaluations[0].Verdict = "blocked"
	third := mustIngest(t, s, blocked)
	if got, err := s.LastDecidedEvaluation(ctx, res.ClusterID, "1.31"); err != nil || got.SnapshotID != third.SnapshotID ||
		got.Verdict != "blocked" {
		t.Errorf("LastDecidedEvaluation after a blocked pass = snapshot %d %s, %v; want it (snapshot %d)",
			got.SnapshotID, got.Verdict, err, third.SnapshotID)
	}
}

func testEnqueue(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	in := notified("prod", "uid", hash(1), "slack", "webhook")
	res := mustIngest(t, s, in)
	ds := claimAll(t, s, later())
	if got := claimed(ds); got != "prod#0001:slack prod#0001:webhook" {
		t.Fatalf("claimed %s, want the message once per sink", got)
	}
	for _, d := range ds {
		if d.ClusterID != res.ClusterID || d.DeliveryID != in.Notification.DeliveryID || d.Attempts != 0 ||
			string(d.Body) != string(in.Notification.Body) || d.CreatedAt.IsZero() {
			t.Errorf("delivery %+v: want cluster %d, delivery id %s, no attempts, the body", d, res.ClusterID,
				in.Notification.DeliveryID)
		}
	}
	assertQueued(t, s, "slack=1 webhook=1")
	complete(t, s, ds...)
	assertQueued(t, s, "")
	if ds := claimAll(t, s, later()); len(ds) != 0 {
		t.Errorf("claimed %s after completing every delivery, want nothing", claimed(ds))
	}
	// Completing twice is not an error: a lease that ran out may have been delivered twice.
	complete(t, s, ds...)
}

func testDuplicateEnqueuesNothing(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	mustIngest(t, s, notified("prod", "uid", hash(1), "webhook"))
	complete(t, s, claimAll(t, s, later())...)
	again := notified("prod", "uid", hash(1), "webhook") // the same target is evaluated already
	if res := mustIngest(t, s, again); !res.Duplicate {
		t.Fatalf("Ingest of the same hash = %+v, want a duplicate", res)
	}
	assertQueued(t, s, "")
	more := notified("prod", "uid", hash(1), "webhook")
	more.Evaluations[0].Target = "1.32" // a target the snapshot lacks: stored, so enqueued
	mustIngest(t, s, more)
	assertQueued(t, s, "webhook=1")
}

func testBaselineMoved(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	res := mustIngest(t, s, push("prod", "uid", hash(1), "1.31"))
	base, err := s.LastDecidedEvaluation(ctx, res.ClusterID, "1.31")
	if err != nil {
		t.Fatalf("LastDecidedEvaluation: %v", err)
	}
	stale := notified("prod", "uid", hash(2), "webhook")
	stale.Baselines = map[string]int64{"1.31": 0} // computed as if nothing were decided yet
	if _, err := s.Ingest(ctx, stale); !errors.Is(err, store.ErrBaselineMoved) {
		t.Fatalf("Ingest against a moved baseline: %v, want ErrBaselineMoved", err)
	}
	if h, _ := s.Head(ctx, "prod"); h.LatestHash != hash(1) {
		t.Errorf("latest hash after the refused ingest = %s, want the first", h.LatestHash)
	}
	assertQueued(t, s, "")
	fresh := notified("prod", "uid", hash(2), "webhook")
	fresh.Baselines = map[string]int64{"1.31": base.ID, "1.32": 0}
	mustIngest(t, s, fresh)
	assertQueued(t, s, "webhook=1")
}

func testClaimOrder(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	mustIngest(t, s, notified("a", "uid-a", hash(1), "slack", "webhook"))
	mustIngest(t, s, notified("a", "uid-a", hash(2), "slack", "webhook"))
	mustIngest(t, s, notified("b", "uid-b", hash(3), "webhook"))
	first := claimAll(t, s, later())
	if got := claimed(first); got != "a#0001:slack a#0001:webhook b#0003:webhook" {
		t.Fatalf("first claim = %s, want each cluster's first message on each sink", got)
	}
	var slack []store.Delivery
	for _, d := range first {
		if d.Sink == "slack" {
			slack = append(slack, d)
		}
	}
	complete(t, s, slack...)
	// The lease on a's first webhook delivery runs: a's second waits on webhook, not on slack.
	if got := claimed(claimAll(t, s, later())); got != "a#0002:slack" {
		t.Errorf("claim after a's first slack delivery = %s, want only a's second on slack", got)
	}
}

func testLease(t *testing.T, open Opener) {
	a := mustOpen(t, open)
	b := mustOpen(t, open)
	mustIngest(t, a, notified("prod", "uid", hash(1), "webhook"))
	now := later()
	if ds, err := a.ClaimDeliveries(t.Context(), now, 30*time.Second, 10, allSinks); err != nil || len(ds) != 1 {
		t.Fatalf("ClaimDeliveries = %d, %v; want the delivery", len(ds), err)
	}
	if ds := claimAll(t, b, now.Add(29*time.Second)); len(ds) != 0 {
		t.Errorf("another handle claimed %s while the lease ran, want nothing", claimed(ds))
	}
	// A claimer whose clock is ahead of the store's still sees the lease running.
	if ds := claimAll(t, b, now.Add(31*time.Second)); len(ds) != 0 {
		t.Errorf("a claimer with its clock 31 s ahead claimed %s while the lease ran, want nothing", claimed(ds))
	}
}

// testLeaseRunsOut: the first claimer died; once its lease ends by the store's clock,
// the delivery is another's to make.
func testLeaseRunsOut(t *testing.T, open Opener) {
	a := mustOpen(t, open)
	b := mustOpen(t, open)
	mustIngest(t, a, notified("prod", "uid", hash(1), "webhook"))
	now := later()
	if ds, err := a.ClaimDeliveries(t.Context(), now, 200*time.Millisecond, 10, allSinks); err != nil || len(ds) != 1 {
		t.Fatalf("ClaimDeliveries = %d, %v; want the delivery", len(ds), err)
	}
	time.Sleep(300 * time.Millisecond)
	if got := claimed(claimAll(t, b, now)); got != "prod#0001:webhook" {
		t.Errorf("claim after the lease ended = %q, want the delivery", got)
	}
}

// testStaleClaim: a claimer whose lease ran out and was taken by another finishes late;
// its retry, hold and completion change nothing.
func testStaleClaim(t *testing.T, open Opener) {
	a := mustOpen(t, open)
	b := mustOpen(t, open)
	ctx := t.Context()
	mustIngest(t, a, notified("prod", "uid", hash(1), "webhook"))
	now := later()
	stale, err := a.ClaimDeliveries(ctx, now, 100*time.Millisecond, 10, allSinks)
	if err != nil || len(stale) != 1 {
		t.Fatalf("ClaimDeliveries = %d, %v; want the delivery", len(stale), err)
	}
	time.Sleep(200 * time.Millisecond)
	live, err := b.ClaimDeliveries(ctx, now, time.Minute, 10, allSinks)
	if err != nil || len(live) != 1 {
		t.Fatalf("ClaimDeliveries after the lease ran out = %d, %v; want the delivery", len(live), err)
	}
	if err := a.RetryDelivery(ctx, stale[0].DeliveryRef, now, "HTTP 500"); err != nil {
		t.Fatalf("RetryDelivery: %v", err)
	}
	if err := a.HoldSink(ctx, stale[0].DeliveryRef, now.Add(time.Hour)); err != nil {
		t.Fatalf("HoldSink: %v", err)
	}
	if err := a.CompleteDelivery(ctx, stale[0].DeliveryRef); err != nil {
		t.Fatalf("CompleteDelivery: %v", err)
	}
	if ds := claimAll(t, a, now); len(ds) != 0 {
		t.Errorf("the stale claimer's retry ended the live lease: claimed %s, want nothing", claimed(ds))
	}
	assertQueued(t, a, "webhook=1")
	// The live claimer's retry works, and the stale hold held nothing.
	if err := b.RetryDelivery(ctx, live[0].DeliveryRef, now, "HTTP 500"); err != nil {
		t.Fatalf("RetryDelivery: %v", err)
	}
	ds := claimAll(t, a, now)
	if len(ds) != 1 || ds[0].Attempts != 1 {
		t.Errorf("claim after the live claimer's retry = %+v, want the delivery with 1 attempt (and no hold)", ds)
	}
}

// testConcurrentCompletion: the deliveries of one message completed at once on two
// handles leave neither the deliveries nor the message.
func testConcurrentCompletion(t *testing.T, open Opener) {
	a := mustOpen(t, open)
	b := mustOpen(t, open)
	for i := range 40 {
		mustIngest(t, a, notified(fmt.Sprintf("c%02d", i), fmt.Sprintf("uid-%d", i), hash(i), "slack", "webhook"))
	}
	ds, err := a.ClaimDeliveries(t.Context(), later(), time.Minute, 100, allSinks)
	if err != nil || len(ds) != 80 {
		t.Fatalf("ClaimDeliveries = %d, %v; want 80", len(ds), err)
	}
	var wg sync.WaitGroup
	for _, d := range ds {
		s := a
		if d.Sink == "webhook" {
			s = b
		}
		wg.Go(func() {
			if err := s.CompleteDelivery(t.Context(), d.DeliveryRef); err != nil {
				t.Errorf("CompleteDelivery: %v", err)
			}
		})
	}
	wg.Wait()
	assertQueued(t, a, "")
	if n := countRows(t, a, "notify_messages"); n != 0 {
		t.Errorf("%d message rows left after every delivery completed, want 0", n)
	}
}

// testConcurrentDrop: replicas dropping the same expired messages at once count each
// delivery once between them.
func testConcurrentDrop(t *testing.T, open Opener) {
	a := mustOpen(t, open)
	b := mustOpen(t, open)
	for round := range 5 {
		for i := range 10 {
			mustIngest(t, a, notified(fmt.Sprintf("r%dc%02d", round, i), fmt.Sprintf("uid-%d-%d", round, i),
				hash(100*round+i), "slack", "webhook"))
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		total := 0
		for _, s := range []store.Store{a, b, a, b} {
			wg.Go(func() {
				got, err := s.DropExpired(t.Context(), later())
				if err != nil {
					t.Errorf("DropExpired: %v", err)
				}
				mu.Lock()
				total += got["slack"] + got["webhook"]
				mu.Unlock()
			})
		}
		wg.Wait()
		if total != 20 {
			t.Fatalf("round %d: concurrent DropExpired counted %d dropped deliveries, want 20", round, total)
		}
	}
	if n := countRows(t, a, "notify_messages"); n != 0 {
		t.Errorf("%d message rows left after dropping, want 0", n)
	}
}

func countRows(t *testing.T, s store.Store, table string) int {
	t.Helper()
	var n int
	if err := sqlDB(t, s).QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func testRetry(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	mustIngest(t, s, notified("prod", "uid", hash(1), "webhook"))
	now := later()
	ds := claimAll(t, s, now)
	if len(ds) != 1 {
		t.Fatalf("claimed %d deliveries, want 1", len(ds))
	}
	if err := s.RetryDelivery(t.Context(), ds[0].DeliveryRef, now.Add(time.Minute), "HTTP 500"); err != nil {
		t.Fatalf("RetryDelivery: %v", err)
	}
	if ds := claimAll(t, s, now.Add(59*time.Second)); len(ds) != 0 {
		t.Errorf("claimed %s before the retry was due, want nothing", claimed(ds))
	}
	ds = claimAll(t, s, now.Add(time.Minute))
	if len(ds) != 1 || ds[0].Attempts != 1 {
		t.Fatalf("claim when due = %+v, want the delivery with 1 attempt", ds)
	}
	assertQueued(t, s, "webhook=1")
}

func testHoldSink(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	mustIngest(t, s, notified("prod", "uid", hash(1), "slack", "webhook"))
	now := later()
	hook, err := s.ClaimDeliveries(ctx, now, time.Minute, 10, []string{"webhook"})
	if err != nil || len(hook) != 1 {
		t.Fatalf("ClaimDeliveries(webhook) = %d, %v; want its delivery", len(hook), err)
	}
	if err := s.HoldSink(ctx, hook[0].DeliveryRef, now.Add(time.Hour)); err != nil {
		t.Fatalf("HoldSink: %v", err)
	}
	// A shorter hold never shortens a longer one.
	if err := s.HoldSink(ctx, hook[0].DeliveryRef, now.Add(time.Minute)); err != nil {
		t.Fatalf("HoldSink: %v", err)
	}
	if err := s.RetryDelivery(ctx, hook[0].DeliveryRef, now, "HTTP 429"); err != nil {
		t.Fatalf("RetryDelivery: %v", err)
	}
	ds := claimAll(t, s, now.Add(30*time.Minute))
	if got := claimed(ds); got != "prod#0001:slack" {
		t.Errorf("claim while webhook is held = %q, want slack's only", got)
	}
	complete(t, s, ds...)
	if got := claimed(claimAll(t, s, now.Add(time.Hour))); got != "prod#0001:webhook" {
		t.Errorf("claim when the hold ended = %q, want webhook's", got)
	}
}

func testDropExpired(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	before := time.Now().Add(-time.Second)
	mustIngest(t, s, notified("prod", "uid", hash(1), "slack", "webhook"))
	mustIngest(t, s, notified("prod", "uid", hash(2), "webhook"))
	if got, err := s.DropExpired(ctx, before); err != nil || len(got) != 0 {
		t.Errorf("DropExpired(before any enqueue) = %v, %v; want nothing dropped", got, err)
	}
	got, err := s.DropExpired(ctx, later())
	if err != nil || fmt.Sprint(got) != "map[slack:1 webhook:2]" {
		t.Errorf("DropExpired = %v, %v; want slack 1, webhook 2", got, err)
	}
	assertQueued(t, s, "")
}

func testDeleteClusterOutbox(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	gone := mustIngest(t, s, notified("gone", "uid-g", hash(1), "webhook"))
	mustIngest(t, s, notified("kept", "uid-k", hash(2), "webhook"))
	if err := s.DeleteCluster(t.Context(), gone.ClusterID); err != nil {
		t.Fatalf("DeleteCluster: %v", err)
	}
	if got := claimed(claimAll(t, s, later())); got != "kept#0002:webhook" {
		t.Errorf("claim after deleting a cluster = %q, want only the other cluster's message", got)
	}
}

func testClaimRace(t *testing.T, open Opener) {
	a := mustOpen(t, open)
	b := mustOpen(t, open)
	for i := range 20 {
		mustIngest(t, a, notified(fmt.Sprintf("c%02d", i), fmt.Sprintf("uid-%d", i), hash(i), "webhook"))
	}
	now := later()
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for _, s := range []store.Store{a, b, a, b} {
		wg.Go(func() {
			for range 10 {
				ds, err := s.ClaimDeliveries(t.Context(), now, time.Minute, 3, allSinks)
				if err != nil {
					t.Errorf("ClaimDeliveries: %v", err)
					return
				}
				mu.Lock()
				for _, d := range ds {
					seen[d.MessageID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != 20 {
		t.Errorf("%d messages claimed, want all 20", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("message %d claimed %d times under one lease, want once", id, n)
		}
	}
}

func assertQueued(t *testing.T, s store.Store, want string) {
	t.Helper()
	got, err := s.QueuedDeliveries(t.Context())
	if err != nil {
		t.Fatalf("QueuedDeliveries: %v", err)
	}
	var parts []string
	for sink, n := range got {
		parts = append(parts, fmt.Sprintf("%s=%d", sink, n))
	}
	slices.Sort(parts)
	if s := strings.Join(parts, " "); s != want {
		t.Errorf("queued deliveries %q, want %q", s, want)
	}
}

func testPruneKeepsBaseline(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	ctx := t.Context()
	decided := mustIngest(t, s, push("a", "uid-a", hash(1), "1.31"))
	for i := 2; i <= 3; i++ {
		unknown := push("a", "uid-a", hash(i), "1.31")
		unknown.Evaluations[0].Verdict = "unknown"
		mustIngest(t, s, unknown)
	}
	if n, err := s.Prune(ctx, later()); err != nil || n != 1 {
		t.Fatalf("Prune = %d, %v; want 1 (the middle, unknown snapshot)", n, err)
	}
	if got, err := s.LastDecidedEvaluation(ctx, decided.ClusterID, "1.31"); err != nil || got.SnapshotID != decided.SnapshotID {
		t.Errorf("LastDecidedEvaluation after pruning = snapshot %d, %v; want %d", got.SnapshotID, err, decided.SnapshotID)
	}
}

func testClaimOwnSinks(t *testing.T, open Opener) {
	s := mustOpen(t, open)
	mustIngest(t, s, notified("prod", "uid", hash(1), "slack", "webhook"))
	ds, err := s.ClaimDeliveries(t.Context(), later(), time.Minute, 10, []string{"webhook"})
	if err != nil || claimed(ds) != "prod#0001:webhook" {
		t.Errorf("claim of a webhook-only replica = %q, %v; want webhook's delivery only", claimed(ds), err)
	}
	if ds, err := s.ClaimDeliveries(t.Context(), later(), time.Minute, 10, nil); err != nil || len(ds) != 0 {
		t.Errorf("claim without sinks = %q, %v; want nothing", claimed(ds), err)
	}
	assertQueued(t, s, "slack=1 webhook=1")
}
