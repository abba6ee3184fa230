package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 30, item 15: what an agent or a server wrote reaches the operator's terminal
// escaped, whichever command prints it. hostileText holds what a compromised agent or server
// would send: a title rewrite, a screen clear, a C1 sequence introducer and a line break that
// would forge a table row.
const hostileText = "\x1b]0;owned\x07\x1b[2J\x1b[H\u009b31m\nFAKE ROW"

// escapedHostile is hostileText as the operator must be shown it (output.Escape).
const escapedHostile = `\x1b]0;owned\x07\x1b[2J\x1b[H\u009b31m\x0aFAKE ROW`

// rawControls are what must never reach the terminal unescaped.
var rawControls = []string{"\x1b", "\u009b", "\x07", "\nFAKE ROW"}

func TestHostileStringsFromAgentsAndServersAreEscapedOnTheTerminal(t *testing.T) {
	t.Setenv(envDBURL, "")
	dir := t.TempDir()
	db := filepath.Join(dir, "fleet.db")
	p := startServe(t, "--db", db, "--ingest-token-file", writeSecret(t, dir, "ingest", "shared-ingest-token"),
		"--read-token-file", writeSecret(t, dir, "read", gateReadToken))
	doc := teamsInventory(t)
	doc["clusterId"] = "uid-" + hostileText
	doc["serverVersion"] = "v1.32.4-" + hostileText
	push := gzipEnvelope(t, map[string]any{"schemaVersion": 1, "clusterName": "prod", "agentVersion": "test",
		"kbVersion": "test", "inventory": doc})
	if a := pushBody(p.url, "shared-ingest-token", push, "gzip"); a.status != http.StatusAccepted {
		t.Fatalf("the hostile agent's push: %d %s", a.status, a.body)
	}
	fake := hostileServer(t)
	readToken := func(t *testing.T, dir string) string { return write(t, dir, "read.token", gateReadToken) }
	runHostile(t, []hostile{
		{
			name: "clusters list through the server escapes the UID and version an agent pushed",
			args: func(t *testing.T, dir string) []string {
				return []string{"clusters", "list", "--server", p.url, "--read-token-file", readToken(t, dir)}
			},
			code: 0, want: []string{"uid-" + escapedHostile, "v1.32.4-" + escapedHostile}, absent: rawControls,
		},
		{
			name: "clusters list on the database escapes them too",
			args: func(t *testing.T, dir string) []string { return []string{"clusters", "list", "--db", db} },
			code: 0, want: []string{"uid-" + escapedHostile}, absent: rawControls,
		},
		{
			name: "a server's refusal is printed escaped",
			args: func(t *testing.T, dir string) []string {
				return []string{"clusters", "list", "--server", fake, "--read-token-file", readToken(t, dir)}
			},
			code: 1, want: []string{`\x1b]0;owned`}, absent: rawControls,
		},
		{
			name: "a server's dry run is printed escaped, progress and table",
			args: func(t *testing.T, dir string) []string {
				return []string{"bundle", "dry-run", write(t, dir, "candidate.tar.gz", "not checked here"), "--server", fake,
					"--read-token-file", readToken(t, dir)}
			},
			code: 2, want: []string{"prod: " + escapedHostile, "removed-api/" + escapedHostile, "dry run failed"}, absent: rawControls,
		},
		{
			name: "a server's gate report and the gate's failure are printed escaped",
			args: func(t *testing.T, dir string) []string {
				inv, err := json.Marshal(teamsInventory(t))
				if err != nil {
					t.Fatal(err)
				}
				return []string{"gate", "--server", fake, "--read-token-file", readToken(t, dir), "--target", "1.33",
					"--inventory", write(t, dir, "inventory.json", string(inv))}
			},
			code: 2, want: []string{"gate failed", `\x1b]0;owned`}, absent: rawControls,
		},
	})
}

// hostileServer is a compromised fleet server on loopback: every answer carries hostileText
// where a command prints what a server says. It answers a bounded number of requests, one
// per case.
func hostileServer(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/clusters", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": hostileText})
	})
	mux.HandleFunc("POST /api/v1/bundles/dry-run", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		_ = enc.Encode(map[string]any{"cluster": "prod", "error": hostileText})
		_ = enc.Encode(map[string]any{"cluster": hostileText, "targets": []map[string]any{{"target": "1.33",
			"before": map[string]any{"verdict": "ready", "score": 100}, "after": map[string]any{"verdict": "blocked", "score": 75},
			"new": []string{"removed-api/" + hostileText}, "changed": []string{}, "resolved": []string{}}}})
		_ = enc.Encode(map[string]any{"summary": map[string]any{"clusters": 2, "turnedBlocked": []string{hostileText},
			"turnedUnknown": []string{}, "turnedReady": []string{}, "changed": []string{hostileText},
			"candidateErrors": []string{}, "unjudged": []string{"prod"}}})
	})
	mux.HandleFunc("POST /api/v1/gate", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upgradescope-Verdict", "unknown")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_ = json.NewEncoder(w).Encode(map[string]any{"schemaVersion": 1, "source": "cluster", "clusterId": hostileText,
			"bundles": []any{}, "kb": map[string]any{"horizon": "1.37", "generatedFrom": hostileText},
			"targets": []map[string]any{{"target": "1.33", "verdict": "unknown", "score": 100, "findings": []any{}, "suppressed": []any{},
				"notAssessed": []map[string]any{{"capability": hostileText, "required": true, "reason": hostileText}}}}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Issue 30, item 16: slow pushes on the shared --ingest-token hold only the turns that token
// may hold; a cluster with its own token pushes meanwhile and is acknowledged, where before
// it waited for a turn and was refused busy.
func TestSlowPushesOnTheSharedTokenDoNotStarveClusterTokens(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "fleet.db")
	p := startServe(t, "--db", db, "--ingest-token-file", writeSecret(t, dir, "ingest", "shared-ingest-token"))
	prod := mintIngestToken(t, "prod", "--db", db)
	host := strings.TrimPrefix(p.url, "http://")
	taken := 0
	var slow []net.Conn
	for range 4 { // the three slow connections, and one more
		conn, ok := slowSharedPush(t, host)
		slow = append(slow, conn)
		if ok {
			taken++
		}
	}
	if taken != 3 {
		t.Errorf("%d slow shared pushes were given a turn, want 3 (MaxPushesInFlight)", taken)
	}
	a := pushBody(p.url, prod, variedEnvelope(t, "prod", "prod-uid", ""), "gzip")
	if a.status != http.StatusAccepted {
		t.Errorf("a cluster's own push while the shared token's hang: %d %s, want 202", a.status, a.body)
	}
	for _, conn := range slow {
		conn.Close()
	}
	peak := vmHWM(t, p.cmd.Process.Pid)
	if code := p.stop(syscall.SIGTERM, 30*time.Second); code != 0 {
		t.Errorf("serve exited %d after SIGTERM\n%s", code, p.logs.String())
	}
	cpu := p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
	t.Logf("serve: peak RSS %d MiB, CPU %s", peak>>20, cpu.Round(time.Millisecond))
	if peak > maxHostileRSS || cpu > maxHostileCPU {
		t.Errorf("serve: peak RSS %d MiB, CPU %s; want under %d MiB and %s", peak>>20, cpu, maxHostileRSS>>20, maxHostileCPU)
	}
}

// slowSharedPush opens a push on the shared token that sends its headers, then nothing, and
// answers the connection and whether the server gave it a turn (asked for its body) within
// 5 s, half the wait after which a push without one is refused busy. The connection stays
// open, holding whatever it was given, until it is closed.
func slowSharedPush(t *testing.T, host string) (net.Conn, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /api/v1/snapshots HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer shared-ingest-token\r\n"+
		"Content-Encoding: gzip\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n", host)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(conn).ReadString('\n')
	return conn, err == nil && strings.Contains(line, "100 Continue")
}

// Issue 30, item 14: a team-scoped token gating a guessed copy of another team's object is
// answered the same whether or not that object exists. Two servers hold cluster prod, one
// with team data's Ingress data/secret-ingress and one without; payments gates a copy of it
// through the binary against each. Before, the copy of an object the cluster had was the
// cluster's (the gate passed) and a guess that missed was new (it failed); now both fail
// alike, the guess counted as in a namespace no team owns, and payments is told the same,
// byte for byte.
func TestAGuessedObjectGatedByATeamTokenTellsNothing(t *testing.T) {
	t.Setenv(envDBURL, "")
	buildBinary(t)
	guess := map[string]any{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00Z",
		"capabilities": map[string]any{"api-usage": map[string]any{"available": true}},
		"apiUsage": []any{map[string]any{"group": "extensions", "version": "v1beta1", "kind": "Ingress", "count": 1,
			"namespaces": map[string]any{"data": 1}, "objects": []any{map[string]any{"namespace": "data", "name": "secret-ingress"}}}}}
	raw, err := json.Marshal(guess)
	if err != nil {
		t.Fatal(err)
	}
	var outs []string
	for _, withData := range []bool{true, false} {
		dir := t.TempDir()
		url, payments := serveTeams(t, dir, withData)
		args := []string{"gate", "--server", url, "--read-token-file", write(t, dir, "payments.token", payments),
			"--cluster", "prod", "--target", "1.33", "--inventory", write(t, dir, "guess.json", string(raw))}
		ctx, cancel := context.WithTimeout(t.Context(), hangAfter)
		code, use, out := measuredUse(ctx, t, dir, agentBin, args...)
		cancel()
		checkHostile(t, hostile{code: 2, want: []string{"Ingress removed in 1.22 (2 objects)", "gate failed"}, absent: []string{"(3 objects)"}},
			args, code, use.peak, out)
		if use.cpu > maxHostileCPU {
			t.Errorf("%v: %s of CPU, want under %s", args, use.cpu, maxHostileCPU)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Errorf("payments is told apart whether data's Ingress exists:\nwith it:\n%s\nwithout:\n%s", outs[0], outs[1])
	}
}

// serveTeams starts serve on dir with cluster prod pushed: payments' Ingress shop/a, and
// with withData team data's Ingress data/secret-ingress. It answers the URL and a read token
// of team payments.
func serveTeams(t *testing.T, dir string, withData bool) (url, payments string) {
	t.Helper()
	db := filepath.Join(dir, "fleet.db")
	p := startServe(t, "--db", db, "--ingest-token-file", writeSecret(t, dir, "ingest", "shared-ingest-token"))
	doc := teamsInventory(t)
	if withData {
		ingress := doc["apiUsage"].([]any)[0].(map[string]any)
		ingress["count"] = 2
		ingress["namespaces"] = map[string]any{"shop": 1, "data": 1}
		ingress["objects"] = append(ingress["objects"].([]any), map[string]any{"namespace": "data", "name": "secret-ingress"})
	}
	push := gzipEnvelope(t, map[string]any{"schemaVersion": 1, "clusterName": "prod", "agentVersion": "test",
		"kbVersion": "test", "inventory": doc})
	if a := pushBody(p.url, "shared-ingest-token", push, "gzip"); a.status != http.StatusAccepted {
		t.Fatalf("push prod: %d %s", a.status, a.body)
	}
	r := runCLI(t, "tokens", "create", "--read", "--teams", "payments", "--db", db)
	if r.code != 0 || !tokenLine.MatchString(r.stdout) {
		t.Fatalf("tokens create --read: %d %q %q", r.code, r.stdout, r.stderr)
	}
	return p.url, strings.TrimSpace(r.stdout)
}
