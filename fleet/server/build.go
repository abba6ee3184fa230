package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/web"
)

// features are the server's handlers, one per feature, and the middleware they share.
type features struct {
	creds     *credentials
	ops       *opsHandler
	ingest    *ingestHandler
	bundles   bundleFilesHandler
	clusters  *clustersHandler
	admin     *adminHandler
	reports   *reportsHandler
	fleet     *fleetHandler
	exports   *exportHandler
	gate      *gateHandler
	dryRun    *dryRunHandler
	dashboard *dashboardHandler
	audit     *auditHandler
}

// build wires the shared parts into each feature and sets the Server's background parts
// (snapshots, re-evaluation, notifications, metrics).
func (s *Server) build() features {
	cfg := s.cfg
	admit := admission.New(cfg.MaxSnapshotBytes)
	s.snaps = &snapshots{store: cfg.Store, admit: admit, maxBytes: cfg.MaxSnapshotBytes, log: cfg.Logger}
	shares := &shareJudge{admit: admit, snaps: s.snaps, policy: s.policy, teamMap: cfg.TeamMap, plan: s.plan,
		now: cfg.Now, log: cfg.Logger}
	reads := &fleetReads{store: cfg.Store, policy: s.policy, shares: shares, plan: s.plan, now: cfg.Now,
		staleAfter: cfg.StaleAfter, admit: admit, snaps: s.snaps, log: cfg.Logger}
	served := &servedReports{reads: reads, shares: shares, snaps: s.snaps, admit: admit, store: cfg.Store,
		policy: s.policy, teamMap: cfg.TeamMap, now: cfg.Now}
	eval := &evaluator{policy: s.policy, admit: admit, teamMap: cfg.TeamMap, now: cfg.Now, evaluated: cfg.Evaluated}
	s.notes = newNotifications(cfg, s.snaps)
	s.reeval = &reevaluator{store: cfg.Store, policy: s.policy, reads: reads, snaps: s.snaps, eval: eval,
		notes: s.notes, plan: s.plan, now: cfg.Now, log: cfg.Logger, rate: cfg.ReevaluateRate,
		wake: make(chan struct{}, 1), retry: reevaluationRetry}
	collectors := []prometheus.Collector{&fleetCollector{reads: reads, pending: s.reeval.pendingCount, now: cfg.Now,
		deadline: 5 * time.Second}}
	collectors = append(collectors, s.notes.collectors()...)
	s.refresh = newAuditRefresh(s.reeval, s.work, cfg.Logger)
	audited := newAuditMetrics()
	collectors = append(collectors, audited.collectors()...)
	s.metrics = newMetrics(append(collectors, cfg.Collectors...)...)
	f := features{
		creds: &credentials{store: cfg.Store, log: cfg.Logger, ingestToken: cfg.IngestToken, readToken: cfg.ReadToken,
			adminToken: cfg.AdminToken, requireRead: cfg.RequireReadCredential},
		ops: &opsHandler{store: cfg.Store, log: cfg.Logger, scrape: s.metrics.scrapeHandler},
		ingest: &ingestHandler{store: cfg.Store, admit: admit, snaps: s.snaps, eval: eval, notes: s.notes, plan: s.plan,
			metrics: s.metrics, log: cfg.Logger, work: s.work, maxBytes: cfg.MaxSnapshotBytes, bodyTimeout: cfg.BodyTimeout},
		clusters: &clustersHandler{reads: reads, snaps: s.snaps, admit: admit, store: cfg.Store, plan: s.plan},
		admin:    &adminHandler{reads: reads, store: cfg.Store, log: cfg.Logger},
		reports:  &reportsHandler{served: served, reads: reads},
		fleet:    &fleetHandler{reads: reads, policy: s.policy, plan: s.plan, now: cfg.Now, pending: s.reeval.pendingCount},
		exports:  &exportHandler{reads: reads, served: served, shares: shares, store: cfg.Store},
		gate: &gateHandler{store: cfg.Store, reads: reads, snaps: s.snaps, admit: admit, policy: s.policy,
			teamMap: cfg.TeamMap, now: cfg.Now, maxBytes: cfg.MaxGateBytes},
		dryRun: &dryRunHandler{store: cfg.Store, admit: admit, snaps: s.snaps, policy: s.policy, plan: s.plan,
			teamMap: cfg.TeamMap, now: cfg.Now, log: cfg.Logger, verification: cfg.Verification,
			withCandidate: cfg.WithCandidate, maxBytes: cfg.MaxSnapshotBytes},
		dashboard: &dashboardHandler{reads: reads, served: served, policy: s.policy, plan: s.plan,
			shell: web.Shell(cfg.PathPrefix), prefix: cfg.PathPrefix},
		audit: &auditHandler{store: cfg.Store, admit: admit, refresh: s.refresh, metrics: audited, log: cfg.Logger,
			work: s.work, maxBytes: cfg.MaxAuditBatchBytes, bodyTimeout: cfg.BodyTimeout},
	}
	if cfg.PublishDir != "" {
		f.bundles = bundleFilesHandler{published: bundles.Handler(cfg.PublishDir, bundles.ServeOptions{})}
	}
	return f
}
