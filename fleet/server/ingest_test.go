package server_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/inventory"
)

func gzipBytes(t testing.TB, data []byte) []byte {
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

func TestIngestAnswersEachRefusalWithItsStatusAndStoresNothing(t *testing.T) {
	const shared = "shared-ingest-token"
	ts := newServer(t, func(c *server.Config) { c.IngestToken = shared; c.MaxSnapshotBytes = 64 << 10 })
	prodToken := ts.mintIngest("prod")
	doc := teamsInventory(t)
	good := envelope(t, "prod", doc)
	gz := http.Header{"Content-Encoding": {"gzip"}}
	for _, tc := range []struct {
		name   string
		token  string
		body   []byte
		header http.Header
		status int
		says   string
	}{
		{"a push without a token is unauthorized", "", good, gz, 401, "ingest token is required"},
		{"a push with an unknown token is unauthorized", "not-a-token", good, gz, 401, "invalid ingest token"},
		{"a lowercase bearer scheme is still read", "", good, http.Header{"Content-Encoding": {"gzip"}, "Authorization": {"bearer nope"}}, 401, "invalid ingest token"},
		{"a cluster's token pushing as another cluster is forbidden", prodToken, envelope(t, "staging", doc), gz, 403, "pushes only as cluster"},
		{"an unknown content encoding is unsupported", shared, good, http.Header{"Content-Encoding": {"br"}}, 415, "Content-Encoding"},
		{"a body larger than the limit on the wire is too large", shared, bytes.Repeat([]byte("x"), 70<<10), http.Header{}, 413, "--max-snapshot-bytes"},
		{"a gzip bomb past the limit decompressed is too large", shared, gzipBytes(t, bytes.Repeat([]byte(" "), 1<<20)), gz, 413, "--max-snapshot-bytes"},
		{"a body that is not gzip is invalid", shared, []byte("not gzip"), gz, 422, "gzip"},
		{"a body that is not JSON is invalid", shared, gzipBytes(t, []byte("{nope")), gz, 422, "invalid push"},
		{"another push protocol version is invalid", shared, gzipBytes(t, []byte(`{"schemaVersion":2,"clusterName":"prod","inventory":{}}`)), gz, 422, "schemaVersion 2"},
		{"a cluster name that is not RFC 1123 is invalid", shared, gzipBytes(t, []byte(`{"schemaVersion":1,"clusterName":"Prod_1","inventory":{}}`)), gz, 422, "RFC 1123"},
		{"an inventory the schema refuses names its JSON pointer", shared, gzipBytes(t, []byte(`{"schemaVersion":1,"clusterName":"prod","inventory":{"schemaVersion":1,"source":"cluster","collectedAt":"2026-11-30T00:00:00Z","capabilities":{},"apiUsage":[{"group":"","version":"v1","kind":"X","count":"one"}]}}`)), gz, 422, "/inventory"},
		{"an escaped timestamp, which the stored inventory could not be read back with, is invalid", shared, gzipBytes(t, []byte(`{"schemaVersion":1,"clusterName":"prod","inventory":{"schemaVersion":1,"source":"cluster","collectedAt":"2026-11-30T00:00:00\u005a","capabilities":{},"apiUsage":[]}}`)), gz, 422, "/collectedAt: parsing time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do("POST", push.Path, tc.token, tc.body, tc.header)
			if r.status != tc.status || !strings.Contains(string(r.body), tc.says) {
				t.Errorf("status %d body %s, want %d saying %q", r.status, r.body, tc.status, tc.says)
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
		})
	}
	clusters, err := ts.store.Clusters(t.Context())
	if err != nil || len(clusters) != 0 {
		t.Errorf("after refused pushes the store holds clusters %v (err %v), want none", clusters, err)
	}
}

func TestAFirstPushIsStoredAndEvaluatedAndTheSameInventoryAgainIsADuplicate(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.Targets = []string{"1.34"} })
	tok := ts.mintIngest("prod")
	doc := teamsInventory(t)

	first := ts.push(tok, envelope(t, "prod", doc))
	if first.status != http.StatusAccepted {
		t.Fatalf("first push: %d %s, want 202", first.status, first.body)
	}
	got := first.json(t)
	if got["duplicate"] != false || got["snapshotId"] == nil {
		t.Errorf("first push answered %v, want a new snapshot", got)
	}
	if ev, _ := got["evaluated"].([]any); len(ev) != 2 || ev[0] != "1.33" || ev[1] != "1.34" {
		t.Errorf("evaluated %v, want [1.33 1.34]: the next minor after v1.32.4 and --targets", got["evaluated"])
	}
	// The answer judges each evaluated target as the store keeps it: what the reads show.
	id := int(got["clusterId"].(float64))
	for i, v := range got["verdicts"].([]any) {
		v := v.(map[string]any)
		cell := ts.get(fmt.Sprintf("/api/v1/clusters/%d/report?target=%s", id, v["target"]), "").json(t)
		tr := cell["report"].(map[string]any)["targets"].([]any)[0].(map[string]any)
		if v["target"] != got["evaluated"].([]any)[i] || v["verdict"] != tr["verdict"] || v["score"] != tr["score"] || v["blockers"] != tr["blockers"] {
			t.Errorf("verdicts[%d] %v, want the stored %v %v score %v, %v blockers", i, v, tr["target"], tr["verdict"], tr["score"], tr["blockers"])
		}
	}
	if v, _ := got["verdicts"].([]any); len(v) != 2 {
		t.Errorf("verdicts %v, want one per evaluated target", got["verdicts"])
	}

	doc.CollectedAt = doc.CollectedAt.Add(3600e9) // a later collection of the same state
	again := ts.push(tok, envelope(t, "prod", doc))
	if again.status != http.StatusOK || again.json(t)["duplicate"] != true || again.json(t)["verdicts"] != nil {
		t.Fatalf("same inventory again: %d %s, want 200 duplicate", again.status, again.body)
	}
	if again.json(t)["snapshotId"] != got["snapshotId"] {
		t.Errorf("duplicate points at snapshot %v, want the first one %v", again.json(t)["snapshotId"], got["snapshotId"])
	}

	doc.Namespaces = doc.Namespaces[:1] // the cluster changed
	changed := ts.push(tok, envelope(t, "prod", doc))
	if changed.status != http.StatusAccepted || changed.json(t)["snapshotId"] == got["snapshotId"] {
		t.Fatalf("changed inventory: %d %s, want 202 with a new snapshot", changed.status, changed.body)
	}
	c, err := ts.store.Head(t.Context(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	hist, err := ts.store.History(t.Context(), c.ID, "1.33", 0)
	if err != nil || len(hist) != 2 {
		t.Errorf("history at 1.33 holds %d points (err %v), want 2: one per distinct inventory", len(hist), err)
	}
}

func TestASecondClusterPushingABoundNameIsAConflict(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	doc := teamsInventory(t)
	if r := ts.push("shared", envelope(t, "prod", doc)); r.status != http.StatusAccepted {
		t.Fatalf("first push: %d %s", r.status, r.body)
	}
	for _, tc := range []struct {
		name, uid, says string
	}{
		{"another UID", "2b2b2b2b-0000-4000-8000-00000000000b", "another cluster UID"},
		{"no UID", "", "without a UID"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := teamsInventory(t)
			other.ClusterID = tc.uid
			r := ts.push("shared", envelope(t, "prod", other))
			if r.status != http.StatusConflict || !strings.Contains(string(r.body), tc.says) {
				t.Errorf("push from %s: %d %s, want 409 saying %q", tc.name, r.status, r.body, tc.says)
			}
		})
	}
}

func TestConcurrentPushesAreEachStoredOnceOrToldToRetry(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	var mu sync.Mutex
	accepted := map[string]int{}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			name := fmt.Sprintf("cluster-%d", i%4)
			doc := teamsInventory(t)
			doc.ClusterID = name + "-uid"
			doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: fmt.Sprintf("ns-%d", i)})
			r := ts.push("shared", envelope(t, name, doc))
			mu.Lock()
			defer mu.Unlock()
			switch r.status {
			case 202:
				accepted[name]++
			case 503:
				if r.header.Get("Retry-After") == "" {
					t.Errorf("503 without Retry-After")
				}
			default:
				t.Errorf("push %d: %d %s", i, r.status, r.body)
			}
		})
	}
	wg.Wait()
	for name, n := range accepted {
		c, err := ts.store.Head(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		hist, err := ts.store.History(t.Context(), c.ID, "1.33", 0)
		if err != nil || len(hist) != n {
			t.Errorf("%s: %d evaluations stored (err %v), want one per accepted push: %d", name, len(hist), err, n)
		}
	}
}

func TestABodyThatStopsArrivingIsATimeout(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken, c.BodyTimeout = "shared", 300*time.Millisecond })
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	// Headers promising 1000 bytes, then ten of them, then nothing.
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer shared\r\nContent-Length: 1000\r\n\r\n0123456789", push.Path)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "took longer than 300ms") {
		t.Errorf("a stalled body: %d %s, want 408", resp.StatusCode, body)
	}
}

func TestOneClusterTokenPushesOneAtATime(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	prod, staging := ts.mintIngest("prod"), ts.mintIngest("staging")
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// prod's first push sends its headers and then waits: it holds its turn.
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n", push.Path, prod)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := bufio.NewReader(conn).ReadString('\n'); err != nil || !strings.Contains(line, "100") {
		t.Fatalf("the first push was not taken in: %q %v", line, err)
	}
	if r := ts.push(prod, envelope(t, "prod", teamsInventory(t))); r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Errorf("a second push with prod's token while one is in flight: %d %s, want 503 with Retry-After", r.status, r.body)
	}
	other := otherCluster(t, "staging-uid")
	if r := ts.push(staging, envelope(t, "staging", other)); r.status != 202 {
		t.Errorf("another cluster's push meanwhile: %d %s, want 202", r.status, r.body)
	}
}

// slowPush opens a push with token that sends its headers and then nothing: once the server
// asks for the body (100 Continue) it holds a turn, until the body's time runs out. It
// answers whether the server took it in before the connection's read deadline.
func (ts *testServer) slowPush(token string, wait time.Duration) bool {
	ts.t.Helper()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n", push.Path, token)
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && strings.Contains(line, "100")
}

// Slow pushes on the shared token hold at most MaxPushesInFlight turns: a cluster with its
// own token still pushes, and is answered, while they hang.
func TestSlowPushesOnTheSharedTokenLeaveClustersATurn(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	prod := ts.mintIngest("prod")
	for i := range admission.MaxPushesInFlight {
		if !ts.slowPush("shared", 10*time.Second) {
			t.Fatalf("slow shared push %d was not taken in", i+1)
		}
	}
	// One more waits for a turn of the shared token's, holding none of the others.
	if ts.slowPush("shared", 300*time.Millisecond) {
		t.Errorf("the shared token took a turn past MaxPushesInFlight")
	}
	if r := ts.push(prod, envelope(t, "prod", teamsInventory(t))); r.status != 202 {
		t.Errorf("a cluster's push while the shared token's pushes hang: %d %s, want 202", r.status, r.body)
	}
}

// Evaluated hears of each inventory an ingest judged, with its targets and the team map
// applied, so a bundle set can rehearse a new revision on it; a duplicate judged already
// is not told again.
func TestAnIngestTellsEvaluatedTheInventoryItJudged(t *testing.T) {
	type told struct {
		doc     *inventory.Document
		targets []string
	}
	var mu sync.Mutex
	var got []told
	ts := newServer(t, func(c *server.Config) {
		c.Targets = []string{"1.34"}
		c.TeamMap = server.TeamMap{{Pattern: "*", Team: "platform"}}
		c.Evaluated = func(doc *inventory.Document, targets []string) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, told{doc, targets})
		}
	})
	tok := ts.mintIngest("prod")
	doc := teamsInventory(t)
	for range 2 {
		if r := ts.push(tok, envelope(t, "prod", doc)); r.status != http.StatusAccepted && r.status != http.StatusOK {
			t.Fatalf("push: %d %s", r.status, r.body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || !slices.Equal(got[0].targets, []string{"1.33", "1.34"}) || got[0].doc.Namespaces[0].Team != "platform" {
		t.Fatalf("Evaluated was told %+v, want the first push's inventory, team-mapped, at [1.33 1.34]", got)
	}
}
