package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// Credentials are checked by middleware (func(http.Handler) http.Handler) before a
// handler runs: read (a read token, the admin token, or none while reads are open), admin,
// and ingest (the shared ingest token or a per-cluster one). What they found travels in the
// request's context (scopeOf, pusherOf); teamScope and fleetOnly act on a read's scope.

// scope is what a read credential may see: the whole fleet, or the clusters and findings
// of some teams.
type scope struct {
	fleet bool
	teams []string
}

var fleetScope = scope{fleet: true}

// sees answers whether a team-scoped reader may see a finding or rollup of team.
func (sc scope) sees(team string) bool { return sc.fleet || slices.Contains(sc.teams, team) }

// seesAny answers whether any of teams is in scope.
func (sc scope) seesAny(teams map[string]store.TeamCell) bool {
	if sc.fleet {
		return true
	}
	for t := range teams {
		if sc.sees(t) {
			return true
		}
	}
	return false
}

// pusher is who may push: a per-cluster token's cluster, or any cluster for the shared token.
type pusher struct {
	cluster   string // "" for the shared token
	tokenHash string // the per-cluster token's hash, re-checked in the commit
}

type ctxKey int

const (
	scopeKey ctxKey = iota
	pusherKey
)

// scopeOf is the scope the read middleware found; none (no fleet, no team) without it.
func scopeOf(r *http.Request) scope {
	sc, _ := r.Context().Value(scopeKey).(scope)
	return sc
}

// pusherOf is who the ingest middleware found may push; false without it. Unlike a scope's,
// a pusher's zero value is not harmless (it is the shared token, which pushes as any
// cluster), so a handler mounted without the middleware must refuse rather than read it.
func pusherOf(r *http.Request) (pusher, bool) {
	who, ok := r.Context().Value(pusherKey).(pusher)
	return who, ok
}

// credentials are the server's tokens and the store that knows the minted ones.
type credentials struct {
	store       store.Store
	log         *slog.Logger
	ingestToken string
	readToken   string
	adminToken  string
	// requireRead keeps the read API closed (401) even before a read token exists.
	requireRead bool
	// readClosed remembers that the store said the read API is closed: it never reopens,
	// so every replica may cache a true.
	readClosed atomic.Bool
}

// read authenticates a read: --read-token or --admin-token read the fleet, a stored read
// token its teams (or the fleet for "*"), and no credential at all only while the read API
// is open. The scope goes on in the request's context.
func (c *credentials) read(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sc, err := c.readScope(r)
		if err != nil {
			answer(c.log, w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey, sc)))
	})
}

// teamScope marks a team-scoped read's answer: it says its teams and is never cached by a
// shared cache. It runs below read.
func teamScope(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sc := scopeOf(r); !sc.fleet {
			w.Header().Set("X-Upgradescope-Teams", encodeTeams(sc.teams))
			w.Header().Set("Cache-Control", "private, no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// fleetOnly refuses a team-scoped read with 403 and why: what the route answers describes
// the whole fleet. It runs below read.
func fleetOnly(why string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !scopeOf(r).fleet {
				writeError(w, http.StatusForbidden, why)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// The refusals of a request that names no credential: a push without an ingest token, a
// read without a read token once the read API is closed.
var (
	errNoIngestCredential = fail(http.StatusUnauthorized, "an ingest token is required: send Authorization: Bearer <token>")
	errNoCredential       = fail(http.StatusUnauthorized, "a read credential is required: send Authorization: Bearer <read token>")
)

func (c *credentials) readScope(r *http.Request) (scope, error) {
	tok := bearer(r)
	if tok == "" {
		open, err := c.readOpen(r.Context())
		if err != nil {
			return scope{}, err
		}
		if !open {
			return scope{}, errNoCredential
		}
		return fleetScope, nil
	}
	if equal(tok, c.readToken) || equal(tok, c.adminToken) {
		return fleetScope, nil
	}
	teams, err := c.store.ReadTokenTeams(r.Context(), hashToken(tok))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return scope{}, fail(http.StatusUnauthorized, "invalid read token")
	case err != nil:
		return scope{}, err
	case slices.Contains(teams, store.AllTeams):
		return fleetScope, nil
	}
	return scope{teams: teams}, nil
}

// readOpen answers whether reads need no credential: no --read-token, no
// --require-read-credential, and no read token ever minted in the store.
func (c *credentials) readOpen(ctx context.Context) (bool, error) {
	if c.readToken != "" || c.requireRead || c.readClosed.Load() {
		return false, nil
	}
	closed, err := c.store.ReadAPIClosed(ctx)
	if err != nil {
		return false, err
	}
	if closed {
		c.readClosed.Store(true)
	}
	return !closed, nil
}

// admin guards deletes and renames: only --admin-token, and nothing when it is unset.
func (c *credentials) admin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.adminToken == "" {
			writeError(w, http.StatusForbidden, "administration is disabled: start the server with --admin-token")
			return
		}
		if !equal(bearer(r), c.adminToken) {
			writeError(w, http.StatusForbidden, "the admin token is required")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ingest authenticates a push or a bundle download: the shared --ingest-token, or a
// per-cluster token. refused, when set, is told of each credential refused before it is
// answered (the ingest metrics count them). Who may push goes on in the request's context.
func (c *credentials) ingest(refused func(error)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			who, err := c.pusher(r)
			if err != nil {
				if refused != nil {
					refused(err)
				}
				answer(c.log, w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pusherKey, who)))
		})
	}
}

// pusher reads the bearer of a push.
func (c *credentials) pusher(r *http.Request) (pusher, error) {
	tok := bearer(r)
	if tok == "" {
		return pusher{}, errNoIngestCredential
	}
	if equal(tok, c.ingestToken) {
		return pusher{}, nil
	}
	hash := hashToken(tok)
	cluster, err := c.store.IngestTokenCluster(r.Context(), hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return pusher{}, fail(http.StatusUnauthorized, "invalid ingest token")
	case err != nil:
		return pusher{}, err
	}
	return pusher{cluster: cluster, tokenHash: hash}, nil
}

// equal compares a presented token with a configured one in constant time; an unset
// configured token matches nothing.
func equal(presented, configured string) bool {
	return configured != "" && subtle.ConstantTimeCompare([]byte(presented), []byte(configured)) == 1
}

// hashToken is how the store keys a token: its sha256, hex.
func hashToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// encodeTeams is the X-Upgradescope-Teams value: each team a percent-encoded path segment.
func encodeTeams(teams []string) string {
	parts := make([]string, len(teams))
	for i, t := range teams {
		parts[i] = url.PathEscape(t)
	}
	return strings.Join(parts, ",")
}
