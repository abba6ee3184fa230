package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"
)

// serveProc is a running `upgradescope serve` child.
type serveProc struct {
	cmd  *exec.Cmd
	url  string // http(s)://127.0.0.1:PORT
	logs *syncbuf.Buffer
	done chan struct{} // closed when the process has exited
}

var listeningLine = regexp.MustCompile(`listening on (https?://\S+)`)

// serveStartTimeout bounds how long a serve may take to print its listening line; migrating a
// fresh database and compiling the policies take a second or two on a busy machine.
const serveStartTimeout = 60 * time.Second

// startServe runs the binary's serve on a free loopback port with args and waits for its
// listening line. The process is killed when the test ends if the test has not stopped it.
func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	p, err := tryStartServe(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func tryStartServe(t *testing.T, args ...string) (*serveProc, error) {
	t.Helper()
	buildBinary(t)
	p := &serveProc{logs: &syncbuf.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(agentBin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	p.cmd.Env = serveEnv()
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	// The server must not outlive a test binary that dies.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("serve log:\n%s", p.logs.String())
		}
	})
	deadline := time.After(serveStartTimeout)
	for {
		if m := listeningLine.FindStringSubmatch(p.logs.String()); m != nil {
			p.url = m[1]
			return p, nil
		}
		select {
		case <-p.done:
			return p, fmt.Errorf("serve exited %d before listening:\n%s", p.cmd.ProcessState.ExitCode(), p.logs.String())
		case <-deadline:
			return p, fmt.Errorf("serve did not listen within %s:\n%s", serveStartTimeout, p.logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// serveEnv is the test's environment without the variables that would let the caller's
// shell choose serve's database or tokens.
func serveEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "UPGRADESCOPE_DB_URL=") || strings.HasPrefix(kv, "UPGRADESCOPE_INGEST_TOKEN=") ||
			strings.HasPrefix(kv, "UPGRADESCOPE_READ_TOKEN=") || strings.HasPrefix(kv, "UPGRADESCOPE_ADMIN_TOKEN=") ||
			strings.HasPrefix(kv, "UPGRADESCOPE_ALLOWED_HOSTS=") || strings.HasPrefix(kv, "UPGRADESCOPE_SLACK_WEBHOOK=") ||
			strings.HasPrefix(kv, "UPGRADESCOPE_WEBHOOK=") || strings.HasPrefix(kv, "UPGRADESCOPE_WEBHOOK_SECRET=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runServeToExit runs serve with args and waits (bounded) for it to exit by itself, as it
// must for a refused configuration; it answers the exit code and the output.
func runServeToExit(t *testing.T, args ...string) (int, string) {
	t.Helper()
	buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentBin, append([]string{"serve"}, args...)...)
	cmd.Env = serveEnv()
	out, _ := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("serve %v still ran after 60 s:\n%s", args, out)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// kill ends the process at once (SIGKILL) and waits for it.
func (p *serveProc) kill() {
	if p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop sends sig and waits up to within for the exit; it answers the exit code, -1 (and
// kills the process) when it did not exit in time.
func (p *serveProc) stop(sig syscall.Signal, within time.Duration) int {
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		p.kill()
		return -1
	}
}

// vmHWM is the peak resident set of a live process, from /proc/PID/status. Unlike a child's
// rusage maxrss it starts afresh at exec, so the test binary's own size does not count.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// pushAnswer is what the server said to one push.
type pushAnswer struct {
	status     int
	retryAfter string
	clusterID  int64
	snapshotID int64
	duplicate  bool
	body       string
}

// httpClient bounds every request a test makes: a server that hangs fails the test instead.
var httpClient = &http.Client{Timeout: 60 * time.Second}

// pushBody posts body (already encoded as encoding says, "" for none) to base's ingest
// endpoint with token. A transport error is answered as status 0 in body.
func pushBody(base, token string, body []byte, encoding string) pushAnswer {
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/snapshots", bytes.NewReader(body))
	if err != nil {
		return pushAnswer{body: err.Error()}
	}
	req.Header.Set("Content-Type", "application/json")
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return pushAnswer{body: err.Error()}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	a := pushAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(raw)}
	var ack struct {
		ClusterID  int64 `json:"clusterId"`
		SnapshotID int64 `json:"snapshotId"`
		Duplicate  bool  `json:"duplicate"`
	}
	if json.Unmarshal(raw, &ack) == nil {
		a.clusterID, a.snapshotID, a.duplicate = ack.ClusterID, ack.SnapshotID, ack.Duplicate
	}
	return a
}

// getJSON GETs base+path with token ("" for none) into out (nil to skip) and answers the status.
func getJSON(t *testing.T, base, path, token string, out any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("GET %s: %v in %s", path, err, raw)
		}
	}
	return resp.StatusCode
}

// statusOf GETs base+path and answers only the status, 0 on a transport error.
func statusOf(base, path string) int {
	resp, err := httpClient.Get(base + path)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// teamsInventory is testdata/teams/inventory.json as a generic document, so tests can vary
// it (namespaces, clusterId) and stay valid against the inventory schema.
func teamsInventory(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/teams/inventory.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// variedEnvelope is a gzipped push of the teams inventory for cluster name with kube-system
// UID uid and one extra namespace extra: a distinct extra is a distinct snapshot.
func variedEnvelope(t *testing.T, name, uid, extra string) []byte {
	t.Helper()
	doc := teamsInventory(t)
	doc["clusterId"] = uid
	if extra != "" {
		doc["namespaces"] = append(doc["namespaces"].([]any), map[string]any{"name": extra, "team": "load"})
	}
	return gzipEnvelope(t, map[string]any{"schemaVersion": 1, "clusterName": name, "agentVersion": "test",
		"kbVersion": "test", "inventory": doc})
}

// gzipEnvelope gzips v's JSON, as a push body travels.
func gzipEnvelope(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// mintIngestToken runs `tokens create NAME --db-style args` and answers the token.
func mintIngestToken(t *testing.T, name string, dbArgs ...string) string {
	t.Helper()
	t.Setenv(envDBURL, "")
	return createToken(t, name, dbArgs...)
}

// writeSecret writes a token to a 0600 file in dir and answers its path.
func writeSecret(t *testing.T, dir, name, value string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// pollUntil calls cond every interval until it answers true or within has passed.
func pollUntil(within, interval time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(interval) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// openSQLiteReadOnly opens a SQLite file read-only with the modernc driver the store
// registers, for checks after the server has stopped.
func openSQLiteReadOnly(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// storedSnapshotIDs answers every snapshot id in db.
func storedSnapshotIDs(t *testing.T, db *sql.DB) map[int64]bool {
	t.Helper()
	rows, err := db.Query(`SELECT id FROM snapshots`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// tlsClient makes one new connection per request with cfg, so every request handshakes.
func tlsClient(cfg *tls.Config) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
}
