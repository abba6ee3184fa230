package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/notify"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/pgtest"
)

// eolPack is new knowledge as a custom pack: the acme-agent every cluster runs is past its
// end of life at every target, a blocker.
const eolPack = `package upgradescope.custom.eol

findings contains {
	"key": "eol/acme-agent",
	"category": "eol",
	"severity": "blocker",
	"target": t,
	"title": "acme-agent is past its end of life",
} if {
	some t in input.targets
}
`

// eolDayPack is an end of life that passes while the inventory stays the same: the
// acme-agent is a blocker from 2026-12-01 on.
const eolDayPack = `package upgradescope.custom.eolday

findings contains {
	"key": "eol/acme-agent",
	"category": "eol",
	"severity": "blocker",
	"target": t,
	"title": "acme-agent reached its end of life on 2026-12-01",
} if {
	input.now >= "2026-12-01"
	some t in input.targets
}
`

// eolEngine is the built-in bundles and eolPack: another bundle set than sharedEngine's.
func eolEngine(t *testing.T) *engine.Engine {
	t.Helper()
	return packEngine(t, "eol", eolPack)
}

// packEngine is the built-in bundles and the custom pack name holding the module src.
func packEngine(t *testing.T, name, src string) *engine.Engine {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".rego"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(t.Context(), engine.WithPolicy(dir), engine.WithToolVersion("test"))
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// stores runs test on a server store of each backend: SQLite, and PostgreSQL when
// hack/with-postgres.sh runs one.
func stores(t *testing.T, test func(t *testing.T, open func() store.Store)) {
	t.Run("SQLite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "upgradescope.db")
		test(t, func() store.Store { return openStore(t, path) })
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		url := pgtest.URL(t)
		test(t, func() store.Store { return openStore(t, url) })
	})
}

func openStore(t *testing.T, dsn string) store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// runReevaluation runs ts's background re-evaluation until the test ends.
func runReevaluation(t *testing.T, ts *testServer) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); ts.srv.RunReevaluation(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// fleetView is what a test reads of GET /api/v1/fleet.
type fleetView struct {
	Bundles      []store.Bundle `json:"bundles"`
	Reevaluation struct {
		Pending int `json:"pending"`
	} `json:"reevaluation"`
	Clusters []struct {
		Name  string `json:"name"`
		Cells map[string]*struct {
			Verdict    string `json:"verdict"`
			Score      int    `json:"score"`
			SnapshotID int64  `json:"snapshotId"`
			Outdated   bool   `json:"outdated"`
		} `json:"cells"`
	} `json:"clusters"`
}

func (ts *testServer) fleet(t *testing.T) fleetView {
	t.Helper()
	r := ts.get("/api/v1/fleet?targets=1.33", "")
	var v fleetView
	if r.status != http.StatusOK || json.Unmarshal(r.body, &v) != nil {
		t.Fatalf("GET /api/v1/fleet: %d %s", r.status, r.body)
	}
	return v
}

// cells are the fleet's cells at 1.33 as "name verdict score outdated=…".
func (v fleetView) cells() string {
	var out []string
	for _, c := range v.Clusters {
		cell := c.Cells["1.33"]
		if cell == nil {
			out = append(out, c.Name+" none")
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %d outdated=%v", c.Name, cell.Verdict, cell.Score, cell.Outdated))
	}
	return strings.Join(out, "; ")
}

// waitCurrent waits until no cluster awaits a re-evaluation, failing after a minute.
func (ts *testServer) waitCurrent(t *testing.T) fleetView {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		v := ts.fleet(t)
		if v.Reevaluation.Pending == 0 {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d clusters still await a re-evaluation after a minute: %s", v.Reevaluation.Pending, v.cells())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func bundleKeys(bs []store.Bundle) string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name+"@"+b.Revision)
	}
	return strings.Join(out, ",")
}

func TestReevaluationAfterASwapClearsOutdatedAndNotifiesWhatTheNewKnowledgeBlocks(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		sink := newHookSink(t)
		hook, err := notify.NewWebhook(sink.URL+"/hook", "")
		if err != nil {
			t.Fatal(err)
		}
		ts := newServerOn(t, open(), func(c *server.Config) {
			c.IngestToken = "shared"
			c.Sinks = []notify.Sink{hook}
			c.ReevaluateRate = 1000 // the pace is not what this test is about
		})
		for _, name := range []string{"dev", "prod"} {
			if r := ts.push("shared", envelope(t, name, readyInventory(t))); r.status != http.StatusAccepted {
				t.Fatalf("push %s: %d %s", name, r.status, r.body)
			}
		}
		runReevaluation(t, ts)
		before := ts.waitCurrent(t) // the pass at start finds nothing to do
		if got := before.cells(); got != "dev ready 100 outdated=false; prod ready 100 outdated=false" {
			t.Fatalf("fleet before the swap: %s", got)
		}

		eol := eolEngine(t)
		ts.srv.Swap(eol)
		after := ts.waitCurrent(t)
		if got := after.cells(); got != "dev blocked 75 outdated=false; prod blocked 75 outdated=false" {
			t.Errorf("fleet after the re-evaluation: %s; want both blocked by the new pack, current", got)
		}
		for _, c := range after.Clusters {
			if cell := c.Cells["1.33"]; cell.Verdict != "blocked" || cell.Outdated || cell.Score >= 100 {
				t.Errorf("%s at 1.33 after the re-evaluation = %+v; want blocked, scored below 100, current", c.Name, *cell)
			}
		}
		if got, want := bundleKeys(after.Bundles), bundleKeys(storeBundles(eol)); got != want || got == bundleKeys(before.Bundles) {
			t.Errorf("fleet bundles = %s, want the new set %s (before: %s)", got, want, bundleKeys(before.Bundles))
		}
		prod := ts.idOf("prod")
		hist := ts.get(fmt.Sprintf("/api/v1/clusters/%d/history?target=1.33", prod), "").json(t)["history"].([]any)
		if len(hist) != 2 || hist[0].(map[string]any)["verdict"] != "ready" || hist[1].(map[string]any)["verdict"] != "blocked" {
			t.Errorf("prod's history at 1.33 = %v; want the push's evaluation, then the re-evaluation's", hist)
		}

		got := deliveredChanges(t, ts, sink, 2)
		if want := "dev: new-blocker eol/acme-agent @1.33; prod: new-blocker eol/acme-agent @1.33"; got != want {
			t.Errorf("changes delivered:\n%s\nwant\n%s", got, want)
		}
		if metrics := string(ts.get("/metrics", "").body); !strings.Contains(metrics, "upgradescope_reevaluation_pending 0") {
			t.Errorf("/metrics lacks upgradescope_reevaluation_pending 0")
		}
	})
}

func TestANewDayJudgesUnchangedClustersAgainAndNotifiesTheEndOfLifeThatPassed(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		sink := newHookSink(t)
		hook, err := notify.NewWebhook(sink.URL+"/hook", "")
		if err != nil {
			t.Fatal(err)
		}
		var clock atomic.Int64
		clock.Store(time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC).UnixNano())
		ts := newServerOn(t, open(), func(c *server.Config) {
			c.Engine = packEngine(t, "eolday", eolDayPack)
			c.IngestToken = "shared"
			c.Sinks = []notify.Sink{hook}
			c.ReevaluateRate = 1000 // the pace is not what this test is about
			c.Now = func() time.Time { return time.Unix(0, clock.Load()).UTC() }
		})
		for _, name := range []string{"dev", "prod"} {
			if r := ts.push("shared", envelope(t, name, readyInventory(t))); r.status != http.StatusAccepted {
				t.Fatalf("push %s: %d %s", name, r.status, r.body)
			}
		}
		if v := ts.fleet(t); v.cells() != "dev ready 100 outdated=false; prod ready 100 outdated=false" || v.Reevaluation.Pending != 0 {
			t.Fatalf("fleet on 2026-11-30: %s, pending %d", v.cells(), v.Reevaluation.Pending)
		}

		clock.Store(time.Date(2026, 12, 1, 0, 0, 5, 0, time.UTC).UnixNano())
		v := ts.fleet(t)
		if got := v.cells(); got != "dev ready 100 outdated=true; prod ready 100 outdated=true" || v.Reevaluation.Pending != 2 {
			t.Errorf("just past midnight: %s, pending %d; want both outdated and pending: yesterday's judgement may be wrong today",
				got, v.Reevaluation.Pending)
		}
		// An agent pushing the same inventory leaves it to the paced pass, as after a bundle
		// change: the first pushes after midnight are not each an evaluation at once.
		if r := ts.push("shared", envelope(t, "dev", readyInventory(t))); r.status != http.StatusOK {
			t.Fatalf("duplicate push of dev: %d %s; want a duplicate", r.status, r.body)
		}
		if got := ts.fleet(t).cells(); got != "dev ready 100 outdated=true; prod ready 100 outdated=true" {
			t.Errorf("fleet after dev's duplicate push on the new day: %s; want it left to the pass", got)
		}
		runReevaluation(t, ts)
		if got := ts.waitCurrent(t).cells(); got != "dev blocked 75 outdated=false; prod blocked 75 outdated=false" {
			t.Errorf("fleet after the pass: %s; want both blocked by the end of life that passed, current", got)
		}
		// Judged again, replacing the day before's: one snapshot is one point of history, with its latest judgement.
		prod := ts.idOf("prod")
		hist := ts.get(fmt.Sprintf("/api/v1/clusters/%d/history?target=1.33", prod), "").json(t)["history"].([]any)
		if len(hist) != 1 || hist[0].(map[string]any)["verdict"] != "blocked" || !strings.HasPrefix(hist[0].(map[string]any)["at"].(string), "2026-12-01") {
			t.Errorf("prod's history at 1.33 = %v; want its one snapshot, judged on 2026-12-01, blocked", hist)
		}
		latest := ts.get(fmt.Sprintf("/api/v1/clusters/%d/report?target=1.33", prod), "")
		if latest.status != http.StatusOK || !strings.Contains(string(latest.body), "eol/acme-agent") {
			t.Errorf("prod's report at 1.33: %d, want the new day's with eol/acme-agent: %.300s", latest.status, latest.body)
		}

		if q, err := ts.store.QueuedDeliveries(t.Context()); err != nil || q["webhook"] != 2 {
			t.Errorf("queued %v, %v: want one message a cluster", q, err)
		}
		got := deliveredChanges(t, ts, sink, 2)
		if want := "dev: new-blocker eol/acme-agent @1.33; prod: new-blocker eol/acme-agent @1.33"; got != want {
			t.Errorf("changes delivered:\n%s\nwant\n%s", got, want)
		}
	})
}

// A pass that starts before midnight lists its clusters on the old day: one that ends
// after it is followed by the new day's pass at once, not a day later.
func TestAPassRunningPastMidnightIsFollowedByTheNewDaysPass(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	path := filepath.Join(t.TempDir(), "upgradescope.db")
	first := newServerOn(t, openStore(t, path), func(c *server.Config) { c.IngestToken = "shared"; c.Now = now })
	for _, name := range []string{"dev", "prod"} {
		if r := first.push("shared", envelope(t, name, readyInventory(t))); r.status != http.StatusAccepted {
			t.Fatalf("push %s: %d %s", name, r.status, r.body)
		}
	}
	// Restarted with the end-of-life pack: a pass at once, and midnight passes while it
	// judges its first cluster, with the old day's pack verdict.
	ts := newServerOn(t, openStore(t, path), func(c *server.Config) {
		c.Engine = packEngine(t, "eolday", eolDayPack)
		c.ReevaluateRate = 1000
		c.Now = now
	})
	var calls atomic.Int32
	server.SetReevaluateHook(ts.srv, func() {
		if calls.Add(1) == 1 {
			clock.Store(time.Date(2026, 12, 1, 0, 0, 2, 0, time.UTC).UnixNano())
		}
	})
	runReevaluation(t, ts)
	if got := ts.waitCurrent(t).cells(); got != "dev blocked 75 outdated=false; prod blocked 75 outdated=false" {
		t.Errorf("fleet on 2026-12-01 after the passes: %s; want both judged on the new day, blocked", got)
	}
}

// pushClusters pushes readyInventory as n clusters, c0 to c<n-1> (UIDs uid-0 …), with the
// shared ingest token, each a new snapshot.
func pushClusters(t *testing.T, ts *testServer, n int) {
	t.Helper()
	for i := range n {
		doc := readyInventory(t)
		doc.ClusterID = fmt.Sprintf("uid-%d", i)
		if r := ts.push("shared", envelope(t, fmt.Sprintf("c%d", i), doc)); r.status != http.StatusAccepted {
			t.Fatalf("push %d: %d %s", i, r.status, r.body)
		}
	}
}

// deliveredChanges runs ts's notification worker until sink has n messages and answers
// their changes as "cluster: kind key @targets", sorted, joined by "; ".
func deliveredChanges(t *testing.T, ts *testServer, sink *hookSink, n int) string {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); ts.srv.RunNotifications(ctx) }()
	defer func() { cancel(); <-done }()
	bodies, _ := sink.wait(t, n)
	var got []string
	for _, raw := range bodies {
		var b notify.Body
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		for _, c := range b.Changes {
			got = append(got, b.Cluster.Name+": "+c.Kind+" "+c.Key+" @"+strings.Join(c.Targets, ","))
		}
	}
	slices.Sort(got)
	return strings.Join(got, "; ")
}

// storeBundles is eng's bundle set as the fleet lists it, sorted by name.
func storeBundles(eng *engine.Engine) []store.Bundle {
	var out []store.Bundle
	for _, b := range eng.Bundles() {
		out = append(out, store.Bundle{Name: b.Name, Revision: b.Revision})
	}
	slices.SortFunc(out, func(a, b store.Bundle) int { return strings.Compare(a.Name+"@"+a.Revision, b.Name+"@"+b.Revision) })
	return out
}

func TestASwapMarksCellsOutdatedUntilTheyAreReevaluated(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	if r := ts.push("shared", envelope(t, "prod", readyInventory(t))); r.status != http.StatusAccepted {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	ts.srv.Swap(eolEngine(t))
	v := ts.fleet(t)
	if got := v.cells(); got != "prod ready 100 outdated=true" || v.Reevaluation.Pending != 1 {
		t.Fatalf("fleet after the swap, before any pass: %s, pending %d; want prod outdated and pending", got, v.Reevaluation.Pending)
	}
	if metrics := string(ts.get("/metrics", "").body); !strings.Contains(metrics, "upgradescope_reevaluation_pending 1") {
		t.Errorf("/metrics lacks upgradescope_reevaluation_pending 1")
	}
	// The agent pushes the same inventory again: the cell is the background pass's to
	// replace, so replicas a poll apart on their bundles never take it back and forth.
	if r := ts.push("shared", envelope(t, "prod", readyInventory(t))); r.status != http.StatusOK {
		t.Fatalf("duplicate push after the swap: %d %s; want a duplicate", r.status, r.body)
	}
	if got := ts.fleet(t).cells(); got != "prod ready 100 outdated=true" {
		t.Errorf("fleet after the duplicate push: %s; want it left outdated for the pass", got)
	}
}

func TestARestartWithNewBundlesReevaluatesTheFleet(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		first := newServerOn(t, open(), func(c *server.Config) { c.IngestToken = "shared" })
		pushClusters(t, first, 3)
		eol := eolEngine(t)
		restarted := newServerOn(t, open(), func(c *server.Config) { c.Engine = eol })
		if v := restarted.fleet(t); v.Reevaluation.Pending != 3 {
			t.Fatalf("pending after a restart with new bundles = %d, want 3: %s", v.Reevaluation.Pending, v.cells())
		}
		runReevaluation(t, restarted)
		v := restarted.waitCurrent(t)
		for _, c := range v.Clusters {
			if cell := c.Cells["1.33"]; cell == nil || cell.Verdict != "blocked" || cell.Outdated {
				t.Errorf("%s after the pass = %+v; want blocked and current", c.Name, cell)
			}
		}
	})
}

func TestAPushRacingTheReevaluationIsNeverOverwrittenByIt(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ts := newServerOn(t, open(), func(c *server.Config) { c.IngestToken = "shared" })
		if r := ts.push("shared", envelope(t, "prod", readyInventory(t))); r.status != http.StatusAccepted {
			t.Fatalf("push: %d %s", r.status, r.body)
		}
		newer := teamsInventory(t)
		newer.CollectedAt = newer.CollectedAt.Add(time.Minute)
		raced := make(chan response, 1)
		server.SetReevaluateHook(ts.srv, func() {
			// The re-evaluation of the first snapshot is done but not stored: a push lands.
			select {
			case raced <- ts.push("shared", envelope(t, "prod", newer)):
			default:
			}
		})
		ts.srv.Swap(eolEngine(t))
		runReevaluation(t, ts)
		v := ts.waitCurrent(t)
		var r response
		select {
		case r = <-raced:
		default:
			t.Fatal("the re-evaluation never reached its store: no push raced it")
		}
		if r.status != http.StatusAccepted {
			t.Fatalf("the racing push: %d %s", r.status, r.body)
		}
		var acc struct{ SnapshotID int64 }
		_ = json.Unmarshal(r.body, &acc)
		cell := v.Clusters[0].Cells["1.33"]
		if cell == nil || cell.SnapshotID != acc.SnapshotID || cell.Outdated {
			t.Fatalf("prod's cell = %+v; want the racing push's snapshot %d, current", cell, acc.SnapshotID)
		}
		hist := ts.get(fmt.Sprintf("/api/v1/clusters/%d/history?target=1.33", ts.idOf("prod")), "").json(t)["history"].([]any)
		if len(hist) != 2 {
			t.Errorf("history at 1.33 has %d points, want the two pushes' only (the stale re-evaluation stored nothing): %v", len(hist), hist)
		}
	})
}

func TestASwapDuringAPassStartsItAgainWithTheNewSet(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	pushClusters(t, ts, 3)
	original, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	eol := eolEngine(t)
	swapped := false
	server.SetReevaluateHook(ts.srv, func() {
		if !swapped { // the first cluster is evaluated with eol; the operator rolls back
			swapped = true
			ts.srv.Swap(original)
		}
	})
	ts.srv.Swap(eol)
	runReevaluation(t, ts)
	v := ts.waitCurrent(t)
	if got := v.cells(); got != "c0 ready 100 outdated=false; c1 ready 100 outdated=false; c2 ready 100 outdated=false" {
		t.Errorf("fleet after a rollback during the pass: %s; want every cluster current with the original set", got)
	}
	if got := bundleKeys(v.Bundles); got != bundleKeys(storeBundles(original)) {
		t.Errorf("fleet bundles = %s, want the original set", got)
	}
	// What eol judged while the rollback landed was never stored: no point of c0's history
	// is eol's blocked one.
	points, err := ts.store.History(t.Context(), int64(ts.idOf("c0")), "1.33", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) == 0 {
		t.Fatal("c0 has no history at 1.33")
	}
	for _, p := range points {
		if p.Verdict != "ready" {
			t.Errorf("c0's history holds a %s evaluation of a set rolled back before it was stored", p.Verdict)
		}
	}
}

func TestTwoReplicasReevaluatingStoreAndNotifyEachChangeOnce(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		hook, err := notify.NewWebhook("http://127.0.0.1:9/never-delivered", "")
		if err != nil {
			t.Fatal(err)
		}
		seed := newServerOn(t, open(), func(c *server.Config) {
			c.IngestToken = "shared"
			c.Sinks = []notify.Sink{hook}
		})
		pushClusters(t, seed, 4)
		eol := eolEngine(t)
		var replicas []*testServer
		for range 2 {
			replicas = append(replicas, newServerOn(t, open(), func(c *server.Config) {
				c.Engine, c.Sinks, c.ReevaluateRate = eol, []notify.Sink{hook}, 1000
			}))
		}
		for _, r := range replicas {
			runReevaluation(t, r)
		}
		for _, r := range replicas {
			r.waitCurrent(t)
		}
		for i := range 4 {
			id := seed.idOf(fmt.Sprintf("c%d", i))
			hist := seed.get(fmt.Sprintf("/api/v1/clusters/%d/history?target=1.33", id), "").json(t)["history"].([]any)
			if len(hist) != 2 {
				t.Errorf("c%d's history at 1.33 has %d points, want the push's and one re-evaluation", i, len(hist))
			}
		}
		if q, err := seed.store.QueuedDeliveries(t.Context()); err != nil || q["webhook"] != 4 {
			t.Errorf("queued %v, %v; want one message per cluster turned blocked", q, err)
		}
	})
}

// Two replicas a poll apart on their bundles, the agent's unchanged inventory reaching each
// in turn: a duplicate push never takes the cell from one set's evaluation to the other's
// (which notified at every turn); the background pass is what moves it.
func TestReplicasOnDifferentBundleSetsDoNotTakeACellBackAndForth(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "fleet.db"))
	old := newServerOn(t, st, func(c *server.Config) { c.IngestToken = "shared" })
	eol := eolEngine(t)
	neu := newServerOn(t, st, func(c *server.Config) { c.IngestToken = "shared"; c.Engine = eol })
	env := envelope(t, "prod", readyInventory(t))
	for i, ts := range []*testServer{old, neu, old, neu} {
		if r := ts.push("shared", env); r.status != http.StatusAccepted && r.status != http.StatusOK {
			t.Fatalf("push %d: %d %s", i, r.status, r.body)
		}
		if got := old.fleet(t).cells(); got != "prod ready 100 outdated=false" {
			t.Fatalf("after push %d: %s; want the first evaluation kept", i, got)
		}
	}
}

func TestAClusterWhoseReevaluationFailedIsTriedAgainWithoutAPushOrSwap(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	pushClusters(t, ts, 2)
	// Both clusters fail twice: more than the pass at start and the one the Swap asks for
	// can try, so only the retries bring them current.
	var tries atomic.Int32
	server.SetReevaluateFault(ts.srv, func() error {
		if tries.Add(1) <= 4 {
			return errors.New("connection reset by peer")
		}
		return nil
	})
	server.SetReevaluationRetry(ts.srv, 50*time.Millisecond)
	ts.srv.Swap(eolEngine(t))
	runReevaluation(t, ts)
	v := ts.waitCurrent(t)
	if got := v.cells(); !strings.Contains(got, "c0 blocked") || !strings.Contains(got, "c1 blocked") || strings.Contains(got, "outdated=true") {
		t.Errorf("fleet after a pass that failed one cluster and the retry: %s; want both blocked and current", got)
	}
	if n := tries.Load(); n != 6 {
		t.Errorf("%d re-evaluations reached their store, want 6: both clusters in three passes", n)
	}
}

func TestAClusterRenamedDuringThePassIsNotifiedUnderItsNewName(t *testing.T) {
	sink := newHookSink(t)
	hook, err := notify.NewWebhook(sink.URL+"/hook", "")
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, func(c *server.Config) {
		c.IngestToken, c.AdminToken = "shared", "admin"
		c.Sinks = []notify.Sink{hook}
	})
	if r := ts.push("shared", envelope(t, "prod", readyInventory(t))); r.status != http.StatusAccepted {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	id := ts.idOf("prod")
	server.SetReevaluateHook(ts.srv, func() {
		// The pass listed prod; before its re-evaluation is stored, an operator renames it.
		if r := ts.do("PATCH", fmt.Sprintf("/api/v1/clusters/%d", id), "admin", []byte(`{"name":"production"}`), nil); r.status != http.StatusOK {
			t.Errorf("rename: %d %s", r.status, r.body)
		}
	})
	ts.srv.Swap(eolEngine(t))
	runReevaluation(t, ts)
	ts.waitCurrent(t)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); ts.srv.RunNotifications(ctx) }()
	defer func() { cancel(); <-done }()
	bodies, _ := sink.wait(t, 1)
	var b notify.Body
	if err := json.Unmarshal(bodies[0], &b); err != nil {
		t.Fatal(err)
	}
	if b.Cluster.Name != "production" {
		t.Errorf("the re-evaluation's notification names %q, want the cluster's name when it was stored, production", b.Cluster.Name)
	}
}

func TestTheDailyPassStartsJustAfterTheNextUTCMidnight(t *testing.T) {
	cases := []struct {
		name string
		now  time.Time
		want time.Duration
	}{
		{"an hour before midnight", time.Date(2026, 11, 30, 23, 0, 0, 0, time.UTC), time.Hour + time.Second},
		{"at midnight, the whole day", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 24*time.Hour + time.Second},
		{"on the last day of a year", time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC), 12*time.Hour + time.Second},
		{"midnight in another zone, an hour before UTC's", time.Date(2026, 12, 1, 0, 0, 0, 0, time.FixedZone("CET", 3600)), time.Hour + time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := server.UntilNextDay(c.now); got != c.want {
				t.Errorf("UntilNextDay(%s) = %s, want %s", c.now, got, c.want)
			}
		})
	}
}
