// Package server is `upgradescope serve`: the HTTP API that takes agents' pushes, evaluates
// every new snapshot with the server's engine and stores it, and serves the fleet matrix,
// team rollups, history and per-cluster reports from the store.
//
// Everything that decides correctness lives in the store, so several Servers on one
// database (replicas on one Postgres) answer as one. What a Server keeps in memory only
// bounds its own work: how many bodies it reads and decodes at once, how many evaluations
// it runs.
//
// The package is a file set per feature, each a handler type holding what it uses, none
// reaching into another's fields:
//
//   - ingest: ingest.go (ingestHandler), evaluate.go (evaluator), notifications.go
//   - the audit webhook backend's batches: audit.go (auditHandler), auditcalls.go (the
//     stored section judged with a cluster's snapshots), auditrefresh.go
//   - reads: fleetview.go (fleetReads, the read side every read shares), clusters.go,
//     reports.go (servedReports, reportsHandler), fleet.go, shares.go and share.go (a
//     team-scoped reader's share), admin.go
//   - gate: gate.go; dry run: dryrun.go; exports: exports.go; dashboard: dashboard.go
//   - re-evaluation: reevaluate.go, rehearsal.go; retention: retention.go
//   - bundle files: bundlefiles.go; operations (health, readiness, /metrics): routes.go,
//     metrics.go
//
// What they share: the active policy (policy.go), error answers (answer.go), the
// credential middleware (access.go) and the Host check (hostcheck.go), stored snapshots
// and reports (snapshots.go), and the admission of work, its own package (admission).
// server.go, build.go and routes.go compose them.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/notify"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
)

// Defaults a Config falls back to.
const (
	DefaultStaleAfter = 2 * time.Hour
	DefaultRetention  = 90 * 24 * time.Hour
	// DefaultBodyTimeout bounds reading one push body.
	DefaultBodyTimeout = 60 * time.Second
	// MaxTargets bounds --target: each one is an evaluation of every push.
	MaxTargets = 4
	// MaxFleetTargets bounds the columns one fleet read asks for.
	MaxFleetTargets = 16
)

// Config is what a Server is built from; Store and Engine are required.
type Config struct {
	Store  store.Store
	Engine *engine.Engine
	// Targets are the minors every snapshot is judged at besides its next minor (≤ MaxTargets).
	Targets []string
	// IngestToken, when set, may push as any cluster.
	IngestToken string
	// ReadToken and AdminToken read the whole fleet; AdminToken also deletes and renames.
	ReadToken  string
	AdminToken string
	// RequireReadCredential keeps the read API closed (401) even before a read token exists.
	RequireReadCredential bool
	// TeamMap overrides namespace team labels before every evaluation.
	TeamMap TeamMap
	// HostCheck turns the DNS-rebinding guard on (loopback listeners): Hosts are the names
	// a request may carry besides localhost and loopback addresses.
	HostCheck bool
	Hosts     []string
	// MaxSnapshotBytes bounds a push on the wire and decompressed (default push.MaxBytes).
	MaxSnapshotBytes int
	// MaxGateBytes bounds a gate request's body (default DefaultMaxGateBytes).
	MaxGateBytes int
	// MaxAuditBatchBytes bounds an audit webhook batch (default DefaultMaxAuditBatchBytes).
	MaxAuditBatchBytes int
	// Verification checks a candidate bundle sent to the dry run (nil: dry runs are
	// refused, since the server could not tell a signed candidate from any other).
	Verification *bundle.VerificationConfig
	// WithCandidate builds an engine of the server's active bundle set with candidate in
	// it, replacing the bundle with its roots or added beside them (nil: dry runs are
	// refused).
	WithCandidate func(ctx context.Context, candidate *bundles.Fetched) (*engine.Engine, error)
	// Evaluated, when set, is told of each inventory an ingest evaluated successfully and
	// the targets it was judged at (serve hands the latest to its bundle set, which
	// rehearses a new set on it before swapping it in). doc is not changed afterwards.
	Evaluated func(doc *inventory.Document, targets []string)
	// PathPrefix, when set ("/upgradescope", see NormalPathPrefix), is where every route
	// is served, the API and the dashboard alike; nothing answers outside it.
	PathPrefix string
	// PublicURL, when set, is the address at which people open the dashboard
	// (NormalPublicURL): notifications link to a cluster's page under it. Without it they
	// carry no link; one is never guessed from a request's Host.
	PublicURL string
	// PublishDir, when set, holds the signed bundles (*.tar.gz) GET /bundles/{name} serves
	// to agents holding an ingest token.
	PublishDir string
	// ReevaluateRate bounds the background re-evaluation after a bundle change, in
	// clusters a second (default DefaultReevaluateRate).
	ReevaluateRate float64
	// BodyTimeout bounds sending one push body (default 60 s): a slower client gets 408.
	BodyTimeout time.Duration
	StaleAfter  time.Duration
	Logger      *slog.Logger
	// Now is the clock (time.Now when nil); tests pin it.
	Now func() time.Time
	// Sinks receive a notification when an ingest changes a cluster's readiness (none:
	// nothing is enqueued). NotifyOptions adjust their worker (tests pin its clock).
	Sinks         []notify.Sink
	NotifyOptions []notify.Option
	// Collectors are more series /metrics reports: those of the bundle set serve polls.
	Collectors []prometheus.Collector
}

// Server serves the API; build it with New. It is the composition root: New builds each
// feature's handler from the shared parts (the active policy, the admission of work, the
// fleet's read side), Handler routes to them through the middleware, and the Run* loops
// run the background work.
type Server struct {
	cfg     Config
	policy  *activePolicy
	plan    targetPlan
	snaps   *snapshots
	reeval  *reevaluator
	refresh *auditRefresh
	notes   *notifications
	metrics *metrics
	handler http.Handler
	// work is the context of what outlives a request (an ingest whose client hung up);
	// Close cancels it.
	work   context.Context
	cancel context.CancelFunc
}

// New checks cfg and builds the Server.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Engine == nil {
		return nil, fmt.Errorf("server: a store and an engine are required")
	}
	if err := checkTargets(cfg.Targets); err != nil {
		return nil, err
	}
	if err := checkSinks(cfg.Sinks); err != nil {
		return nil, err
	}
	prefix, err := NormalPathPrefix(cfg.PathPrefix)
	if err != nil {
		return nil, err
	}
	cfg.PathPrefix = prefix
	if cfg.PublicURL, err = dashboardBase(cfg.PublicURL, prefix); err != nil {
		return nil, err
	}
	if cfg.MaxGateBytes <= 0 {
		cfg.MaxGateBytes = DefaultMaxGateBytes
	}
	if cfg.MaxSnapshotBytes <= 0 {
		cfg.MaxSnapshotBytes = push.MaxBytes
	}
	if cfg.MaxAuditBatchBytes <= 0 {
		cfg.MaxAuditBatchBytes = DefaultMaxAuditBatchBytes
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ReevaluateRate <= 0 {
		cfg.ReevaluateRate = DefaultReevaluateRate
	}
	cfg.Targets = inventory.SortMinors(normalTargets(cfg.Targets))
	s := &Server{cfg: cfg, policy: newActivePolicy(cfg.Engine), plan: targetPlan(cfg.Targets)}
	s.work, s.cancel = context.WithCancel(context.Background())
	s.handler = s.routes(s.build())
	return s, nil
}

// Handler is the API with the Host check and metrics around it.
func (s *Server) Handler() http.Handler { return s.handler }

// Close cancels work still running for requests already answered or abandoned (after a
// drain that ran out of time), stops the audit refreshes scheduled and waits for those
// running, so the store can be closed under none.
func (s *Server) Close() {
	s.cancel()
	s.refresh.close()
}

// normalTargets writes each --target minor as the API does ("1.034" → "1.34"); New has
// checked that each parses.
func normalTargets(targets []string) []string {
	out := make([]string, 0, len(targets))
	for _, t := range targets {
		if minor, err := inventory.ParseTarget(t); err == nil {
			out = append(out, minor)
		}
	}
	return out
}

// checkTargets refuses more than MaxTargets distinct minors or a malformed one.
func checkTargets(targets []string) error {
	for _, t := range targets {
		if _, err := inventory.ParseTarget(t); err != nil {
			return fmt.Errorf("--target: %w", err)
		}
	}
	distinct := slices.Compact(slices.Sorted(slices.Values(normalTargets(targets))))
	if len(distinct) > MaxTargets {
		return fmt.Errorf("--target: at most %d minors, got %d", MaxTargets, len(distinct))
	}
	return nil
}

// checkSinks refuses two sinks of one name: a name is a delivery queue in the store.
func checkSinks(sinks []notify.Sink) error {
	seen := map[string]bool{}
	for _, sink := range sinks {
		if seen[sink.Name] {
			return fmt.Errorf("server: two notification sinks named %q", sink.Name)
		}
		seen[sink.Name] = true
	}
	return nil
}

// Swap makes eng the engine every later evaluation uses (a bundle poller activated a new
// revision). Stored evaluations made with another bundle set read as outdated from now on.
func (s *Server) swap(eng *engine.Engine) {
	s.policy.set(eng)
	s.reeval.due()
}

// runReevaluation keeps every cluster's latest snapshot evaluated with the active bundle
// set, today, until ctx ends or Close (reevaluator.run).
func (s *Server) runReevaluation(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.work, cancel)
	defer stop()
	s.reeval.run(ctx)
}

// runNotifications delivers queued notifications until ctx ends; without sinks it returns
// at once.
func (s *Server) runNotifications(ctx context.Context) { s.notes.run(ctx) }
