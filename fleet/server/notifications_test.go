package server_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/notify"
	"github.com/upgradescope/upgradescope/inventory"
)

// hookSink is a real webhook receiver on loopback that keeps what it was sent.
type hookSink struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	sigs   []string
}

func newHookSink(t *testing.T) *hookSink {
	h := &hookSink{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, body)
		h.sigs = append(h.sigs, r.Header.Get(notify.HeaderSignature))
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// wait answers the first n bodies once they arrived, failing the test after a minute.
func (h *hookSink) wait(t *testing.T, n int) ([][]byte, []string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		h.mu.Lock()
		got := len(h.bodies)
		h.mu.Unlock()
		if got >= n {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.bodies[:n], h.sigs[:n]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the webhook received fewer than %d messages within a minute", n)
	return nil, nil
}

// readyInventory is testdata/teams without its removed APIs: ready at 1.33.
func readyInventory(t *testing.T) *inventory.Document {
	doc := teamsInventory(t)
	doc.APIUsage = doc.APIUsage[1:2] // v1 Endpoints: deprecated, not removed
	return doc
}

// unknownInventory is readyInventory without its api-usage capability: unknown.
func unknownInventory(t *testing.T) *inventory.Document {
	doc := readyInventory(t)
	delete(doc.Capabilities, "api-usage")
	return doc
}

func TestPushesThatChangeReadinessNotifyTheWebhookInOrderAndSilentPassesDoNot(t *testing.T) {
	sink := newHookSink(t)
	hook, err := notify.NewWebhook(sink.URL+"/hook", "secret")
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, func(c *server.Config) {
		c.IngestToken = "shared"
		c.Sinks = []notify.Sink{hook}
	})
	steps := []struct {
		doc     *inventory.Document
		verdict string
	}{
		{readyInventory(t), "ready"},     // the cluster's first evaluation: silent
		{teamsInventory(t), "blocked"},   // two new blockers
		{unknownInventory(t), "unknown"}, // silent, and not a baseline
		{teamsInventory(t), "blocked"},   // the same blockers as the last decided pass: silent
		{readyInventory(t), "ready"},     // became ready
	}
	for i, step := range steps {
		step.doc.CollectedAt = step.doc.CollectedAt.Add(time.Duration(i) * time.Minute)
		step.doc.Namespaces = append(step.doc.Namespaces, inventory.Namespace{Name: "step-" + string(rune('a'+i))})
		if r := ts.push("shared", envelope(t, "prod", step.doc)); r.status != http.StatusAccepted {
			t.Fatalf("push %d: %d %s", i, r.status, r.body)
		}
		cell := ts.get("/api/v1/clusters/"+strconv.Itoa(ts.idOf("prod")), "").json(t)["evaluations"].([]any)[0].(map[string]any)
		if cell["verdict"] != step.verdict {
			t.Fatalf("push %d judged %v, want %s", i, cell["verdict"], step.verdict)
		}
	}
	if q, err := ts.store.QueuedDeliveries(t.Context()); err != nil || q["webhook"] != 2 {
		t.Fatalf("queued %v, %v: want the two changes only", q, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); ts.srv.RunNotifications(ctx) }()
	defer func() { cancel(); <-done }()
	bodies, sigs := sink.wait(t, 2)
	var got []string
	for i, raw := range bodies {
		var b notify.Body
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatal(err)
		}
		if b.Cluster.Name != "prod" || b.Cluster.ID != int64(ts.idOf("prod")) {
			t.Errorf("message %d is about %+v, want prod", i, b.Cluster)
		}
		mac := hmac.New(sha256.New, []byte("secret"))
		mac.Write(raw)
		if sigs[i] != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
			t.Errorf("message %d: signature %q does not verify", i, sigs[i])
		}
		for _, c := range b.Changes {
			got = append(got, c.Kind+" "+c.Key+" @"+strings.Join(c.Targets, ","))
		}
	}
	want := "new-blocker removed-api/extensions/v1beta1/Ingress @1.33; " +
		"new-blocker removed-api/policy/v1beta1/PodSecurityPolicy @1.33; became-ready  @1.33"
	if strings.Join(got, "; ") != want {
		t.Errorf("changes delivered:\n%s\nwant\n%s", strings.Join(got, "; "), want)
	}
	// The sink has the bodies before the worker records them delivered: wait for the record.
	lines := []string{`upgradescope_notifications_total{result="delivered",sink="webhook"} 2`,
		`upgradescope_notifications_queued{sink="webhook"} 0`}
	var metrics string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		metrics = string(ts.get("/metrics", "").body)
		if strings.Contains(metrics, lines[0]) && strings.Contains(metrics, lines[1]) || time.Now().After(deadline) {
			break
		}
	}
	for _, line := range lines {
		if !strings.Contains(metrics, line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}
}

func TestWithoutSinksNothingIsEnqueued(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	for i, doc := range []*inventory.Document{readyInventory(t), teamsInventory(t)} {
		if r := ts.push("shared", envelope(t, "prod", doc)); r.status != http.StatusAccepted {
			t.Fatalf("push %d: %d %s", i, r.status, r.body)
		}
	}
	if q, err := ts.store.QueuedDeliveries(t.Context()); err != nil || len(q) != 0 {
		t.Errorf("queued %v, %v: want nothing without sinks", q, err)
	}
}

func TestDeletingAClusterDeletesItsQueuedNotifications(t *testing.T) {
	hook, _ := notify.NewWebhook("http://127.0.0.1:9/never-called", "")
	ts := newServer(t, func(c *server.Config) {
		c.IngestToken, c.AdminToken = "shared", "admin"
		c.Sinks = []notify.Sink{hook}
	})
	for i, doc := range []*inventory.Document{readyInventory(t), teamsInventory(t)} {
		if r := ts.push("shared", envelope(t, "prod", doc)); r.status != http.StatusAccepted {
			t.Fatalf("push %d: %d %s", i, r.status, r.body)
		}
	}
	if q, _ := ts.store.QueuedDeliveries(t.Context()); q["webhook"] != 1 {
		t.Fatalf("queued %v, want one message", q)
	}
	if r := ts.do("DELETE", "/api/v1/clusters/"+strconv.Itoa(ts.idOf("prod")), "admin", nil, nil); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if q, _ := ts.store.QueuedDeliveries(t.Context()); len(q) != 0 {
		t.Errorf("queued %v after deleting the cluster, want nothing", q)
	}
}
