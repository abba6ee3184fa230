package push

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// server records pushes and answers with the status codes it is given, in order (the last
// repeats).
type server struct {
	mu       sync.Mutex
	codes    []int
	received []Envelope
	auth     []string
	// retryAfter, when set, is sent as Retry-After.
	retryAfter string
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	code := s.codes[min(len(s.received), len(s.codes)-1)]
	if r.URL.Path != Path || r.Header.Get("Content-Type") != ContentType {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	env, err := Decode(r.Body, r.Header.Get("Content-Encoding"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return
	}
	s.received = append(s.received, *env)
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	if code == http.StatusFound {
		w.Header().Set("Location", "https://elsewhere.example.com/api")
	}
	if s.retryAfter != "" {
		w.Header().Set("Retry-After", s.retryAfter)
	}
	w.WriteHeader(code)
	_, _ = w.Write([]byte("cluster name is not a subdomain"))
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.received)
}

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newClient(t *testing.T, url string, clk *clock) *Client {
	t.Helper()
	c, err := New(Options{URL: url, Token: func() (string, error) { return "s3cr3t", nil }, ForceEvery: time.Hour,
		ClusterName: "prod-eu", AgentVersion: "test", KBVersion: "k8s.io/api v0.37.2", Now: clk.Now, Jitter: func() float64 { return 1 }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func doc(server string) *inventory.Document {
	return &inventory.Document{SchemaVersion: 1, Source: "cluster", ServerVersion: server, CollectedAt: time.Now(),
		Capabilities: map[string]inventory.Capability{}, APIUsage: []inventory.APIUsage{}}
}

func TestPushesOnlyWhenTheInventoryChangedOrAForcedSyncIsDue(t *testing.T) {
	srv := &server{codes: []int{http.StatusAccepted}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	clk := &clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	c := newClient(t, ts.URL, clk)
	ctx := context.Background()
	steps := []struct {
		name    string
		advance time.Duration
		server  string
		want    Result
	}{
		{"the first inventory is pushed", 0, "v1.35.0", Delivered},
		{"the same state collected later is not", 10 * time.Minute, "v1.35.0", Unchanged},
		{"a changed state is", 10 * time.Minute, "v1.35.1", Delivered},
		{"an unchanged state is pushed again once a forced sync is due", time.Hour, "v1.35.1", Delivered},
	}
	for _, s := range steps {
		clk.now = clk.now.Add(s.advance)
		if got, err := c.Offer(ctx, doc(s.server)); got != s.want {
			t.Errorf("%s: got %s (%v), want %s", s.name, got, err, s.want)
		}
	}
	if srv.count() != 3 {
		t.Fatalf("server received %d pushes, want 3", srv.count())
	}
	env := srv.received[0]
	if env.SchemaVersion != 1 || env.ClusterName != "prod-eu" || env.Inventory.ServerVersion != "v1.35.0" || srv.auth[0] != "Bearer s3cr3t" {
		t.Errorf("first push = %+v with %q", env, srv.auth[0])
	}
}

func TestAFailedPushIsRetriedOnTheBackoffScheduleUntilDelivered(t *testing.T) {
	srv := &server{codes: []int{503, 503, 503, 503, 503, 503, 202}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	clk := &clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	c := newClient(t, ts.URL, clk)
	ctx := context.Background()
	if got, _ := c.Offer(ctx, doc("v1.35.0")); got != Failed {
		t.Fatalf("first push = %s, want failed", got)
	}
	for _, wait := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 2 * time.Minute, 2 * time.Minute} {
		next, ok := c.NextRetry()
		if !ok || next.Sub(clk.now) != wait {
			t.Fatalf("next retry in %s (pending %v), want %s", next.Sub(clk.now), ok, wait)
		}
		clk.now = next.Add(-time.Second)
		before := srv.count()
		if got, _ := c.Retry(ctx); got != Unchanged || srv.count() != before {
			t.Fatalf("a retry before its time sent a request (%s)", got)
		}
		clk.now = next
		if _, err := c.Retry(ctx); err != nil && srv.count() == 7 {
			t.Fatal(err)
		}
	}
	if _, ok := c.NextRetry(); ok || srv.count() != 7 {
		t.Errorf("after delivery: pending %v, %d requests; want none pending after 7", ok, srv.count())
	}
}

// A busy server's Retry-After says when to try again, within a minute; a timeout (408) is
// retried on the schedule, as a 5xx is.
func TestABusyServersRetryAfterIsHonouredUpToAMinute(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, header string
		code         int
		want         time.Duration
	}{
		{"seconds on a 503", "7", http.StatusServiceUnavailable, 7 * time.Second},
		{"seconds on a 429", "30", http.StatusTooManyRequests, 30 * time.Second},
		{"an HTTP date", now.Add(45 * time.Second).Format(http.TimeFormat), http.StatusServiceUnavailable, 45 * time.Second},
		{"more than a minute is a minute", "3600", http.StatusServiceUnavailable, time.Minute},
		{"an unreadable value falls back to the schedule", "soon", http.StatusServiceUnavailable, 10 * time.Second},
		{"a request timeout is retried on the schedule", "", http.StatusRequestTimeout, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(&server{codes: []int{tt.code}, retryAfter: tt.header})
			defer ts.Close()
			clk := &clock{now: now}
			c := newClient(t, ts.URL, clk)
			if got, _ := c.Offer(context.Background(), doc("v1.35.0")); got != Failed {
				t.Fatalf("push = %s, want failed and kept", got)
			}
			if next, ok := c.NextRetry(); !ok || next.Sub(now) != tt.want {
				t.Errorf("next retry in %s (pending %v), want %s", next.Sub(now), ok, tt.want)
			}
		})
	}
}

func TestJitterStaysWithinTwentyPercent(t *testing.T) {
	c, err := New(Options{URL: "http://127.0.0.1:1", Token: func() (string, error) { return "t", nil }})
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if j := c.opts.Jitter(); j < 0.8 || j > 1.2 {
			t.Fatalf("jitter %v outside [0.8, 1.2]", j)
		}
	}
}

func TestANewerInventorySupersedesAPendingPush(t *testing.T) {
	srv := &server{codes: []int{503, 202}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	clk := &clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	c := newClient(t, ts.URL, clk)
	ctx := context.Background()
	_, _ = c.Offer(ctx, doc("v1.35.0"))
	clk.now = clk.now.Add(5 * time.Second)
	if got, _ := c.Offer(ctx, doc("v1.35.1")); got != Delivered {
		t.Fatalf("the newer push = %s, want delivered", got)
	}
	if srv.received[1].Inventory.ServerVersion != "v1.35.1" {
		t.Errorf("delivered %s, want the newer inventory", srv.received[1].Inventory.ServerVersion)
	}
	if _, ok := c.NextRetry(); ok {
		t.Error("the superseded push is still pending")
	}
}

func TestPermanentRefusalsAreDroppedWithWhatToFix(t *testing.T) {
	tests := []struct {
		code int
		want string
	}{
		{http.StatusUnauthorized, "check the server token"},
		{http.StatusForbidden, "check the server token"},
		{http.StatusUnprocessableEntity, "cluster name is not a subdomain"},
		{http.StatusFound, "redirected to https://elsewhere.example.com/api"},
		{http.StatusConflict, "409 Conflict): cluster name is not a subdomain"},
		{http.StatusRequestEntityTooLarge, "413 Request Entity Too Large)"},
		{http.StatusBadRequest, "400 Bad Request)"},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.code), func(t *testing.T) {
			srv := &server{codes: []int{tt.code}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			c := newClient(t, ts.URL, &clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)})
			got, err := c.Offer(context.Background(), doc("v1.35.0"))
			if got != Dropped || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %s, %v; want dropped saying %q", got, err, tt.want)
			}
			if _, ok := c.NextRetry(); ok {
				t.Error("a permanent refusal is retried")
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Error("the error shows the token")
			}
		})
	}
}

func TestServerURLChecks(t *testing.T) {
	token := func() (string, error) { return "t", nil }
	for _, bad := range []string{"", "ftp://host", "http://", "not a url"} {
		if _, err := New(Options{URL: bad, Token: token}); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
	if _, err := New(Options{URL: "http://fleet.example.com", Token: token, CAFile: "ca.pem"}); err == nil {
		t.Error("a CA file with a plain http URL was accepted")
	}
	c, _ := New(Options{URL: "http://fleet.example.com", Token: token})
	if !strings.Contains(c.Warning, "clear text") {
		t.Errorf("plain http to a remote host warns %q", c.Warning)
	}
	c, _ = New(Options{URL: "http://127.0.0.1:8080", Token: token})
	if c.Warning != "" {
		t.Errorf("plain http to loopback warns %q", c.Warning)
	}
}

func TestANewBundleRevisionIsPushedWithTheBundles(t *testing.T) {
	srv := &server{codes: []int{http.StatusAccepted}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	clk := &clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	revision := "2026-11-30.1"
	c, err := New(Options{URL: ts.URL, Token: func() (string, error) { return "t", nil }, ForceEvery: time.Hour,
		ClusterName: "prod-eu", Now: clk.Now, Jitter: func() float64 { return 1 },
		Versions: func() (string, []Bundle) {
			// An odd name (a bundle loaded from a path with '=') is left out, never the push.
			return "k8s.io/api v0.37.2", []Bundle{{Name: "kb", Revision: revision}, {Name: "/etc/team=payments", Revision: "1"}}
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if got, _ := c.Offer(ctx, doc("v1.35.0")); got != Delivered {
		t.Fatalf("first push: %s", got)
	}
	if got, _ := c.Offer(ctx, doc("v1.35.0")); got != Unchanged {
		t.Errorf("the same state and bundles: %s, want unchanged", got)
	}
	revision = "2026-12-01.1"
	if got, _ := c.Offer(ctx, doc("v1.35.0")); got != Delivered {
		t.Errorf("a new kb revision with the same state: %s, want delivered", got)
	}
	if n := srv.count(); n != 2 || BundlesKey(srv.received[1].Bundles) != "|kb=2026-12-01.1" ||
		srv.received[1].KBVersion != "k8s.io/api v0.37.2" {
		t.Errorf("%d pushes, the last with %+v", n, srv.received[n-1].Bundles)
	}
}

func TestSendAnswersWhatTheServerSaidOnce(t *testing.T) {
	for _, tc := range []struct {
		name, body, retryAfter string
		code                   int
		want                   Answer
		wantErr                string
		busy, permanent        bool
	}{
		{name: "a new snapshot names the targets it was evaluated at", code: http.StatusAccepted,
			body: `{"clusterId":3,"snapshotId":9,"duplicate":false,"evaluated":["1.36","1.37"]}`,
			want: Answer{ClusterID: 3, SnapshotID: 9, Evaluated: []string{"1.36", "1.37"}}},
		{name: "a new snapshot judges each target, and members added later are ignored", code: http.StatusAccepted,
			body: `{"clusterId":3,"snapshotId":9,"duplicate":false,"evaluated":["1.37"],"later":{"x":1},
				"verdicts":[{"target":"1.37","verdict":"blocked","score":50,"blockers":2,"warnings":1}]}`,
			want: Answer{ClusterID: 3, SnapshotID: 9, Evaluated: []string{"1.37"},
				Verdicts: []Verdict{{Target: "1.37", Verdict: "blocked", Score: 50, Blockers: 2}}}},
		{name: "a duplicate says so", code: http.StatusOK, body: `{"clusterId":3,"snapshotId":9,"duplicate":true}`,
			want: Answer{ClusterID: 3, SnapshotID: 9, Duplicate: true}},
		{name: "a refusal carries the server's message, not its JSON", code: http.StatusForbidden,
			body: `{"error":"this token pushes only as cluster \"a\", not \"b\""}`, permanent: true,
			wantErr: `push refused (403 Forbidden): this token pushes only as cluster "a", not "b"; check the server token`},
		{name: "a refusal without a body still says what to check", code: http.StatusUnauthorized, permanent: true,
			wantErr: "push refused (401 Unauthorized): check the server token"},
		{name: "a busy server says when to try again", code: http.StatusServiceUnavailable, retryAfter: "2", busy: true,
			wantErr: "503 Service Unavailable, retry after 2s"},
		{name: "an answer that is not JSON is an error", code: http.StatusAccepted, body: "ok", wantErr: "read the server's answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls++
				if _, err := Decode(r.Body, r.Header.Get("Content-Encoding")); err != nil {
					t.Errorf("Send sent an envelope Decode refuses: %v", err)
				}
				if tc.retryAfter != "" {
					w.Header().Set("Retry-After", tc.retryAfter)
				}
				w.WriteHeader(tc.code)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer ts.Close()
			c := newClient(t, ts.URL, &clock{now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)})
			got, err := c.Send(context.Background(), doc("v1.35.0"))
			if tc.wantErr == "" && (err != nil || !reflect.DeepEqual(got, tc.want)) {
				t.Errorf("Send = %+v, %v; want %+v", got, err, tc.want)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Send error = %v, want %q", err, tc.wantErr)
			}
			if _, busy := BusyFor(err); busy != tc.busy || Permanent(err) != tc.permanent {
				t.Errorf("busy %v permanent %v, want %v and %v", busy, Permanent(err), tc.busy, tc.permanent)
			}
			if _, pending := c.NextRetry(); pending || calls != 1 {
				t.Errorf("Send made %d calls and left a push pending (%v); want one call and none", calls, pending)
			}
		})
	}
}

func TestAnAnswerNamesANewSnapshotsTargetsEvenWhenNoneAndADuplicatesNever(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    Answer
		want string
	}{
		{"a new snapshot evaluated at no target", Answer{ClusterID: 1, SnapshotID: 2},
			`{"clusterId":1,"snapshotId":2,"duplicate":false,"evaluated":[],"verdicts":[]}`},
		{"a new snapshot evaluated at one", Answer{ClusterID: 1, SnapshotID: 2, Evaluated: []string{"1.37"},
			Verdicts: []Verdict{{Target: "1.37", Verdict: "ready", Score: 100}}},
			`{"clusterId":1,"snapshotId":2,"duplicate":false,"evaluated":["1.37"],"verdicts":[{"target":"1.37","verdict":"ready","score":100,"blockers":0}]}`},
		{"a duplicate", Answer{ClusterID: 1, SnapshotID: 2, Duplicate: true}, `{"clusterId":1,"snapshotId":2,"duplicate":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.a)
			if err != nil || string(got) != tc.want {
				t.Errorf("Marshal = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}
