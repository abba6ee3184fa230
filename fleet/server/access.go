package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/internal/loopback"
)

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

type readHandler func(w http.ResponseWriter, r *http.Request, sc scope) error

// read authenticates a read: --read-token or --admin-token read the fleet, a stored read
// token its teams (or the fleet for "*"), and no credential at all only while the read API
// is open. Scoped answers say their teams and are never cached by a shared cache.
func (s *Server) read(h readHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sc, err := s.readScope(r)
		if err != nil {
			s.answer(w, r, err)
			return
		}
		if !sc.fleet {
			w.Header().Set("X-Upgradescope-Teams", encodeTeams(sc.teams))
			w.Header().Set("Cache-Control", "private, no-store")
		}
		if err := h(w, r, sc); err != nil {
			s.answer(w, r, err)
		}
	}
}

var errNoCredential = fail(http.StatusUnauthorized, "a read credential is required: send Authorization: Bearer <read token>")

func (s *Server) readScope(r *http.Request) (scope, error) {
	tok := bearer(r)
	if tok == "" {
		open, err := s.readOpen(r.Context())
		if err != nil {
			return scope{}, err
		}
		if !open {
			return scope{}, errNoCredential
		}
		return fleetScope, nil
	}
	if equal(tok, s.cfg.ReadToken) || equal(tok, s.cfg.AdminToken) {
		return fleetScope, nil
	}
	teams, err := s.store.ReadTokenTeams(r.Context(), hashToken(tok))
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
func (s *Server) readOpen(ctx context.Context) (bool, error) {
	if s.cfg.ReadToken != "" || s.cfg.RequireReadCredential || s.readClosed.Load() {
		return false, nil
	}
	closed, err := s.store.ReadAPIClosed(ctx)
	if err != nil {
		return false, err
	}
	if closed {
		s.readClosed.Store(true)
	}
	return !closed, nil
}

// admin guards deletes and renames: only --admin-token, and nothing when it is unset.
func (s *Server) admin(h func(w http.ResponseWriter, r *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.AdminToken == "" {
			writeError(w, http.StatusForbidden, "administration is disabled: start the server with --admin-token")
			return
		}
		if !equal(bearer(r), s.cfg.AdminToken) {
			writeError(w, http.StatusForbidden, "the admin token is required")
			return
		}
		if err := h(w, r); err != nil {
			s.answer(w, r, err)
		}
	}
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

// hostCheck answers 421 to a request whose Host is not one the server answers to, before
// any route or credential is looked at: on loopback, a page that rebinds its own name to
// 127.0.0.1 must read nothing. Allowed: localhost, loopback addresses, the address the
// request arrived on, and Config.Hosts; ports are never compared.
func (s *Server) hostCheck(next http.Handler) http.Handler {
	if !s.cfg.HostCheck {
		return next
	}
	allowed := map[string]bool{}
	for _, h := range s.cfg.Hosts {
		allowed[strings.ToLower(h)] = true
	}
	var lastLog atomic.Int64 // unix nanoseconds of the last warning: at most one a minute
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostOnly(r.Host)
		if allowed[host] || loopback.Is(host) || host == localAddr(r) {
			next.ServeHTTP(w, r)
			return
		}
		s.metrics.requests.WithLabelValues("host-refused", "421").Inc()
		if now := s.now().UnixNano(); now-lastLog.Load() > int64(time.Minute) {
			lastLog.Store(now)
			s.log.Warn("refused a request for another host (DNS rebinding guard); add it with --allowed-host if it is yours", "host", host)
		}
		web.SecurityHeaders(w.Header()) // the answer a rebound page gets, which may be shown as a page
		writeError(w, http.StatusMisdirectedRequest, "this server does not answer to that host name")
	})
}

// hostOnly strips the port and brackets from a Host header and lowercases it.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	return strings.ToLower(strings.Trim(h, "[]"))
}

// localAddr is the IP the request arrived on (a probe or scrape to the pod IP), "" when unknown.
func localAddr(r *http.Request) string {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return ""
	}
	return hostOnly(addr.String())
}
