package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server"
)

func TestTheHostCheckRefusesOtherNamesBeforeRouting(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.Hosts = []string{"upgradescope.internal"} })
	for _, tc := range []struct {
		name   string
		host   string
		path   string
		status int
	}{
		{"localhost is answered", "localhost:8080", "/healthz", 200},
		{"a loopback address is answered", "127.0.0.1", "/healthz", 200},
		{"the IPv6 loopback is answered", "[::1]:8080", "/healthz", 200},
		{"an allowed host is answered whatever its port", "upgradescope.internal:9999", "/healthz", 200},
		{"an allowed host is compared without case", "UpgradeScope.Internal", "/healthz", 200},
		{"a rebound name is refused", "attacker.example", "/healthz", 421},
		{"a rebound name is refused before the read API", "attacker.example", "/api/v1/fleet", 421},
		{"a rebound name is refused before an unknown path", "attacker.example", "/api/v1/nope", 421},
		{"a name that merely starts like localhost is refused", "localhost.attacker.example", "/healthz", 421},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), "GET", ts.URL+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("Host %q %s: %d, want %d", tc.host, tc.path, resp.StatusCode, tc.status)
			}
		})
	}
}

func TestReadCredentials(t *testing.T) {
	const readToken, adminToken = "fleet-read-token", "fleet-admin-token"
	open := newServer(t, nil)
	withToken := newServer(t, func(c *server.Config) { c.ReadToken, c.AdminToken = readToken, adminToken })
	required := newServer(t, func(c *server.Config) { c.RequireReadCredential = true })
	closed := newServer(t, nil)
	fleetWide := closed.mintRead("*")
	payments := closed.mintRead("payments")
	for _, tc := range []struct {
		name   string
		ts     *testServer
		path   string
		token  string
		status int
		teams  string
	}{
		{"an open read API answers without a credential", open, "/api/v1/clusters", "", 200, ""},
		{"an open read API refuses an unknown bearer", open, "/api/v1/clusters", "guess", 401, ""},
		{"a configured read token closes the read API", withToken, "/api/v1/clusters", "", 401, ""},
		{"the read token reads", withToken, "/api/v1/fleet", readToken, 200, ""},
		{"the admin token reads", withToken, "/api/v1/fleet", adminToken, 200, ""},
		{"a wrong token is unauthorized", withToken, "/api/v1/fleet", "wrong", 401, ""},
		{"--require-read-credential refuses reads before any token exists", required, "/api/v1/clusters", "", 401, ""},
		{"a minted read token closes the read API for good", closed, "/api/v1/clusters", "", 401, ""},
		{"a minted fleet-wide read token reads", closed, "/api/v1/clusters", fleetWide, 200, ""},
		{"a team-scoped token reads and is told its teams", closed, "/api/v1/clusters", payments, 200, "payments"},
		{"a team-scoped token cannot read the fleet's metrics", closed, "/metrics", payments, 403, "payments"},
		{"a fleet-wide token reads metrics", closed, "/metrics", fleetWide, 200, ""},
		{"health needs no credential", closed, "/healthz", "", 200, ""},
		{"readiness needs no credential", closed, "/readyz", "", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.ts.get(tc.path, tc.token)
			if r.status != tc.status {
				t.Fatalf("GET %s: %d %s, want %d", tc.path, r.status, r.body, tc.status)
			}
			if got := r.header.Get("X-Upgradescope-Teams"); got != tc.teams {
				t.Errorf("X-Upgradescope-Teams %q, want %q", got, tc.teams)
			}
			if tc.teams != "" && r.header.Get("Cache-Control") != "private, no-store" {
				t.Errorf("a scoped answer has Cache-Control %q, want private, no-store", r.header.Get("Cache-Control"))
			}
			if tc.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestAdministrationNeedsTheAdminToken(t *testing.T) {
	const readToken, adminToken = "fleet-read-token", "fleet-admin-token"
	ts := newServer(t, func(c *server.Config) { c.ReadToken, c.AdminToken, c.IngestToken = readToken, adminToken, "shared" })
	if r := ts.push("shared", envelope(t, "prod", teamsInventory(t))); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	if r := ts.push("shared", envelope(t, "staging", otherCluster(t, "staging-uid"))); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	rename := func(name string) []byte { return []byte(`{"name":"` + name + `"}`) }
	for _, tc := range []struct {
		name   string
		method string
		path   string
		token  string
		body   []byte
		status int
	}{
		{"a read token cannot delete", "DELETE", "/api/v1/clusters/1", readToken, nil, 403},
		{"no token cannot rename", "PATCH", "/api/v1/clusters/1", "", rename("x"), 403},
		{"an invalid new name is refused", "PATCH", "/api/v1/clusters/1", adminToken, rename("Not_Valid"), 422},
		{"a taken name is a conflict", "PATCH", "/api/v1/clusters/1", adminToken, rename("staging"), 409},
		{"a rename answers the renamed cluster", "PATCH", "/api/v1/clusters/1", adminToken, rename("prod-eu"), 200},
		{"an unknown cluster is not found", "DELETE", "/api/v1/clusters/99", adminToken, nil, 404},
		{"a delete answers no content", "DELETE", "/api/v1/clusters/2", adminToken, nil, 204},
		{"a deleted cluster is gone", "GET", "/api/v1/clusters/2", readToken, nil, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.do(tc.method, tc.path, tc.token, tc.body, http.Header{"Content-Type": {"application/json"}})
			if r.status != tc.status {
				t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, r.status, r.body, tc.status)
			}
		})
	}
	r := ts.get("/api/v1/clusters/1", readToken)
	if got := r.json(t)["name"]; got != "prod-eu" {
		t.Errorf("renamed cluster is called %v, want prod-eu", got)
	}
}

func TestWithoutAnAdminTokenAdministrationIsDisabled(t *testing.T) {
	ts := newServer(t, nil)
	r := ts.do("DELETE", "/api/v1/clusters/1", "anything", nil, nil)
	if r.status != 403 || !strings.Contains(string(r.body), "--admin-token") {
		t.Errorf("DELETE without a configured admin token: %d %s, want 403 naming --admin-token", r.status, r.body)
	}
}

func TestAWrongMethodIsAJSON405NamingTheAllowedOnes(t *testing.T) {
	ts := newServer(t, nil)
	r := ts.do("POST", "/api/v1/fleet", "", nil, nil)
	if r.status != 405 || r.header.Get("Allow") == "" || r.json(t)["error"] == nil {
		t.Errorf("POST /api/v1/fleet: %d Allow %q %s, want a JSON 405 with Allow", r.status, r.header.Get("Allow"), r.body)
	}
	if r := ts.get("/api/v1/nothing-here", ""); r.status != 404 || r.json(t)["error"] == nil {
		t.Errorf("an unknown API path: %d %s, want a JSON 404", r.status, r.body)
	}
}
