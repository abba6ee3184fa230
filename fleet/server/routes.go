package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
)

// routes wires every endpoint. Each route has a name for metrics; the Host check runs
// before routing, so a rebound page learns nothing, not even which paths exist.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern, route string, h http.HandlerFunc) {
		mux.Handle(pattern, s.metrics.instrument(route, h))
	}
	handle("GET /healthz", "healthz", s.healthz)
	handle("GET /readyz", "readyz", s.readyz)
	handle("GET /metrics", "metrics", s.read(s.serveMetrics))
	handle("POST /api/v1/snapshots", "snapshots", s.ingest)
	handle("GET /api/v1/clusters", "clusters", s.read(s.listClusters))
	handle("GET /api/v1/clusters/{id}", "cluster", s.read(s.getCluster))
	handle("DELETE /api/v1/clusters/{id}", "cluster-delete", s.admin(s.deleteCluster))
	handle("PATCH /api/v1/clusters/{id}", "cluster-rename", s.admin(s.renameCluster))
	handle("GET /api/v1/clusters/{id}/report", "report", s.read(s.clusterReport))
	handle("GET /api/v1/clusters/{id}/findings", "findings", s.read(s.clusterFindings))
	handle("GET /api/v1/clusters/{id}/history", "history", s.read(s.clusterHistory))
	handle("GET /api/v1/clusters/{id}/teams", "teams", s.read(s.clusterTeams))
	handle("GET /api/v1/clusters/{id}/export", "export", s.read(s.clusterExport))
	handle("POST /api/v1/gate", "gate", s.read(s.gate))
	handle("GET /api/v1/fleet", "fleet", s.read(s.fleet))
	handle("GET /api/v1/fleet/teams", "fleet-teams", s.read(s.fleetTeams))
	handle("POST /api/v1/bundles/dry-run", "dry-run", s.read(s.dryRun))
	handle("GET /bundles/{name}", "bundles", s.bundleFiles)
	s.dashboardRoutes(handle)
	// Catch-alls answer JSON: the exact operational paths (another method: 405, where
	// ServeMux would redirect to the subtree) and every path under them and /api/. /api is
	// exact too: ServeMux's redirect to /api/ would not know a path prefix and leave it.
	for _, p := range []string{"/api", "/api/", "/healthz", "/healthz/", "/readyz", "/readyz/", "/metrics", "/metrics/"} {
		handle(p, "not-found", func(w http.ResponseWriter, r *http.Request) { notFound(mux, p, w, r) })
	}
	// Every other path is the dashboard's: its 404 and 405 are JSON with the dashboard's
	// security headers, not ServeMux's bare text.
	handle("/", "not-found", func(w http.ResponseWriter, r *http.Request) {
		web.SecurityHeaders(w.Header())
		notFound(mux, "/", w, r)
	})
	if s.cfg.PathPrefix != "" {
		return s.hostCheck(underPrefix(s.cfg.PathPrefix, mux))
	}
	return s.hostCheck(mux)
}

// notFound answers a request only a catch-all prefix matched: 405 with Allow when the
// path exists for other methods, else 404, both as JSON. (ServeMux prefers a method-less
// catch-all to its own 405.)
func notFound(mux *http.ServeMux, catchAll string, w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != catchAll && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed here; use "+strings.Join(allow, ", "))
		return
	}
	writeError(w, http.StatusNotFound, "no such endpoint")
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 while the store answers a ping within two seconds.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		s.log.Warn("readiness: store unreachable", "err", err)
		writeError(w, http.StatusServiceUnavailable, "store unavailable")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// apiError is an answer other than success: its status and the message users read.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func fail(status int, msg string) error { return &apiError{status, msg} }

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="upgradescope"`)
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfterS)
	}
	writeJSON(w, status, api.ErrorBody{Error: msg})
}

// answer turns a handler's error into its response: an apiError as it says, an
// unavailable store as 503, anything else as 500 with the detail only in the log.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		writeError(w, ae.status, ae.msg)
	case errors.Is(err, store.ErrUnavailable):
		s.log.Warn("store unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusServiceUnavailable, "store unavailable, retry later")
	default:
		s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "internal error")
	}
}

// bearer is the request's bearer token ("" when none); the scheme is case-insensitive.
func bearer(r *http.Request) string {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// readyTimeout bounds /readyz's store ping.
const readyTimeout = 2 * time.Second
