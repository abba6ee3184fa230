package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/pgtest"
	"github.com/upgradescope/upgradescope/inventory"
)

// ingestToken is the shared --ingest-token of the fault tests.
const ingestToken = "fault-ingest-token-0123456789"

// acks collects every snapshot id the server acknowledged (202 or 200), and every status.
type acks struct {
	mu       sync.Mutex
	ids      map[int64]string // snapshot id -> cluster
	statuses map[int]int
	samples  map[int]pushAnswer // one answer per status, for messages
}

func newAcks() *acks {
	return &acks{ids: map[int64]string{}, statuses: map[int]int{}, samples: map[int]pushAnswer{}}
}

func (a *acks) record(cluster string, ans pushAnswer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.statuses[ans.status]++
	if _, ok := a.samples[ans.status]; !ok {
		a.samples[ans.status] = ans
	}
	if (ans.status == http.StatusAccepted || ans.status == http.StatusOK) && ans.snapshotID > 0 {
		a.ids[ans.snapshotID] = cluster
	}
}

func (a *acks) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.ids)
}

func (a *acks) snapshot() (map[int64]string, map[int]int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make(map[int64]string, len(a.ids))
	for k, v := range a.ids {
		ids[k] = v
	}
	st := make(map[int]int, len(a.statuses))
	for k, v := range a.statuses {
		st[k] = v
	}
	return ids, st
}

// runPushers starts n pushers, each its own cluster ("<prefix>-i") pushing a new inventory
// (a new namespace) per round to the URL base() answers, until stop is closed, at most
// maxRounds rounds each, or (with stopOnDown) the first transport error. pause is the
// wait after each push.
func runPushers(t *testing.T, n int, prefix string, base func() string, rec *acks, stop <-chan struct{},
	maxRounds int, pause time.Duration, stopOnDown bool) *sync.WaitGroup {
	t.Helper()
	bodies := make([][][]byte, n) // encoded up front: t.Fatal belongs to the test goroutine
	for i := range n {
		for r := range maxRounds {
			bodies[i] = append(bodies[i], variedEnvelope(t, fmt.Sprintf("%s-%d", prefix, i),
				fmt.Sprintf("00000000-0000-4000-8000-%012d", i), fmt.Sprintf("round-%d", r)))
		}
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cluster := fmt.Sprintf("%s-%d", prefix, i)
			for _, body := range bodies[i] {
				select {
				case <-stop:
					return
				default:
				}
				ans := pushBody(base(), ingestToken, body, "gzip")
				rec.record(cluster, ans)
				if ans.status == 0 && stopOnDown {
					return
				}
				time.Sleep(pause)
			}
		}()
	}
	return &wg
}

// kill -9 in the middle of pushes loses no acknowledged snapshot and leaves the SQLite file
// sound; a push the real client could not deliver while the server was down is delivered by
// its retry once the server is back.
func TestServeKilledUnderLoadKeepsEveryAcknowledgedSnapshot(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "fleet.db")
	tokenFile := writeSecret(t, dir, "ingest", ingestToken)
	p := startServe(t, "--db", db, "--ingest-token-file", tokenFile)
	addr := strings.TrimPrefix(p.url, "http://")

	rec := newAcks()
	stop := make(chan struct{})
	wg := runPushers(t, 8, "crash", func() string { return p.url }, rec, stop, 200, 0, true)
	if !pollUntil(60*time.Second, 20*time.Millisecond, func() bool { return rec.count() >= 24 }) {
		t.Fatalf("only %d pushes acknowledged in 60 s", rec.count())
	}
	p.kill() // SIGKILL, with pushes in flight
	close(stop)
	wg.Wait()
	acked, statuses := rec.snapshot()
	t.Logf("acknowledged %d snapshots before SIGKILL; statuses %v", len(acked), statuses)

	// While the server is down, the agent's client keeps the push pending.
	now := time.Now()
	client, err := push.New(push.Options{URL: p.url, ClusterName: "after-crash", AgentVersion: "test", KBVersion: "test",
		Token: func() (string, error) { return ingestToken, nil }, Now: func() time.Time { return now },
		Jitter: func() float64 { return 1 }, ForceEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	doc := teamsDocument(t, "afc00000-0000-4000-8000-000000000001")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if res, err := client.Offer(ctx, doc); res != push.Failed {
		t.Fatalf("push with the server down: %s (%v), want failed and kept", res, err)
	}

	p2 := startServe(t, "--db", db, "--ingest-token-file", tokenFile, "--listen", addr)
	next, pending := client.NextRetry()
	if !pending {
		t.Fatal("the client dropped the failed push")
	}
	now = next // the retry is due: no need to wait the real 10 s
	if res, err := client.Retry(ctx); res != push.Delivered {
		t.Fatalf("retry after the restart: %s (%v), want delivered", res, err)
	}
	if code := p2.stop(syscall.SIGTERM, 30*time.Second); code != 0 {
		t.Fatalf("serve after the restart exited %d on SIGTERM", code)
	}

	ro := openSQLiteReadOnly(t, db)
	var check string
	if err := ro.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check after kill -9: %q (%v)", check, err)
	}
	stored := storedSnapshotIDs(t, ro)
	for id, cluster := range acked {
		if !stored[id] {
			t.Errorf("snapshot %d of %s was acknowledged before the kill and is not stored", id, cluster)
		}
	}
	var afterCrash int
	if err := ro.QueryRow(`SELECT count(*) FROM snapshots s JOIN clusters c ON c.id = s.cluster_id WHERE c.name = 'after-crash'`).Scan(&afterCrash); err != nil || afterCrash != 1 {
		t.Errorf("snapshots of the retried cluster: %d (%v), want 1", afterCrash, err)
	}
}

// teamsDocument is the teams inventory as a parsed document with kube-system UID uid.
func teamsDocument(t *testing.T, uid string) *inventory.Document {
	t.Helper()
	m := teamsInventory(t)
	m["clusterId"] = uid
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := inventory.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// Hostile pushes, sixteen at once of each kind, get their documented answers (413, 422, 401,
// or 503 with Retry-After while the server's budgets are taken), never 500 and never a 2xx;
// nothing is stored, and the server's peak RSS stays under 512 MiB.
func TestServeHostilePushesStayBoundedInMemory(t *testing.T) {
	dir := t.TempDir()
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--ingest-token-file", writeSecret(t, dir, "ingest", ingestToken))
	base := vmHWM(t, p.cmd.Process.Pid)

	tests := []struct {
		name     string
		body     []byte
		encoding string
		token    string
		want     []int
	}{
		{"a 20 MiB inventory with a field the schema refuses is unprocessable", bigInvalidPush(t), "gzip", ingestToken,
			[]int{http.StatusUnprocessableEntity, http.StatusServiceUnavailable}},
		{"a gzip bomb is too large", gzipBomb(t, 256<<20), "gzip", ingestToken,
			[]int{http.StatusRequestEntityTooLarge, http.StatusServiceUnavailable}},
		{"invalid JSON is unprocessable", gzipBytes(t, []byte(`{"schemaVersion":1,"clusterName":"x",`)), "gzip", ingestToken,
			[]int{http.StatusUnprocessableEntity, http.StatusServiceUnavailable}},
		{"an inventory the schema refuses is unprocessable", gzipEnvelope(t, map[string]any{"schemaVersion": 1, "clusterName": "hostile",
			"inventory": map[string]any{"schemaVersion": 1, "source": "nowhere", "capabilities": 7}}), "gzip", ingestToken,
			[]int{http.StatusUnprocessableEntity, http.StatusServiceUnavailable}},
		{"a wrong token is unauthorized", variedEnvelope(t, "hostile", "00000000-0000-4000-8000-0000000000ff", ""), "gzip", "not-the-token",
			[]int{http.StatusUnauthorized}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answers := make(chan pushAnswer, 16)
			for range 16 {
				go func() { answers <- pushBody(p.url, tt.token, tt.body, tt.encoding) }()
			}
			seen := map[int]int{}
			for range 16 {
				a := <-answers
				seen[a.status]++
				if !contains(tt.want, a.status) {
					t.Errorf("status %d (%s), want one of %v", a.status, strings.TrimSpace(a.body), tt.want)
				}
				if a.status == http.StatusServiceUnavailable && a.retryAfter == "" {
					t.Errorf("503 without Retry-After")
				}
			}
			t.Logf("answers %v", seen)
		})
	}
	var clusters struct {
		Clusters []json.RawMessage `json:"clusters"`
	}
	if code := getJSON(t, p.url, "/api/v1/clusters", "", &clusters); code != http.StatusOK || len(clusters.Clusters) != 0 {
		t.Errorf("clusters after only invalid pushes: %d %s, want none stored", code, clusters.Clusters)
	}
	peak := vmHWM(t, p.cmd.Process.Pid)
	t.Logf("serve peak RSS (VmHWM) %d MiB, %d MiB after start", peak>>20, base>>20)
	if peak > 512<<20 {
		t.Errorf("serve peak RSS %d MiB, want under 512 MiB", peak>>20)
	}
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// bigInvalidPush is a valid gzip whose JSON, just under the 20 MiB cap, is an envelope whose
// inventory carries a 20 MiB field the schema does not allow. Random hex compresses about
// two to one, so about 10 MiB travel.
func bigInvalidPush(t *testing.T) []byte {
	t.Helper()
	doc := teamsInventory(t)
	noise := make([]byte, (push.MaxBytes-64<<10)/2)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	doc["padding"] = hex.EncodeToString(noise)
	return gzipEnvelope(t, map[string]any{"schemaVersion": 1, "clusterName": "hostile-big", "agentVersion": "test", "inventory": doc})
}

// gzipBomb is size zero bytes gzipped: about a thousandth of size on the wire.
func gzipBomb(t *testing.T, size int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range size >> 20 {
		if _, err := zw.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipBytes(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Two replicas on one PostgreSQL database: the store's transaction, not either replica's
// cache, decides who owns a fresh name, so of two first pushes with different kube-system
// UIDs exactly one wins in every round; and both replicas then serve the same fleet.
func TestServeTwoReplicasOnOnePostgresAgree(t *testing.T) {
	url := pgtest.URL(t)
	dir := t.TempDir()
	tokenFile := writeSecret(t, dir, "ingest", ingestToken)
	r1 := startServe(t, "--db-url", url, "--ingest-token-file", tokenFile)
	r2 := startServe(t, "--db-url", url, "--ingest-token-file", tokenFile)

	for round := range 20 {
		name := fmt.Sprintf("race-%d", round)
		bodies := [2][]byte{
			variedEnvelope(t, name, fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", round), ""),
			variedEnvelope(t, name, fmt.Sprintf("bbbbbbbb-0000-4000-8000-%012d", round), ""),
		}
		var answers [2]pushAnswer
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, r := range []*serveProc{r1, r2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start // both pushes leave together
				answers[i] = pushBody(r.url, ingestToken, bodies[i], "gzip")
			}()
		}
		close(start)
		wg.Wait()
		got := []int{answers[0].status, answers[1].status}
		if !(got[0] == 202 && got[1] == 409 || got[0] == 409 && got[1] == 202) {
			t.Errorf("round %d: replicas answered %v (%s | %s), want one 202 and one 409", round, got,
				strings.TrimSpace(answers[0].body), strings.TrimSpace(answers[1].body))
		}
	}

	for i := range 6 {
		r := []*serveProc{r1, r2}[i%2]
		if a := pushBody(r.url, ingestToken, variedEnvelope(t, "shared", "5eed0000-0000-4000-8000-000000000001", fmt.Sprintf("ns-%d", i)), "gzip"); a.status != http.StatusAccepted {
			t.Fatalf("push %d to replica %d: %d %s", i, i%2+1, a.status, a.body)
		}
	}
	var fleets [2]struct {
		Targets  json.RawMessage `json:"targets"`
		Clusters json.RawMessage `json:"clusters"`
	}
	// The teams inventory runs 1.32: 1.33 is its next minor, asked for by name because the
	// default columns need the clusters' server versions, which the store does not read yet
	// (fleet/server/store/sql.go:83).
	for i, r := range []*serveProc{r1, r2} {
		if code := getJSON(t, r.url, "/api/v1/fleet", "", &fleets[i]); code != http.StatusOK {
			t.Fatalf("GET /api/v1/fleet on replica %d: %d", i+1, code)
		}
	}
	if !bytes.Equal(fleets[0].Targets, fleets[1].Targets) || !bytes.Equal(fleets[0].Clusters, fleets[1].Clusters) {
		t.Errorf("the replicas answer different fleets:\n%s %s\n%s %s", fleets[0].Targets, fleets[0].Clusters, fleets[1].Targets, fleets[1].Clusters)
	}
	var rows []struct {
		Name  string                     `json:"name"`
		Cells map[string]json.RawMessage `json:"cells"`
	}
	if err := json.Unmarshal(fleets[0].Clusters, &rows); err != nil {
		t.Fatal(err)
	}
	shared := false
	for _, r := range rows {
		if r.Name == "shared" {
			shared = string(r.Cells["1.33"]) != "null" && r.Cells["1.33"] != nil
		}
	}
	if !shared {
		t.Errorf("the fleet has no 1.33 cell for the shared cluster: %s", fleets[0].Clusters)
	}
}

// pgBin is where hack/pg-env.sh finds PostgreSQL 15.
const pgBin = "/usr/lib/postgresql/15/bin"

// privatePostgres is a PostgreSQL of this test's own (hack/pg-env.sh with a work directory
// and port nobody else uses), since the test stops it: the shared one must stay up. It answers
// its URL, and functions that stop it keeping its data and start it again.
type privatePostgres struct {
	dir, port, url string
}

func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	if _, err := os.Stat(pgBin + "/initdb"); err != nil {
		if required, _ := strconv.ParseBool(os.Getenv(pgtest.EnvRequire)); required {
			t.Fatalf("PostgreSQL is not installed (%v) but %s is set", err, pgtest.EnvRequire)
		}
		t.Skipf("PostgreSQL is not installed: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	// Short and directly under /tmp: the unix socket's path must fit in 107 bytes.
	pg := &privatePostgres{dir: "/tmp/us-pgfault-" + hex.EncodeToString(suffix), port: port,
		url: "postgres://postgres@127.0.0.1:" + port + "/postgres?sslmode=disable"}
	t.Cleanup(func() { _ = pg.script("stop") })
	if err := pg.script("start"); err != nil {
		t.Fatal(err)
	}
	return pg
}

// script runs hack/pg-env.sh cmd for this instance; start restarts a stopped one on its data.
func (pg *privatePostgres) script(cmd string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, "../../hack/pg-env.sh", cmd)
	c.Env = append(os.Environ(), "PG_WORK_DIR="+pg.dir, "PG_PORT="+pg.port)
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("pg-env.sh %s: %v\n%s", cmd, err, out)
	}
	return nil
}

// halt stops the server and keeps its data (pg-env.sh stop would remove it).
func (pg *privatePostgres) halt() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{pgBin + "/pg_ctl", "stop", "-m", "fast", "-w", "-D", pg.dir + "/data"}
	if os.Geteuid() == 0 {
		args = append([]string{"runuser", "-u", "postgres", "--"}, args...)
	}
	c := exec.CommandContext(ctx, args[0], args[1:]...)
	c.Dir = pg.dir
	if out, err := c.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// PostgreSQL stopped under load: pushes answer 503 with Retry-After and /readyz 503; started
// again, the same serve process takes pushes and is ready again, and every snapshot it
// acknowledged at any time is in the database.
func TestServePostgresStoppedAndStartedUnderLoad(t *testing.T) {
	pg := startPrivatePostgres(t)
	dir := t.TempDir()
	p := startServe(t, "--db-url", pg.url, "--ingest-token-file", writeSecret(t, dir, "ingest", ingestToken))

	rec := newAcks()
	stop := make(chan struct{})
	wg := runPushers(t, 4, "pgload", func() string { return p.url }, rec, stop, 300, 100*time.Millisecond, false)
	stopPushers := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopPushers() // a failed test must not leave pushers running
	if !pollUntil(60*time.Second, 50*time.Millisecond, func() bool { return rec.count() >= 8 }) {
		t.Fatalf("only %d pushes acknowledged in 60 s", rec.count())
	}

	probes := 0
	probe := func() pushAnswer {
		probes++
		return pushBody(p.url, ingestToken, variedEnvelope(t, "pgprobe", "9b0be000-0000-4000-8000-000000000001", fmt.Sprintf("probe-%d", probes)), "gzip")
	}
	if err := pg.halt(); err != nil {
		t.Fatal(err)
	}
	var down pushAnswer
	if !pollUntil(30*time.Second, 200*time.Millisecond, func() bool {
		down = probe()
		return down.status == http.StatusServiceUnavailable && statusOf(p.url, "/readyz") == http.StatusServiceUnavailable
	}) {
		t.Fatalf("with PostgreSQL stopped: push %d %s, /readyz %d; want 503 for both", down.status, down.body, statusOf(p.url, "/readyz"))
	}
	if down.retryAfter == "" {
		t.Errorf("503 to a push while PostgreSQL is down has no Retry-After")
	}

	if err := pg.script("start"); err != nil {
		t.Fatal(err)
	}
	var up pushAnswer
	if !pollUntil(60*time.Second, 200*time.Millisecond, func() bool {
		up = probe()
		return up.status == http.StatusAccepted && statusOf(p.url, "/readyz") == http.StatusOK
	}) {
		t.Fatalf("with PostgreSQL back: push %d %s, /readyz %d; want 202 and 200 without a restart", up.status, up.body, statusOf(p.url, "/readyz"))
	}
	stopPushers()
	acked, statuses := rec.snapshot()
	t.Logf("pushers' answers %v, %d snapshots acknowledged", statuses, len(acked))
	for st, n := range statuses {
		if st != http.StatusAccepted && st != http.StatusOK && st != http.StatusServiceUnavailable {
			t.Errorf("%d pushes answered %d (%s), want only 202, 200 or 503", n, st, strings.TrimSpace(rec.samples[st].body))
		}
	}
	st, err := store.Open(context.Background(), pg.url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stored := storedSnapshotIDs(t, st.(interface{ SQLDB() *sql.DB }).SQLDB())
	for id, cluster := range acked {
		if !stored[id] {
			t.Errorf("snapshot %d of %s was acknowledged and is not stored", id, cluster)
		}
	}
}
