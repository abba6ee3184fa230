package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/push"
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
