package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"
	"github.com/upgradescope/upgradescope/inventory"
)

// caller is who makes calls in a test batch: a user agent and a user, calling verb n times.
type caller struct {
	userAgent, user, verb string
	n                     int
}

// auditBatch is an EventList of the shape the API server's webhook backend posts
// (testdata/audit/eventlist.json: one it posted, its credential redacted), its event
// repeated for each caller's calls with the caller's user agent, user and verb.
func auditBatch(t testing.TB, callers ...caller) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "audit", "eventlist.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list map[string]any
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	template, err := json.Marshal(list["items"].([]any)[0])
	if err != nil {
		t.Fatal(err)
	}
	items := []any{}
	for i, c := range callers {
		for j := range c.n {
			var ev map[string]any
			if err := json.Unmarshal(template, &ev); err != nil {
				t.Fatal(err)
			}
			ev["auditID"] = fmt.Sprintf("00000000-0000-0000-%04d-%012d", i, j)
			ev["userAgent"], ev["verb"] = c.userAgent, c.verb
			ev["user"].(map[string]any)["username"] = c.user
			items = append(items, ev)
		}
	}
	list["items"] = items
	body, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

var jsonContent = http.Header{"Content-Type": {"application/json"}}

// postAudit posts a batch of cluster name as the webhook backend does.
func (ts *testServer) postAudit(name, token string, body []byte) response {
	ts.t.Helper()
	return ts.do("POST", api.AuditPath+name+"?timeout=30s", token, body, jsonContent)
}

// storedAudit is the section the server stored for cluster name; nil when none.
func (ts *testServer) storedAudit(name string) *inventory.AuditCalls {
	ts.t.Helper()
	head, err := ts.store.Head(ts.t.Context(), name)
	if err != nil {
		ts.t.Fatal(err)
	}
	rec, err := ts.store.AuditCalls(ts.t.Context(), head.ID)
	if err != nil {
		return nil
	}
	return server.DecodeAuditSection(ts.t, rec.Section)
}

// callerCount is how many calls the section counts of the caller with user agent ua.
func callerCount(s *inventory.AuditCalls, ua string) int64 {
	var n int64
	if s == nil {
		return 0
	}
	for _, c := range s.Callers {
		if c.UserAgent == ua {
			n += c.Count
		}
	}
	return n
}

const sharedIngest = "shared-ingest-token"

// auditServer is a server with the shared ingest token and cluster prod pushed.
func auditServer(t *testing.T, edit func(*server.Config)) *testServer {
	t.Helper()
	ts := newServer(t, func(c *server.Config) {
		c.IngestToken = sharedIngest
		if edit != nil {
			edit(c)
		}
	})
	if r := ts.push(sharedIngest, envelope(t, "prod", teamsInventory(t))); r.status != http.StatusAccepted {
		t.Fatalf("push prod: %d %s", r.status, r.body)
	}
	return ts
}

func TestAnAuditBatchIsCountedIntoItsClustersSection(t *testing.T) {
	ts := auditServer(t, nil)
	r := ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "system:serviceaccount:payments:sync", "list", 3}))
	if r.status != http.StatusOK {
		t.Fatalf("first batch: %d %s", r.status, r.body)
	}
	var got api.AuditAccepted
	if err := json.Unmarshal(r.body, &got); err != nil || got.Events != 3 || got.Malformed != 0 || got.Batches != 1 || got.ClusterID == 0 {
		t.Errorf("first batch answered %s, want 3 events, none malformed, batch 1 of the cluster", r.body)
	}
	r = ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "system:serviceaccount:payments:sync", "list", 2},
		caller{"kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07", "alice", "get", 1}))
	if err := json.Unmarshal(r.body, &got); r.status != http.StatusOK || err != nil || got.Events != 3 || got.Batches != 2 {
		t.Errorf("second batch answered %d %s, want 3 events, batch 2", r.status, r.body)
	}
	s := ts.storedAudit("prod")
	if callerCount(s, "legacy-sync/1.0") != 5 || callerCount(s, "kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07") != 1 {
		t.Errorf("stored callers %+v, want legacy-sync's 5 calls over two batches and kubectl's 1", s.Callers)
	}
	if len(s.Sources) != 1 || s.Sources[0].Path != "webhook" || s.Sources[0].Events != 6 {
		t.Errorf("stored sources %+v, want the webhook's 6 events", s.Sources)
	}
}

func TestAnAuditBatchIsRefusedWithItsStatusAndCountsNothing(t *testing.T) {
	ts := auditServer(t, func(c *server.Config) { c.AdminToken = "admin-token"; c.MaxAuditBatchBytes = 16 << 10 })
	prodToken, stagingToken, readToken := ts.mintIngest("prod"), ts.mintIngest("staging"), ts.mintRead("*")
	good := auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 1})
	for _, tc := range []struct {
		name, path, token string
		body              []byte
		header            http.Header
		status            int
		says              string
	}{
		{"a batch without a token is unauthorized", "prod", "", good, jsonContent, 401, "ingest token is required"},
		{"a read token never sends audit events", "prod", readToken, good, jsonContent, 401, "invalid ingest token"},
		{"the admin token never sends audit events", "prod", "admin-token", good, jsonContent, 401, "invalid ingest token"},
		{"a cluster's token sending another cluster's events is forbidden", "prod", stagingToken, good, jsonContent, 403, `only of cluster \"staging\"`},
		{"a cluster name that is not RFC 1123 is a bad request", "Prod_EU", sharedIngest, good, jsonContent, 400, "RFC 1123"},
		{"a cluster that has not pushed is not found", "staging", sharedIngest, good, jsonContent, 404, "has pushed a snapshot yet"},
		{"a body that is not JSON by its content type is unsupported", "prod", prodToken, good, http.Header{"Content-Type": {"text/plain"}}, 415, "application/json"},
		{"a body without a content type is unsupported", "prod", prodToken, good, http.Header{}, 415, "application/json"},
		{"a compressed body is unsupported", "prod", prodToken, gzipBytes(t, good), http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}, 415, "Content-Encoding"},
		{"a batch past --max-audit-batch-bytes is too large", "prod", prodToken, auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 40}), jsonContent, 413, "--max-audit-batch-bytes"},
		{"a body that is not JSON is a bad request", "prod", prodToken, []byte("{nope"), jsonContent, 400, "EventList"},
		{"a JSON body that is not an EventList is a bad request", "prod", prodToken, []byte(`{"kind":"Pod","apiVersion":"v1"}`), jsonContent, 400, "EventList"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do("POST", api.AuditPath+tc.path, tc.token, tc.body, tc.header)
			if r.status != tc.status || !strings.Contains(string(r.body), tc.says) {
				t.Errorf("status %d body %s, want %d saying %q", r.status, r.body, tc.status, tc.says)
			}
		})
	}
	if s := ts.storedAudit("prod"); s != nil {
		t.Errorf("after refused batches the store holds a section of %d events, want none", s.Events)
	}
	if r := ts.postAudit("prod", prodToken, good); r.status != http.StatusOK {
		t.Errorf("the cluster's own token: %d %s, want 200", r.status, r.body)
	}
}

// A batch past the bound sent without a Content-Length (chunked) is cut off while read.
func TestAChunkedAuditBatchPastTheBoundIsTooLarge(t *testing.T) {
	ts := auditServer(t, func(c *server.Config) { c.MaxAuditBatchBytes = 16 << 10 })
	req, err := http.NewRequest("POST", ts.URL+api.AuditPath+"prod", struct{ *bytes.Reader }{bytes.NewReader(auditBatch(t, caller{"x/1", "bob", "list", 40}))})
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+sharedIngest)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || req.ContentLength > 0 {
		t.Errorf("a chunked batch past the bound: %d (Content-Length %d), want 413", resp.StatusCode, req.ContentLength)
	}
}

// A malformed item is counted and skipped; the rest of the batch counts.
func TestAMalformedEventIsCountedAndTheRestOfTheBatchKept(t *testing.T) {
	ts := auditServer(t, nil)
	var list map[string]any
	if err := json.Unmarshal(auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 2}), &list); err != nil {
		t.Fatal(err)
	}
	list["items"] = append(list["items"].([]any), "not an event", map[string]any{"kind": "Pod"})
	body, _ := json.Marshal(list)
	r := ts.postAudit("prod", sharedIngest, body)
	var got api.AuditAccepted
	if err := json.Unmarshal(r.body, &got); r.status != http.StatusOK || err != nil || got.Events != 2 || got.Malformed != 2 {
		t.Errorf("a batch with two malformed items answered %d %s, want 2 events and 2 malformed", r.status, r.body)
	}
	if s := ts.storedAudit("prod"); callerCount(s, "legacy-sync/1.0") != 2 || s.Malformed != 2 {
		t.Errorf("stored section %+v, want the 2 calls and 2 malformed items", s)
	}
}

// Nothing an event holds reaches the log, whether the batch is counted or refused.
func TestNoEventContentIsLogged(t *testing.T) {
	var logs syncbuf.Buffer
	ts := auditServer(t, func(c *server.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	const secret = "secret-agent-7f3a"
	good := auditBatch(t, caller{secret, "user-" + secret, "list", 2})
	ts.postAudit("prod", sharedIngest, good)
	ts.postAudit("prod", sharedIngest, []byte(`{"kind":"EventList","items":[{"auditID":"`+secret+`","stage":7}]}`))
	ts.postAudit("prod", sharedIngest, bytes.Replace(good, []byte(`"EventList"`), []byte(`"`+secret+`"`), 1))
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the log holds an event's content:\n%s", logs.String())
	}
}

// Replicas on one database (Postgres: UPGRADESCOPE_TEST_POSTGRES_URL) take batches of one
// cluster at once, as an HA control plane's API servers send them: every call is counted.
func TestAuditBatchesOfOneClusterOnTwoReplicasLoseNoCall(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		replicas := []*testServer{
			newServerOn(t, open(), func(c *server.Config) { c.IngestToken = sharedIngest }),
			newServerOn(t, open(), func(c *server.Config) { c.IngestToken = sharedIngest }),
		}
		if r := replicas[0].push(sharedIngest, envelope(t, "prod", teamsInventory(t))); r.status != http.StatusAccepted {
			t.Fatalf("push: %d %s", r.status, r.body)
		}
		const senders, batches, calls = 6, 5, 20
		batch := auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", calls})
		var wg sync.WaitGroup
		for g := range senders {
			wg.Go(func() {
				for range batches {
					if r := replicas[g%2].postAudit("prod", sharedIngest, batch); r.status != http.StatusOK {
						t.Errorf("batch: %d %s", r.status, r.body)
					}
				}
			})
		}
		wg.Wait()
		if got, want := callerCount(replicas[1].storedAudit("prod"), "legacy-sync/1.0"), int64(senders*batches*calls); got != want {
			t.Errorf("%d calls counted from %d concurrent batches, want %d", got, senders*batches, want)
		}
	})
}

// The section is judged with every snapshot of the cluster when the pushed inventory has
// none of its own: the engine gets it under capability audit-log, its window 30 days before
// the snapshot was collected.
func TestAPushIsJudgedWithItsClustersAuditSection(t *testing.T) {
	var mu sync.Mutex
	var judged []*inventory.Document
	ts := auditServer(t, func(c *server.Config) {
		c.Evaluated = func(doc *inventory.Document, _ []string) {
			mu.Lock()
			defer mu.Unlock()
			judged = append(judged, doc)
		}
	})
	server.SetAuditRefresh(ts.srv, time.Hour, time.Hour) // only the push judges here
	if r := ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 4})); r.status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	doc := teamsInventory(t)
	doc.CollectedAt = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	doc.Namespaces = doc.Namespaces[:len(doc.Namespaces)-1] // a new snapshot
	if r := ts.push(sharedIngest, envelope(t, "prod", doc)); r.status != http.StatusAccepted {
		t.Fatalf("second push: %d %s", r.status, r.body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(judged) != 2 || judged[0].AuditCalls != nil {
		t.Fatalf("judged %d inventories, the first with audit calls %v; want two, the first push's without", len(judged), judged[0].AuditCalls)
	}
	got := judged[1]
	if callerCount(got.AuditCalls, "legacy-sync/1.0") != 4 || got.AuditCalls.Since != "2026-10-31T09:00:00Z" {
		t.Errorf("the second push was judged with audit calls %+v, want legacy-sync's 4 calls, since 2026-10-31T09:00:00Z", got.AuditCalls)
	}
	if c := got.Capabilities[inventory.CapAuditLog]; !c.Available {
		t.Errorf("capability %s = %+v, want available", inventory.CapAuditLog, c)
	}
	if doc.AuditCalls != nil {
		t.Error("the pushed document was changed")
	}
}

// An inventory carrying its own audit calls (an agent reading an audit log) is judged with
// those, not the webhook's.
func TestAPushWithItsOwnAuditCallsKeepsThem(t *testing.T) {
	var judged *inventory.Document
	ts := auditServer(t, func(c *server.Config) {
		c.Evaluated = func(doc *inventory.Document, _ []string) { judged = doc }
	})
	server.SetAuditRefresh(ts.srv, time.Hour, time.Hour)
	ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 4}))
	doc := teamsInventory(t)
	doc.Namespaces = doc.Namespaces[:len(doc.Namespaces)-1]
	doc.Capabilities[inventory.CapAuditLog] = inventory.Capability{Available: true}
	doc.AuditCalls = &inventory.AuditCalls{Since: "2026-11-01T00:00:00Z", Events: 1, Requests: 1}
	if r := ts.push(sharedIngest, envelope(t, "prod", doc)); r.status != http.StatusAccepted {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	if judged == nil || judged.AuditCalls == nil || len(judged.AuditCalls.Callers) != 0 || judged.AuditCalls.Since != "2026-11-01T00:00:00Z" {
		t.Errorf("judged with audit calls %+v, want the pushed document's own", judged.AuditCalls)
	}
}

// A batch naming a caller not seen before has the cluster's latest snapshot judged again
// soon after, once per burst; a batch that only adds to known callers' counts does not.
func TestANewCallerHasTheClustersSnapshotJudgedAgainOncePerInterval(t *testing.T) {
	var mu sync.Mutex
	var judged []*inventory.Document
	ts := auditServer(t, func(c *server.Config) {
		c.Now = time.Now // a refresh replaces an evaluation only when it is later
		c.Evaluated = func(doc *inventory.Document, _ []string) {
			mu.Lock()
			defer mu.Unlock()
			judged = append(judged, doc)
		}
	})
	const every = 1500 * time.Millisecond
	server.SetAuditRefresh(ts.srv, 50*time.Millisecond, every)
	judgements := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(judged)
	}
	waitFor := func(n int, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for judgements() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d judgements after %s, want %d", judgements(), within, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	head, err := ts.store.Head(t.Context(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	before, err := ts.store.LatestEvaluation(t.Context(), head.ID, "1.33")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the refresh's evaluation must be a later second than the push's

	ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 1}))
	start := time.Now()
	waitFor(2, 10*time.Second)
	mu.Lock()
	if callerCount(judged[1].AuditCalls, "legacy-sync/1.0") != 1 {
		t.Errorf("the refresh judged audit calls %+v, want legacy-sync's call", judged[1].AuditCalls)
	}
	mu.Unlock()
	// The judgement is told of before it is stored: the new evaluation follows.
	var after store.EvaluationRecord
	for deadline := time.Now().Add(10 * time.Second); after.ID == 0 || after.ID == before.ID; time.Sleep(10 * time.Millisecond) {
		if after, err = ts.store.LatestEvaluation(t.Context(), head.ID, "1.33"); err != nil || time.Now().After(deadline) {
			t.Fatalf("after the refresh the latest evaluation is still %d (%v), want a new one of snapshot %d", after.ID, err, before.SnapshotID)
		}
	}
	if after.SnapshotID != before.SnapshotID {
		t.Errorf("the refresh stored an evaluation of snapshot %d, want the latest, %d", after.SnapshotID, before.SnapshotID)
	}

	ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 5}))
	ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"other/2.0", "carol", "list", 1}))
	ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"third/3.0", "dave", "list", 1}))
	time.Sleep(every / 2)
	// Read before the interval is over (a loaded machine may be past it: nothing to see then).
	if n := judgements(); n != 2 && time.Since(start) < every {
		t.Fatalf("%d judgements %s after the first refresh, want still 2 before %s", n, time.Since(start), every)
	}
	waitFor(3, 10*time.Second)
	if since := time.Since(start); since < every {
		t.Errorf("the second refresh came %s after the first, want at least %s", since, every)
	}
	mu.Lock()
	last := judged[2].AuditCalls
	mu.Unlock()
	if callerCount(last, "other/2.0") != 1 || callerCount(last, "third/3.0") != 1 {
		t.Errorf("the second refresh judged %+v, want both new callers, one refresh for the two batches", last.Callers)
	}
	time.Sleep(every + 200*time.Millisecond)
	if n := judgements(); n != 3 {
		t.Errorf("%d judgements after the burst, want 3: counts alone never refresh", n)
	}
}

// Deleting a cluster takes its audit calls; renaming it carries them to the new name.
func TestAuditCallsFollowTheClusterThroughRenameAndDelete(t *testing.T) {
	ts := auditServer(t, func(c *server.Config) { c.AdminToken = "admin-token" })
	ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 2}))
	head, err := ts.store.Head(t.Context(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprint(head.ID)
	if r := ts.do("PATCH", "/api/v1/clusters/"+id, "admin-token", []byte(`{"name":"prod-eu"}`), jsonContent); r.status != http.StatusOK {
		t.Fatalf("rename: %d %s", r.status, r.body)
	}
	if r := ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 1})); r.status != http.StatusNotFound {
		t.Errorf("a batch to the old name: %d, want 404", r.status)
	}
	if r := ts.postAudit("prod-eu", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 1})); r.status != http.StatusOK {
		t.Errorf("a batch to the new name: %d %s", r.status, r.body)
	}
	if got := callerCount(ts.storedAudit("prod-eu"), "legacy-sync/1.0"); got != 3 {
		t.Errorf("after the rename the section counts %d calls, want 3: 2 before it, 1 after", got)
	}
	if r := ts.do("DELETE", "/api/v1/clusters/"+id, "admin-token", nil, nil); r.status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if _, err := ts.store.AuditCalls(t.Context(), head.ID); err == nil {
		t.Error("the deleted cluster's audit calls are still stored")
	}
}

func TestAuditBatchesAreCountedInMetrics(t *testing.T) {
	ts := auditServer(t, nil)
	ts.postAudit("prod", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 3}))
	ts.postAudit("prod", "", nil)
	ts.postAudit("staging", sharedIngest, auditBatch(t, caller{"legacy-sync/1.0", "bob", "list", 1}))
	text := string(ts.get("/metrics", "").body)
	for _, want := range []string{
		`upgradescope_audit_batches_total{result="accepted"} 1`,
		`upgradescope_audit_batches_total{result="unauthorized"} 1`,
		`upgradescope_audit_batches_total{result="not_found"} 1`,
		`upgradescope_audit_events_total{kind="events"} 3`,
		`upgradescope_http_requests_total{code="200",route="audit"} 1`,
		`upgradescope_http_requests_total{code="404",route="audit"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics has no line %s", want)
		}
	}
}

// removedAPIBatch is a batch of n calls by legacy-sync to flowcontrol v1beta3 flowschemas,
// removed in 1.32: a blocker at 1.33.
func removedAPIBatch(t *testing.T, n int) []byte {
	t.Helper()
	body := auditBatch(t, caller{"legacy-sync/1.0", "system:serviceaccount:payments:sync", "list", n})
	body = bytes.ReplaceAll(body, []byte(`"apiGroup":"networking.k8s.io","apiVersion":"v1beta1","resource":"servicecidrs"`),
		[]byte(`"apiGroup":"flowcontrol.apiserver.k8s.io","apiVersion":"v1beta3","resource":"flowschemas"`))
	body = bytes.ReplaceAll(body, []byte(`"k8s.io/removed-release":"1.37"`), []byte(`"k8s.io/removed-release":"1.32"`))
	if !bytes.Contains(body, []byte("flowschemas")) {
		t.Fatal("the batch's objectRef was not rewritten")
	}
	return body
}

const flowSchemasCalls = "deprecated-api-in-use/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas"

// The gate judges a stored cluster as every view does: with its webhook's callers.
func TestAGateAgainstAClusterJudgesItWithItsWebhooksCallers(t *testing.T) {
	ts := contextServer(t)
	server.SetAuditRefresh(ts.srv, time.Hour, time.Hour)
	_, before := ts.gateAgainst("", "cluster=teams", ingress("shop", "a"))
	if r := ts.postAudit("teams", "shared", removedAPIBatch(t, 3)); r.status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	r, after := ts.gateAgainst("", "cluster=teams", ingress("shop", "a"))
	if got := after.sources()[flowSchemasCalls]; got != "cluster" {
		t.Fatalf("the gate's findings %v lack the webhook's caller of a removed API as the cluster's", after.sources())
	}
	c := after.Targets[0].Cluster
	if c.Verdict == "ready" || c.Blockers != before.Targets[0].Cluster.Blockers+1 {
		t.Errorf("cluster verdict %q with %d blockers (%d without the batch): want one more blocker, not ready; %s",
			c.Verdict, c.Blockers, before.Targets[0].Cluster.Blockers, r.body)
	}
}

// A stored audit row that cannot be read never stops judging: the cluster is judged without
// it under an unavailable capability, and the next batch replaces it.
func TestAnUnreadableStoredAuditRowIsJudgedWithoutAndReplaced(t *testing.T) {
	logs := &syncbuf.Buffer{}
	ts := auditServer(t, func(c *server.Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	server.SetAuditRefresh(ts.srv, time.Hour, time.Hour)
	if r := ts.postAudit("prod", sharedIngest, removedAPIBatch(t, 2)); r.status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	if _, err := ts.store.UpdateAuditCalls(t.Context(), "prod", func([]byte) ([]byte, error) { return []byte("not gzip"), nil }); err != nil {
		t.Fatal(err)
	}
	head, err := ts.store.Head(t.Context(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r := ts.get(fmt.Sprintf("/api/v1/clusters/%d", head.ID), "")
		if r.status != http.StatusOK || !strings.Contains(string(r.body), "the stored audit section could not be read") {
			t.Fatalf("cluster view: %d, want 200 with audit-log unavailable as unreadable: %s", r.status, r.body)
		}
	}
	if n := strings.Count(logs.String(), "stored audit section could not be read"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
	if r := ts.postAudit("prod", sharedIngest, removedAPIBatch(t, 5)); r.status != http.StatusOK {
		t.Fatalf("batch after the unreadable row: %d %s", r.status, r.body)
	}
	if got := callerCount(ts.storedAudit("prod"), "legacy-sync/1.0"); got != 5 {
		t.Errorf("the replaced row counts %d calls, want the 5 of the batch after", got)
	}
}

// The capability is the aggregation's, as a log read says it: partial when events were
// skipped as malformed.
func TestAClusterIsJudgedPartialWhenItsBatchesHadMalformedEvents(t *testing.T) {
	var mu sync.Mutex
	var judged *inventory.Document
	ts := auditServer(t, func(c *server.Config) {
		c.Evaluated = func(doc *inventory.Document, _ []string) {
			mu.Lock()
			defer mu.Unlock()
			judged = doc
		}
	})
	server.SetAuditRefresh(ts.srv, time.Hour, time.Hour)
	body := bytes.Replace(removedAPIBatch(t, 2), []byte(`"items":[`), []byte(`"items":[{"kind":"Event"},`), 1)
	if r := ts.postAudit("prod", sharedIngest, body); r.status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	doc := teamsInventory(t)
	doc.Namespaces = doc.Namespaces[:len(doc.Namespaces)-1]
	if r := ts.push(sharedIngest, envelope(t, "prod", doc)); r.status != http.StatusAccepted {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	mu.Lock()
	defer mu.Unlock()
	c := judged.Capabilities[inventory.CapAuditLog]
	if !c.Available || !c.Partial || !strings.Contains(c.Reason, "1 malformed record(s) skipped (first: ") {
		t.Errorf("capability %s = %+v, want partial naming the malformed record as a log read does", inventory.CapAuditLog, c)
	}
}

// Close stops the refreshes scheduled and waits for one running, so the store is closed
// under none.
func TestClosingTheServerWaitsForARunningAuditRefresh(t *testing.T) {
	var pushed sync.Once
	entered, release := make(chan struct{}), make(chan struct{})
	var armed bool
	var mu sync.Mutex
	ts := auditServer(t, func(c *server.Config) {
		c.Evaluated = func(*inventory.Document, []string) {
			mu.Lock()
			a := armed
			mu.Unlock()
			if a {
				pushed.Do(func() { close(entered) })
				<-release
			}
		}
	})
	mu.Lock()
	armed = true
	mu.Unlock()
	server.SetAuditRefresh(ts.srv, 0, 0)
	if r := ts.postAudit("prod", sharedIngest, removedAPIBatch(t, 1)); r.status != http.StatusOK {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	<-entered
	closed := make(chan struct{})
	go func() { ts.srv.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a refresh was running")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return once the refresh ended")
	}
}
