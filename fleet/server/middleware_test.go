package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// tokenStore is the store as the credential middleware reads it: minted read tokens by
// hash, per-cluster ingest tokens by hash, whether the read API is closed, and a failure.
// Every other method is the nil Store's and panics: the middleware must not call them.
type tokenStore struct {
	store.Store
	readTokens   map[string][]string
	ingestTokens map[string]string
	closed       bool
	err          error
}

func (s *tokenStore) ReadTokenTeams(_ context.Context, hash string) ([]string, error) {
	if s.err != nil {
		return nil, s.err
	}
	teams, ok := s.readTokens[hash]
	if !ok {
		return nil, store.ErrNotFound
	}
	return teams, nil
}

func (s *tokenStore) IngestTokenCluster(_ context.Context, hash string) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	cluster, ok := s.ingestTokens[hash]
	if !ok {
		return "", store.ErrNotFound
	}
	return cluster, nil
}

func (s *tokenStore) ReadAPIClosed(context.Context) (bool, error) { return s.closed, s.err }

// reached is the innermost handler: it answers 200 and records what the middleware put
// on the request.
type reached struct {
	called bool
	scope  scope
	pusher pusher
}

func (h *reached) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.called, h.scope = true, scopeOf(r)
	h.pusher, _ = pusherOf(r)
	w.WriteHeader(http.StatusOK)
}

// serveThrough runs one request with bearer tok through mw to a reached handler.
func serveThrough(mw func(http.Handler) http.Handler, tok string) (*httptest.ResponseRecorder, *reached) {
	next := &reached{}
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	rec := httptest.NewRecorder()
	mw(next).ServeHTTP(rec, req)
	return rec, next
}

var errStoreDown = errors.Join(store.ErrUnavailable, errors.New("connection refused"))

func TestReadCredential(t *testing.T) {
	none := func(*credentials) {}
	minted := map[string][]string{hashToken("team-token"): {"payments", "data"}, hashToken("star-token"): {store.AllTeams}}
	for _, tc := range []struct {
		name   string
		creds  func(*credentials)
		st     tokenStore
		tok    string
		status int
		scope  scope
	}{
		{"no credential while reads are open reads the fleet", none, tokenStore{}, "", 200, fleetScope},
		{"no credential once a read token was minted", none, tokenStore{closed: true}, "", 401, scope{}},
		{"no credential with --read-token", func(c *credentials) { c.readToken = "r" }, tokenStore{}, "", 401, scope{}},
		{"no credential with --require-read-credential", func(c *credentials) { c.requireRead = true }, tokenStore{}, "", 401, scope{}},
		{"the read token reads the fleet", func(c *credentials) { c.readToken = "r" }, tokenStore{}, "r", 200, fleetScope},
		{"the admin token reads the fleet", func(c *credentials) { c.adminToken = "a" }, tokenStore{}, "a", 200, fleetScope},
		{"a minted token reads its teams", none, tokenStore{readTokens: minted}, "team-token", 200, scope{teams: []string{"payments", "data"}}},
		{"a minted token for every team reads the fleet", none, tokenStore{readTokens: minted}, "star-token", 200, fleetScope},
		{"an unknown token is refused", func(c *credentials) { c.readToken = "r" }, tokenStore{readTokens: minted}, "guess", 401, scope{}},
		{"the ingest token does not read", func(c *credentials) { c.ingestToken, c.readToken = "i", "r" }, tokenStore{}, "i", 401, scope{}},
		{"a store that is down answers 503", none, tokenStore{err: errStoreDown}, "", 503, scope{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &credentials{store: &tc.st, log: slog.New(slog.DiscardHandler)}
			tc.creds(c)
			rec, next := serveThrough(c.read, tc.tok)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if next.called != (tc.status == 200) {
				t.Fatalf("handler reached: %v, want %v", next.called, tc.status == 200)
			}
			if next.scope.fleet != tc.scope.fleet || !slices.Equal(next.scope.teams, tc.scope.teams) {
				t.Errorf("scope %+v, want %+v", next.scope, tc.scope)
			}
			if tc.status == 401 && rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
		})
	}
}

func TestReadCredentialRemembersClosed(t *testing.T) {
	st := &tokenStore{closed: true}
	c := &credentials{store: st, log: slog.New(slog.DiscardHandler)}
	if rec, _ := serveThrough(c.read, ""); rec.Code != 401 {
		t.Fatalf("status %d, want 401", rec.Code)
	}
	// The store is not asked again: a closed read API never reopens.
	st.closed, st.err = false, errStoreDown
	if rec, _ := serveThrough(c.read, ""); rec.Code != 401 {
		t.Fatalf("status %d after the store said closed once, want 401", rec.Code)
	}
}

func TestTeamScope(t *testing.T) {
	for _, tc := range []struct {
		name          string
		sc            scope
		teams, cached string
	}{
		{"the fleet's answer may be cached and names no team", fleetScope, "", ""},
		{"a team-scoped answer names its teams, escaped, and is private", scope{teams: []string{"payments", "data/ops"}},
			"payments,data%2Fops", "private, no-store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req = req.WithContext(context.WithValue(req.Context(), scopeKey, tc.sc))
			rec := httptest.NewRecorder()
			teamScope(&reached{}).ServeHTTP(rec, req)
			if got := rec.Header().Get("X-Upgradescope-Teams"); got != tc.teams {
				t.Errorf("X-Upgradescope-Teams %q, want %q", got, tc.teams)
			}
			if got := rec.Header().Get("Cache-Control"); got != tc.cached {
				t.Errorf("Cache-Control %q, want %q", got, tc.cached)
			}
		})
	}
}

func TestFleetOnly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sc     scope
		status int
	}{
		{"the fleet passes", fleetScope, 200},
		{"a team scope is refused", scope{teams: []string{"payments"}}, 403},
		{"no scope (no read middleware) is refused", scope{}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req = req.WithContext(context.WithValue(req.Context(), scopeKey, tc.sc))
			rec := httptest.NewRecorder()
			fleetOnly("the whole fleet")(&reached{}).ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d", rec.Code, tc.status)
			}
		})
	}
}

func TestAdminCredential(t *testing.T) {
	for _, tc := range []struct {
		name   string
		admin  string
		tok    string
		status int
	}{
		{"the admin token administers", "a", "a", 200},
		{"another token does not", "a", "r", 403},
		{"no token does not", "a", "", 403},
		{"without --admin-token nothing does", "", "", 403},
		{"without --admin-token an empty bearer does not match", "", "x", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &credentials{adminToken: tc.admin, readToken: "r", log: slog.New(slog.DiscardHandler)}
			rec, next := serveThrough(c.admin, tc.tok)
			if rec.Code != tc.status || next.called != (tc.status == 200) {
				t.Errorf("status %d (handler reached %v), want %d", rec.Code, next.called, tc.status)
			}
		})
	}
}

func TestIngestCredential(t *testing.T) {
	minted := map[string]string{hashToken("cluster-token"): "prod-1"}
	for _, tc := range []struct {
		name    string
		st      tokenStore
		tok     string
		status  int
		who     pusher
		refused bool
	}{
		{"the shared ingest token pushes as any cluster", tokenStore{}, "i", 200, pusher{}, false},
		{"a per-cluster token pushes as its cluster", tokenStore{ingestTokens: minted}, "cluster-token", 200,
			pusher{cluster: "prod-1", tokenHash: hashToken("cluster-token")}, false},
		{"no token is refused", tokenStore{}, "", 401, pusher{}, true},
		{"an unknown token is refused", tokenStore{ingestTokens: minted}, "guess", 401, pusher{}, true},
		{"a store that is down answers 503", tokenStore{err: errStoreDown}, "cluster-token", 503, pusher{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &credentials{store: &tc.st, ingestToken: "i", log: slog.New(slog.DiscardHandler)}
			var refused error
			rec, next := serveThrough(c.ingest(func(err error) { refused = err }), tc.tok)
			if rec.Code != tc.status || next.called != (tc.status == 200) {
				t.Fatalf("status %d (handler reached %v), want %d", rec.Code, next.called, tc.status)
			}
			if next.pusher != tc.who {
				t.Errorf("pusher %+v, want %+v", next.pusher, tc.who)
			}
			if (refused != nil) != tc.refused {
				t.Errorf("refused told %v, want told: %v", refused, tc.refused)
			}
		})
	}
}

func TestHostCheck(t *testing.T) {
	for _, tc := range []struct {
		name, host, local string
		allowed           bool
	}{
		{"localhost", "localhost:8080", "", true},
		{"localhost in capitals", "LOCALHOST", "", true},
		{"a loopback address", "127.0.0.1:8080", "", true},
		{"a loopback IPv6 address", "[::1]:8080", "", true},
		{"a name given with --allowed-host", "upgradescope.example.com", "", true},
		{"the address the request arrived on", "10.0.0.7:8080", "10.0.0.7:8080", true},
		{"a rebound name", "attacker.example:8080", "", false},
		{"another address", "10.0.0.8", "10.0.0.7:8080", false},
		{"a name ending in localhost", "evil-localhost", "", false},
		{"localhost with a trailing dot", "localhost.:8080", "", false},
		{"a loopback address and port in brackets", "[127.0.0.1:80]:80", "", false},
		{"localhost and a port in brackets", "[localhost:1]", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refused := 0
			now := func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }
			mw := hostCheck([]string{"Upgradescope.example.com"}, slog.New(slog.DiscardHandler), now, func() { refused++ })
			req := httptest.NewRequest(http.MethodGet, "/api/v1/clusters", nil)
			req.Host = tc.host
			if tc.local != "" {
				addr, err := net.ResolveTCPAddr("tcp", tc.local)
				if err != nil {
					t.Fatal(err)
				}
				req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, addr))
			}
			rec := httptest.NewRecorder()
			next := &reached{}
			mw(next).ServeHTTP(rec, req)
			if next.called != tc.allowed {
				t.Fatalf("handler reached %v, want %v", next.called, tc.allowed)
			}
			if tc.allowed {
				return
			}
			if rec.Code != http.StatusMisdirectedRequest || refused != 1 {
				t.Errorf("status %d, refusals counted %d; want 421 and 1", rec.Code, refused)
			}
			if rec.Header().Get("Content-Security-Policy") == "" {
				t.Error("the refusal lacks the dashboard's security headers")
			}
		})
	}
}

// A push handler mounted without the ingest middleware must refuse: the zero pusher is the
// shared token, which may push as any cluster.
func TestAPushThatNoIngestMiddlewareSawIsRefused(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/api/v1/snapshots", nil)
	if _, ok := pusherOf(req); ok {
		t.Fatal("pusherOf found a pusher in a request no middleware saw")
	}
	_, err := (&ingestHandler{}).accept(httptest.NewRecorder(), req)
	var ae *apiError
	if !errors.As(err, &ae) || ae.status != http.StatusUnauthorized {
		t.Errorf("accept without the ingest middleware: %v, want 401", err)
	}
}
