package server

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// DefaultReevaluateRate is the background re-evaluation's default pace, in clusters a
// second. A 500-namespace cluster costs about 100 ms of CPU to decode, evaluate at two
// targets and store (docs/performance.md: ingest runs 20–25 snapshots/s on two cores), so
// 4 a second take at most about 40 % of one core: a two-core server keeps ingesting well
// over 10 snapshots/s, and a 1,000-cluster fleet is current again in about four minutes.
const DefaultReevaluateRate = 4

const (
	// reevaluationLock names the database-wide lock of the replica re-evaluating, so
	// replicas on one Postgres do the work once.
	reevaluationLock = "upgradescope-reevaluation"
	// reevaluationRetry is how long a pass that left work waits before looking again (the
	// lock was held, the holder perhaps on another bundle set, or a cluster failed), doubled
	// after each such pass up to maxReevaluationRetry, so a cluster that fails every time
	// costs a few evaluations an hour, not one every 30 seconds.
	reevaluationRetry    = 30 * time.Second
	maxReevaluationRetry = 10 * time.Minute
	// slotPoll is how often the re-evaluation looks for an evaluation slot no push wants.
	slotPoll = 20 * time.Millisecond
)

// errPolicyChanged ends a pass when Swap replaced the policy it started with.
var errPolicyChanged = errors.New("the bundle set changed during the pass")

// errClustersFailed ends a pass that re-evaluated every cluster it could but not all.
var errClustersFailed = errors.New("clusters failed to re-evaluate")

// RunReevaluation keeps every cluster's latest snapshot evaluated with the active bundle
// set, today, until ctx ends or Close: a pass at once (a restart with new bundles), after
// every Swap, and at the start of each UTC day. A pass re-evaluates, one cluster at a time
// and at most Config.ReevaluateRate a second, each cluster whose cells at its planned
// targets are not of its latest snapshot and the current bundle set, or were judged on an
// earlier day (the rules judge dates by the day: an end of life passes while the inventory
// stays the same), through the notification path a push takes. A Swap during a pass starts
// it again with the new set. A pass that left work (a cluster failed, another replica held
// the lock) is tried again after a delay that doubles while it keeps leaving work.
func (s *Server) RunReevaluation(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.work, cancel)
	defer stop()
	delay := s.reevalRetry
	for {
		// The next day's pass is due from the day this pass starts on: a pass that runs
		// past midnight listed its clusters yesterday, so another one follows at once.
		nextDay := time.After(untilNextDay(s.now()))
		var retry <-chan time.Time
		if s.reevaluationPass(ctx) {
			retry = time.After(delay)
			delay = min(2*delay, maxReevaluationRetry)
		} else {
			delay = s.reevalRetry
		}
		select {
		case <-ctx.Done():
			return
		case <-s.reeval:
			delay = s.reevalRetry
		case <-retry:
		case <-nextDay:
		}
	}
}

// untilNextDay is how long from now until just past the next UTC midnight, when every
// judgement made today becomes yesterday's.
func untilNextDay(now time.Time) time.Duration {
	now = now.UTC()
	midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	return midnight.Sub(now) + time.Second
}

// reevaluationPass runs one pass under the database-wide lock and answers whether work
// is left that another replica's pass may not do (the lock was held, or the pass failed).
func (s *Server) reevaluationPass(ctx context.Context) bool {
	pol := s.policy()
	pending, err := s.pendingClusters(ctx, pol)
	if err != nil {
		s.log.Error("re-evaluation: cannot read the fleet; trying again later", "err", err)
		return true
	}
	if len(pending) == 0 {
		return false
	}
	ran, err := s.store.WithLock(ctx, reevaluationLock, func(ctx context.Context) error {
		return s.reevaluateAll(ctx, pol, pending)
	})
	switch {
	case errors.Is(err, errPolicyChanged):
		s.log.Info("re-evaluation: the bundle set changed; starting again")
		return false // Swap queued the next pass
	case ctx.Err() != nil:
		return false
	case errors.Is(err, errClustersFailed):
		s.log.Warn("re-evaluation: some clusters stay outdated; trying them again later", "err", err)
		return true
	case err != nil:
		s.log.Error("re-evaluation failed; trying again later", "err", err)
		return true
	case !ran:
		s.log.Info("re-evaluation: another replica is re-evaluating")
		return true
	}
	return false
}

// pendingClusters are the clusters whose latest snapshot is not evaluated with pol today
// at every target it is planned at, in the fleet's order.
func (s *Server) pendingClusters(ctx context.Context, pol *policy) ([]store.Cluster, error) {
	v, err := s.loadFleet(ctx, fleetScope)
	if err != nil {
		return nil, err
	}
	pending := s.pendingFilter(pol.key)
	var out []store.Cluster
	for _, c := range v.clusters {
		if pending(c, v.cells[c.ID]) {
			out = append(out, c)
		}
	}
	return out, nil
}

// pendingCount is how many of the view's clusters await a re-evaluation now.
func (s *Server) pendingCount(v fleetView) int {
	pending, n := s.pendingFilter(s.policy().key), 0
	for _, c := range v.clusters {
		if pending(c, v.cells[c.ID]) {
			n++
		}
	}
	return n
}

// pendingFilter answers whether a cluster, with its fleet cells, awaits a re-evaluation
// with the bundle set key today. It plans each version's targets once: a fleet runs few.
func (s *Server) pendingFilter(key string) func(store.Cluster, []store.FleetRow) bool {
	planned, now := map[string][]string{}, s.now()
	return func(c store.Cluster, cells []store.FleetRow) bool {
		if c.LatestSnapshotID == 0 {
			return false
		}
		targets, ok := planned[c.ServerVersion]
		if !ok {
			targets = s.planTargets(c.ServerVersion)
			planned[c.ServerVersion] = targets
		}
		return len(missingTargets(cells, current{c.LatestSnapshotID, key, now}, targets)) > 0
	}
}

// reevaluateAll re-evaluates clusters with pol, paced to Config.ReevaluateRate. A cluster
// that fails is logged and left pending, and the pass goes on; it then ends with
// errClustersFailed, so RunReevaluation tries those again later (as does their next push).
func (s *Server) reevaluateAll(ctx context.Context, pol *policy, clusters []store.Cluster) error {
	interval := time.Duration(float64(time.Second) / s.cfg.ReevaluateRate)
	start, done := time.Now(), 0
	var last time.Time // when the previous cluster started: a stall is not made up for
	for _, c := range clusters {
		if err := sleepUntil(ctx, last.Add(interval)); err != nil {
			return err
		}
		last = time.Now()
		if s.policy() != pol {
			return errPolicyChanged
		}
		err := s.reevaluateCluster(ctx, pol, c)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, errPolicyChanged):
			return err
		case err != nil:
			s.log.Error("re-evaluation of a cluster failed; it stays outdated", "cluster", c.Name, "err", err)
		default:
			done++
		}
	}
	failed := len(clusters) - done
	s.log.Info("re-evaluation pass finished", "clusters", done, "failed", failed,
		"bundles", pol.key, "took", time.Since(start).Round(time.Millisecond).String())
	if failed > 0 {
		return fmt.Errorf("%d of %d %w", failed, len(clusters), errClustersFailed)
	}
	return nil
}

func sleepUntil(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// reevaluateCluster evaluates c's latest snapshot with pol at the planned targets it
// lacks and stores the evaluations with the notification a push would have caused. A
// push that stored a newer snapshot meanwhile wins: nothing is stored.
func (s *Server) reevaluateCluster(ctx context.Context, pol *policy, c store.Cluster) error {
	snap, err := s.store.LatestSnapshot(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted since the pass began
	}
	if err != nil {
		return err
	}
	doc, err := s.decodeInventoryShared(ctx, snap)
	if err != nil {
		return err
	}
	cells, err := s.store.ClusterCells(ctx, c.ID)
	if err != nil {
		return err
	}
	planned := s.planTargets(currentVersion(doc, c.ServerVersion))
	targets := missingTargets(cells, current{snap.ID, pol.key, s.now()}, planned)
	if len(targets) == 0 {
		return nil // a push or another replica got there first
	}
	evals, results, err := s.evaluateQuietly(ctx, pol, doc, targets)
	if err != nil {
		return err
	}
	if s.reevalHook != nil {
		if err := s.reevalHook(); err != nil {
			return err
		}
	}
	// A Swap while this cluster waited for its slot or was evaluated: what pol judged is
	// already outdated, and storing it would notify changes of a set no longer active.
	if s.policy() != pol {
		return errPolicyChanged
	}
	// The pass listed the fleet minutes ago: a notification names the cluster as it is
	// named now, after a rename since.
	cur, err := s.store.Cluster(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	head := store.ClusterHead{ID: c.ID, Name: cur.Name, UID: cur.UID, ServerVersion: cur.ServerVersion,
		LatestSnapshotID: snap.ID, LatestHash: snap.Hash}
	return s.storeReevaluation(ctx, head, evals, results)
}

// storeReevaluation stores evals of head's latest snapshot with their notification,
// computing it again when another writer moved a baseline first, as commit does.
func (s *Server) storeReevaluation(ctx context.Context, head store.ClusterHead, evals []store.Evaluation, results map[string]*report.TargetResult) error {
	re := store.Reevaluation{ClusterID: head.ID, SnapshotID: head.LatestSnapshotID, Evaluations: evals}
	var err error
	for try := 0; try < baselineTries; try++ {
		if re.Notification, re.Baselines, err = s.notification(ctx, head, head.Name, re.Evaluations, results); err != nil {
			return fmt.Errorf("compute notifications: %w", err)
		}
		if len(re.Evaluations) > 0 && s.policy().key != re.Evaluations[0].BundlesKey {
			return errPolicyChanged // a Swap while the notification was computed
		}
		var stored int
		stored, err = s.store.Reevaluate(ctx, re)
		switch {
		case errors.Is(err, store.ErrBaselineMoved):
			continue
		case errors.Is(err, store.ErrSuperseded), errors.Is(err, store.ErrNotFound):
			return nil // a newer push was evaluated by itself, or the cluster was deleted
		case err != nil:
			return err
		}
		if stored > 0 && re.Notification != nil {
			s.notifier.Wake()
		}
		return nil
	}
	return err
}

// evaluateQuietly is evaluateWith holding an evaluation slot taken only while no push
// waits for one and fewer pushes are in progress than the process has cores: pushes come
// first, the pass uses a core they leave idle, and, one cluster at a time, it holds at
// most one slot, so a push never waits behind more than one re-evaluation.
func (s *Server) evaluateQuietly(ctx context.Context, pol *policy, doc *inventory.Document, targets []string) ([]store.Evaluation, map[string]*report.TargetResult, error) {
	cores := int32(runtime.GOMAXPROCS(0))
	for s.evalWaiters.Load() > 0 || s.pushesActive.Load() >= cores || !s.evals.TryAcquire(1) {
		if err := sleepUntil(ctx, time.Now().Add(slotPoll)); err != nil {
			return nil, nil, err
		}
	}
	defer s.evals.Release(1)
	return s.evaluateWith(ctx, pol, doc, targets)
}
