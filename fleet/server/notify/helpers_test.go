package notify

import (
	"bytes"
	"crypto/hmac"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/pgtest"
)

// backends runs test once on a fresh SQLite database and once on a real PostgreSQL one
// (skipped without a server, as the store's suite is). open opens another handle on the
// same database: a second replica.
func backends(t *testing.T, test func(t *testing.T, open func() store.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "upgradescope.db")
		test(t, func() store.Store { return mustOpen(t, path) })
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgtest.URL(t)
		test(t, func() store.Store { return mustOpen(t, url) })
	})
}

func mustOpen(t *testing.T, dsn string) store.Store {
	t.Helper()
	s, err := store.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// clock is a worker clock the test moves on; it starts at the real time, which is what
// the store stamps enqueued messages with.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Now().Add(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// enqueue stores a push of cluster name (one evaluation, hash h) with a real v1 body
// announcing one new blocker titled title, to sinks; it answers the body.
func enqueue(t *testing.T, s store.Store, name, h, title string, sinks ...string) *Body {
	t.Helper()
	head, _ := s.Head(t.Context(), name) // zero before the cluster's first push
	b := NewBody(Cluster{ID: max(head.ID, 1), Name: name}, "", []TargetDelta{{
		Target:  Target{Target: "1.33", Verdict: "blocked", Score: 75, Blockers: 1},
		Changes: []Change{{Kind: KindNewBlocker, Key: "removed-api/" + title, Severity: "blocker", Title: title, Targets: []string{"1.33"}}},
	}}, time.Now())
	body, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Ingest(t.Context(), store.Ingest{ClusterName: name, ClusterUID: "uid-" + name, Hash: h,
		AgentVersion: "test", KBVersion: "kb", ServerVersion: "v1.32.0", Inventory: []byte("inv"),
		Evaluations: []store.Evaluation{{Target: "1.33", Verdict: "blocked", Score: 75, Blockers: 1,
			EvaluatedAt: time.Now(), BundlesKey: "k", Report: []byte("r")}},
		Notification: &store.Notification{DeliveryID: b.DeliveryID, Body: body, Sinks: sinks}})
	if err != nil {
		t.Fatalf("Ingest with a notification: %v", err)
	}
	return b
}

// received is one request a sink answered.
type received struct {
	status   int
	delivery string
	header   http.Header
	body     []byte
}

// sink is a real HTTP server on loopback answering from a script: the n-th request gets
// script[n], and every one after the script 200.
type sink struct {
	*httptest.Server
	mu     sync.Mutex
	script []func(w http.ResponseWriter, r *http.Request)
	got    []received
}

func newTestSink(t *testing.T, script ...func(w http.ResponseWriter, r *http.Request)) *sink {
	s := &sink{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.got)
	s.got = append(s.got, received{delivery: r.Header.Get(HeaderDelivery), header: r.Header.Clone(), body: body})
	s.mu.Unlock()
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	if n < len(s.script) {
		s.script[n](rec, r)
	} else {
		w.WriteHeader(http.StatusOK)
	}
	s.mu.Lock()
	s.got[n].status = rec.status
	s.mu.Unlock()
}

func (s *sink) requests() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.got...)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

// Scripted answers.
func answer(code int, header ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
	}
}

// hang answers nothing until the client gives up: only its timeout ends the request.
func hang(w http.ResponseWriter, r *http.Request) {
	<-r.Context().Done()
	if sw, ok := w.(*statusWriter); ok {
		sw.status = 0 // never answered
	}
}

func redirect(to string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) }
}

// webhookSchema is docs/webhook.schema.json, compiled with every object closed
// (additionalProperties false): receivers are told to ignore members they do not know, but
// a member the body has and the schema does not is undocumented.
func webhookSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return compileWebhookSchema(t, true)
}

func compileWebhookSchema(t *testing.T, closed bool) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "docs", "webhook.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("read webhook schema: %v", err)
	}
	if closed {
		closeObjects(doc)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("webhook.schema.json", doc); err != nil {
		t.Fatalf("add webhook schema: %v", err)
	}
	sch, err := c.Compile("webhook.schema.json")
	if err != nil {
		t.Fatalf("compile webhook schema: %v", err)
	}
	return sch
}

// closeObjects sets additionalProperties false on every schema in v that lists properties.
func closeObjects(v any) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["properties"]; ok {
			v["additionalProperties"] = false
		}
		for _, e := range v {
			closeObjects(e)
		}
	case []any:
		for _, e := range v {
			closeObjects(e)
		}
	}
}

// checkWebhook asserts what every webhook request must be: JSON valid against the
// schema, headers naming its deliveryId, and a signature that verifies with secret.
func checkWebhook(t *testing.T, sch *jsonschema.Schema, secret string, r received) Body {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("webhook body is not JSON: %v: %s", err, r.body)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("webhook body does not validate against docs/webhook.schema.json: %v\n%s", err, r.body)
	}
	var b Body
	if err := json.Unmarshal(r.body, &b); err != nil {
		t.Fatal(err)
	}
	if r.delivery != b.DeliveryID || r.header.Get(HeaderEvent) != EventType ||
		r.header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v: want delivery %s, event %s, JSON", r.header, b.DeliveryID, EventType)
	}
	// Recomputed here, as a receiver would, rather than with Sign.
	if want := "sha256=" + hmacHex(secret, r.body); !hmac.Equal([]byte(r.header.Get(HeaderSignature)), []byte(want)) {
		t.Errorf("signature %q does not verify: want %q", r.header.Get(HeaderSignature), want)
	}
	return b
}

func counter(w *Worker, sink, result string) int {
	var m dto.Metric
	if err := w.metrics.total.WithLabelValues(sink, result).Write(&m); err != nil {
		panic(err)
	}
	return int(m.GetCounter().GetValue())
}

func queued(t *testing.T, s store.Store) string {
	t.Helper()
	q, err := s.QueuedDeliveries(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(q)
}
