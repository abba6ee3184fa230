package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/report"
)

// gateBody is testdata/<scenario>'s inventory as a gate's body, its probes observed as
// finding nothing, with config as its suppression file.
func gateBody(t *testing.T, scenario, config string) api.GateRequest {
	t.Helper()
	eng, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	inv, err := json.Marshal(probetest.Scenario(t, root, scenario, eng.Observe().Probes))
	if err != nil {
		t.Fatal(err)
	}
	return api.GateRequest{Inventory: inv, Config: config}
}

func TestGateAnswersTheReportTheServerJudged(t *testing.T) {
	fs := startFleet(t, "teams")
	const ignoreAll = "ignore:\n  - category: deprecated-api\n    reason: later\n  - category: removed-api\n    reason: later\n"
	for _, tt := range []struct {
		name     string
		scenario string
		gate     client.GateQuery
		config   string
		verdict  string
		fails    bool
	}{
		{name: "a ready inventory passes", scenario: "clean-is-ready",
			gate: client.GateQuery{Target: "1.37", FailOn: report.FailOnBlocker}, verdict: report.VerdictReady},
		{name: "a blocked inventory is a report that fails the gate, not an error", scenario: "teams",
			gate: client.GateQuery{Target: "1.37", FailOn: report.FailOnBlocker}, verdict: report.VerdictBlocked, fails: true},
		{name: "fail-on never passes it", scenario: "teams",
			gate: client.GateQuery{Target: "1.37", FailOn: report.FailOnNever}, verdict: report.VerdictBlocked},
		{name: "against a stored cluster, failing only on what the inventory introduces", scenario: "teams",
			gate: client.GateQuery{Target: "1.37", FailOn: report.FailOnBlocker, Cluster: "teams"}, verdict: report.VerdictReady},
		{name: "the suppression file travels in the body", scenario: "teams", config: ignoreAll,
			gate: client.GateQuery{Target: "1.37", FailOn: report.FailOnBlocker}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := connect(t, fs.url, readToken).Gate(t.Context(), tt.gate, gateBody(t, tt.scenario, tt.config))
			if err != nil {
				t.Fatal(err)
			}
			got := rep.Targets[0]
			if tt.verdict != "" && got.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s", got.Verdict, tt.verdict)
			}
			if (tt.gate.Cluster != "") != (got.Cluster != nil) {
				t.Errorf("the cluster's verdict %+v, want one only when a cluster is named", got.Cluster)
			}
			if tt.config != "" && len(got.Suppressed) == 0 {
				t.Errorf("nothing suppressed: the suppression file did not reach the server")
			}
			if fails := rep.Gate(tt.gate.FailOn, tt.gate.AllowIncomplete) != ""; fails != tt.fails {
				t.Errorf("the gate fails: %v, want %v", fails, tt.fails)
			}
		})
	}
}

func TestGateAnswersARefusalAsAnError(t *testing.T) {
	fs := startFleet(t, "teams")
	for _, tt := range []struct {
		name, token string
		gate        client.GateQuery
		is          error
		says        string
	}{
		{name: "an unknown cluster", token: readToken, gate: client.GateQuery{Target: "1.37", FailOn: "blocker", Cluster: "nope"},
			is: client.ErrNotFound, says: "POST " + fs.url + "/api/v1/gate: 404 Not Found: cluster not found"},
		{name: "a target the cluster runs", token: readToken, gate: client.GateQuery{Target: "1.30", FailOn: "blocker", Cluster: "teams"},
			says: "422 Unprocessable Entity"},
		{name: "no token", gate: client.GateQuery{Target: "1.37", FailOn: "blocker"},
			says: "401 Unauthorized: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := connect(t, fs.url, tt.token).Gate(t.Context(), tt.gate, gateBody(t, "teams", ""))
			var e *client.Error
			if rep != nil || !errors.As(err, &e) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("report %v, err %v; want an *Error saying %q", rep, err, tt.says)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want one matching %v", err, tt.is)
			}
			if strings.Contains(err.Error(), "?") {
				t.Errorf("the error shows the query: %v", err)
			}
		})
	}
}

// fault is a server answering each request with the next of answers (the last repeats): the
// faults a real fleet server cannot be made to produce on cue, a busy 503 with Retry-After,
// a proxy's page, a dropped connection (an answer with drop set).
type fault struct {
	status int
	header map[string]string
	body   string
	drop   bool
}

func faultServer(t *testing.T, answers ...fault) (url string, requests func() int) {
	t.Helper()
	// A dropped connection's handler may still run when the client has given up: the
	// count is atomic.
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := answers[min(int(n.Add(1))-1, len(answers)-1)]
		_, _ = io.Copy(io.Discard, r.Body)
		if a.drop {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}
			return
		}
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int { return int(n.Load()) }
}

func TestGateAsksABusyServerAgainAfterItsRetryAfter(t *testing.T) {
	ready, err := json.Marshal(report.Report{SchemaVersion: 1, Targets: []report.TargetResult{{Target: "1.37", Verdict: "ready", Score: 100}}})
	if err != nil {
		t.Fatal(err)
	}
	busy := fault{status: 503, header: map[string]string{"Retry-After": "1", "Content-Type": "application/json"}, body: `{"error":"busy"}`}
	ok := fault{status: 200, header: map[string]string{api.VerdictHeader: "ready", "Content-Type": "application/json"}, body: string(ready)}
	for _, tt := range []struct {
		name     string
		answers  []fault
		requests int
		retries  []time.Duration
		says     string
	}{
		{name: "busy, then an answer", answers: []fault{busy, ok}, requests: 2, retries: []time.Duration{time.Second}},
		{name: "busy every time: three requests, then the refusal", answers: []fault{busy}, requests: 3,
			retries: []time.Duration{time.Second, time.Second}, says: "503 Service Unavailable: busy"},
		{name: "a dropped connection is not retried", answers: []fault{{drop: true}}, requests: 1, says: "POST "},
		{name: "a proxy's page is no gate's answer", answers: []fault{{status: 200, header: map[string]string{"Content-Type": "text/html"}, body: "<html>Sign in</html>"}},
			requests: 1, says: "is not an upgradescope gate's answer"},
		{name: "a JSON error beside a verdict is a refusal", answers: []fault{{status: 422, header: map[string]string{api.VerdictHeader: "blocked"}, body: `{"error":"boom"}`}},
			requests: 1, says: "422 Unprocessable Entity: boom"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, requests := faultServer(t, tt.answers...)
			var waits []time.Duration
			rep, err := connect(t, url, readToken).Gate(t.Context(), client.GateQuery{Target: "1.37", FailOn: "blocker"},
				api.GateRequest{Inventory: json.RawMessage(`{}`)}, client.OnRetry(func(_ error, wait time.Duration) { waits = append(waits, wait) }))
			if requests() != tt.requests || len(waits) != len(tt.retries) {
				t.Errorf("%d requests, waits %v; want %d, %v", requests(), waits, tt.requests, tt.retries)
			}
			switch {
			case tt.says == "" && (err != nil || rep == nil):
				t.Errorf("report %v, err %v; want the report", rep, err)
			case tt.says != "" && (err == nil || !strings.Contains(err.Error(), tt.says)):
				t.Errorf("err = %v, want one saying %q", err, tt.says)
			}
		})
	}
}
