package server_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
)

// sharedEngine is built once: loading the built-in bundles is the slow part of a test server.
var sharedEngine = sync.OnceValues(func() (*engine.Engine, error) {
	return engine.New(context.Background(), engine.WithToolVersion("test"))
})

// testServer is a Server on a fresh SQLite database behind httptest, on loopback.
type testServer struct {
	*httptest.Server
	store store.Store
	srv   *server.Server
	t     *testing.T
}

// newServer starts a server; edit adjusts its Config before it is built.
func newServer(t *testing.T, edit func(*server.Config)) *testServer {
	t.Helper()
	st, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "upgradescope.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return newServerOn(t, st, edit)
}

func newServerOn(t *testing.T, st store.Store, edit func(*server.Config)) *testServer {
	t.Helper()
	eng, err := sharedEngine()
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	cfg := server.Config{Store: st, Engine: eng, HostCheck: true,
		Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &testServer{Server: hs, store: st, srv: srv, t: t}
}

// teamsInventory is testdata/teams: a cluster at 1.32 with namespaces of teams payments
// and data, blocked at 1.33.
func teamsInventory(t *testing.T) *inventory.Document {
	t.Helper()
	doc, err := inventory.ReadFile(filepath.Join("..", "..", "testdata", "teams", "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	probetest.FoundNothing(doc, eng.Observe().Probes) // as the scenario's args.json says
	return doc
}

// envelope is the gzip push body of doc as cluster name.
func envelope(t *testing.T, name string, doc *inventory.Document) []byte {
	t.Helper()
	body, err := push.Encode(push.Envelope{SchemaVersion: push.SchemaVersion, ClusterName: name,
		AgentVersion: "test", KBVersion: "kb-test", Inventory: doc})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// response is a finished HTTP exchange.
type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body into a map, failing the test on anything else.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// do sends a request to the test server and reads the whole answer.
func (ts *testServer) do(method, path, token string, body []byte, header http.Header) response {
	ts.t.Helper()
	req, err := http.NewRequestWithContext(ts.t.Context(), method, ts.URL+path, bytes.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		ts.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		ts.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	checkContract(ts.t, req, resp.StatusCode, resp.Header, data)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

func (ts *testServer) get(path, token string) response { return ts.do("GET", path, token, nil, nil) }

// push sends a gzip push body with token.
func (ts *testServer) push(token string, body []byte) response {
	return ts.do("POST", push.Path, token, body, http.Header{"Content-Encoding": {"gzip"}, "Content-Type": {"application/json"}})
}

// mintIngest stores an ingest token for cluster and answers the token.
func (ts *testServer) mintIngest(cluster string) string {
	ts.t.Helper()
	tok := rand.Text()
	if _, err := ts.store.CreateIngestToken(ts.t.Context(), cluster, hash(tok), tok[:8]); err != nil {
		ts.t.Fatal(err)
	}
	return tok
}

// mintRead stores a read token for teams and answers the token.
func (ts *testServer) mintRead(teams ...string) string {
	ts.t.Helper()
	tok := rand.Text()
	if _, err := ts.store.CreateReadToken(ts.t.Context(), teams, hash(tok), tok[:8]); err != nil {
		ts.t.Fatal(err)
	}
	return tok
}

func hash(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// encodePush is the agent's gzip envelope of doc as cluster name.
func encodePush(b *testing.B, name string, doc *inventory.Document) []byte {
	body, err := push.Encode(push.Envelope{SchemaVersion: push.SchemaVersion, ClusterName: name, Inventory: doc})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// postPush sends an encoded push and answers its status.
func postPush(b *testing.B, ts *httptest.Server, token string, body []byte) int {
	req, err := http.NewRequest("POST", ts.URL+push.Path, bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Encoding", "gzip")
	resp, err := ts.Client().Do(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
