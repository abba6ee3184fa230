package server

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
)

// routes wires every endpoint. Each route has a name for metrics. Middleware, outermost
// first: the Host check (before routing, so a rebound page learns nothing, not even which
// paths exist), the path prefix, the route's metrics, then the route's credential (read,
// admin or ingest; a fragment's headers before it), for reads teamScope and, where the
// answer describes the whole fleet, fleetOnly; then the handler.
func (s *Server) routes(f features) http.Handler {
	mux := http.NewServeMux()
	log := s.cfg.Logger
	handle := func(pattern, route string, h http.Handler) {
		mux.Handle(pattern, s.metrics.instrument(route, h))
	}
	read := func(h http.Handler) http.Handler { return f.creds.read(teamScope(h)) }
	reads := func(fn readFunc) http.Handler { return read(scoped(log, fn)) }
	admin := func(fn func(w http.ResponseWriter, r *http.Request) error) http.Handler {
		return f.creds.admin(answering(log, fn))
	}
	fragment := func(fn fragmentFunc) http.Handler { return fragmentHeaders(reads(fn.html)) }
	handle("GET /healthz", "healthz", http.HandlerFunc(f.ops.healthz))
	handle("GET /readyz", "readyz", http.HandlerFunc(f.ops.readyz))
	handle("GET /metrics", "metrics", read(fleetOnly(metricsFleetOnly)(f.ops.scrape)))
	handle("POST /api/v1/snapshots", "snapshots", f.creds.ingest(s.metrics.refused)(f.ingest))
	handle("POST /api/v1/audit/{name}", "audit", f.creds.ingest(f.audit.metrics.refused)(f.audit))
	handle("GET /api/v1/clusters", "clusters", reads(f.clusters.list))
	handle("GET /api/v1/clusters/{id}", "cluster", reads(f.clusters.get))
	handle("DELETE /api/v1/clusters/{id}", "cluster-delete", admin(f.admin.delete))
	handle("PATCH /api/v1/clusters/{id}", "cluster-rename", admin(f.admin.rename))
	handle("GET /api/v1/clusters/{id}/report", "report", reads(f.reports.report))
	handle("GET /api/v1/clusters/{id}/findings", "findings", reads(f.reports.findings))
	handle("GET /api/v1/clusters/{id}/history", "history", reads(f.reports.history))
	handle("GET /api/v1/clusters/{id}/teams", "teams", reads(f.reports.teams))
	handle("GET /api/v1/clusters/{id}/export", "export", reads(f.exports.serve))
	handle("POST /api/v1/gate", "gate", reads(f.gate.serve))
	handle("GET /api/v1/fleet", "fleet", reads(f.fleet.matrix))
	handle("GET /api/v1/fleet/teams", "fleet-teams", reads(f.fleet.teams))
	handle("GET /api/v1/fleet/findings", "fleet-findings", reads(f.fleet.findings))
	handle("POST /api/v1/bundles/dry-run", "dry-run", read(fleetOnly(dryRunFleetOnly)(answering(log, f.dryRun.serve))))
	if f.bundles.published == nil {
		handle("GET /bundles/{name}", "bundles", http.HandlerFunc(noBundles))
	} else {
		handle("GET /bundles/{name}", "bundles", f.creds.ingest(nil)(f.bundles))
	}
	// The dashboard: a shell per page that anyone may load, and fragments behind the read
	// API's credentials.
	for _, p := range []string{"GET /{$}", "GET /clusters/{id}", "GET /teams", "GET /knowledge", "GET /findings"} {
		handle(p, "dashboard", http.HandlerFunc(f.dashboard.page))
	}
	handle("GET /assets/{file}", "dashboard-assets", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web.ServeAsset(w, r.PathValue("file"))
	}))
	handle("GET /ui/fleet", "ui-fleet", fragment(f.dashboard.fleet))
	handle("GET /ui/clusters/{id}", "ui-cluster", fragment(f.dashboard.cluster))
	handle("GET /ui/teams", "ui-teams", fragment(f.dashboard.teams))
	handle("GET /ui/knowledge", "ui-knowledge", fragment(f.dashboard.knowledge))
	handle("GET /ui/findings", "ui-findings", fragment(f.dashboard.findings))
	// Catch-alls answer JSON: the exact operational paths (another method: 405, where
	// ServeMux would redirect to the subtree) and every path under them and /api/. /api is
	// exact too: ServeMux's redirect to /api/ would not know a path prefix and leave it.
	for _, p := range []string{"/api", "/api/", "/healthz", "/healthz/", "/readyz", "/readyz/", "/metrics", "/metrics/"} {
		handle(p, "not-found", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { notFound(mux, p, w, r) }))
	}
	// Every other path is the dashboard's: its 404 and 405 are JSON with the dashboard's
	// security headers, not ServeMux's bare text.
	handle("/", "not-found", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web.SecurityHeaders(w.Header())
		notFound(mux, "/", w, r)
	}))
	var h http.Handler = mux
	if s.cfg.PathPrefix != "" {
		h = underPrefix(s.cfg.PathPrefix, h)
	}
	if s.cfg.HostCheck {
		h = hostCheck(s.cfg.Hosts, log, s.cfg.Now, s.metrics.hostRefused)(h)
	}
	return h
}

// Why routes that describe the whole fleet refuse a team-scoped reader (fleetOnly).
const (
	metricsFleetOnly = "metrics describe the whole fleet: a team-scoped token cannot read them"
	dryRunFleetOnly  = "a dry run judges the whole fleet: it needs a fleet-wide read token or the admin token, not a team-scoped one"
)

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

// opsHandler is what operators and their tools read: liveness, readiness and /metrics.
type opsHandler struct {
	store store.Store
	log   *slog.Logger
	// scrape serves /metrics, below the read credential and fleetOnly.
	scrape http.Handler
}

func (h *opsHandler) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 while the store answers a ping within two seconds.
func (h *opsHandler) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := h.store.Ping(ctx); err != nil {
		h.log.Warn("readiness: store unreachable", "err", err)
		writeError(w, http.StatusServiceUnavailable, "store unavailable")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyTimeout bounds /readyz's store ping.
const readyTimeout = 2 * time.Second
