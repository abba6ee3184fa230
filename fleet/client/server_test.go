package client_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
)

// The tests run the client against a real fleet server (server.New over a SQLite store,
// behind httptest on loopback): the wire types are the server's own, so a drift between
// what it writes and what the client reads fails here. Only faults a real server cannot be
// made to produce on cue (a busy 503 with Retry-After, a dropped connection, a proxy's page)
// use a small handler of their own.

const (
	readToken   = "fleet-read-token"
	adminToken  = "fleet-admin-token"
	ingestToken = "shared-ingest-token"
	// root is the repository's, where testdata lives.
	root = "../.."
)

// sharedEngine is built once: loading the built-in bundles is the slow part of a server.
var sharedEngine = sync.OnceValues(func() (*engine.Engine, error) {
	return engine.New(context.Background(), engine.WithToolVersion("test"))
})

// fleetServer is a running server's base URL, the signing key its dry runs verify with,
// and its store (for read tokens scoped to teams).
type fleetServer struct {
	url        string
	privateKey string
	store      store.Store
}

// startFleet starts a server with read, admin and ingest tokens and dry runs on, holding
// the golden scenarios named, each pushed by an agent's client as a cluster of its name.
func startFleet(t *testing.T, scenarios ...string) fleetServer {
	t.Helper()
	eng, err := sharedEngine()
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	st, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "upgradescope.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	private, public := bundletest.Keys(t, t.TempDir())
	vc, err := bundles.VerificationFromFile(public, "RS256")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, Engine: eng, HostCheck: true,
		ReadToken: readToken, AdminToken: adminToken, IngestToken: ingestToken, Targets: []string{"1.37"},
		Verification: vc,
		WithCandidate: func(ctx context.Context, c *bundles.Fetched) (*engine.Engine, error) {
			return engine.New(ctx, engine.WithToolVersion("test"), engine.WithBundle(c.Source, c.Bundle, c.Signature))
		},
		Now: func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	for _, name := range scenarios {
		pushScenario(t, hs.URL, name, eng)
	}
	return fleetServer{url: hs.URL, privateKey: private, store: st}
}

// pushScenario pushes testdata/<name> as the agent does, its probes observed as finding
// nothing.
func pushScenario(t *testing.T, url, name string, eng *engine.Engine) {
	t.Helper()
	agent, err := push.New(push.Options{URL: url, Token: func() (string, error) { return ingestToken, nil },
		ClusterName: name, AgentVersion: "test", KBVersion: "kb-test"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := agent.Offer(t.Context(), probetest.Scenario(t, root, name, eng.Observe().Probes)); res != push.Delivered {
		t.Fatalf("push %s: %s: %v", name, res, err)
	}
}

// connect is a client of the server with token ("" for none).
func connect(t *testing.T, url, token string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.New(url, append([]client.Option{client.WithToken(token)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
