package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
)

// reevaluator keeps every cluster's latest snapshot evaluated with the active bundle set,
// today (run).
type reevaluator struct {
	store  store.Store
	policy *activePolicy
	reads  *fleetReads
	snaps  *snapshots
	eval   *evaluator
	notes  *notifications
	plan   targetPlan
	now    func() time.Time
	log    *slog.Logger
	// rate is Config.ReevaluateRate, in clusters a second.
	rate float64
	// wake starts a pass (Server.Swap).
	wake chan struct{}
	// retry is run's first delay before trying a pass that left work again
	// (reevaluationRetry; tests shorten it).
	retry time.Duration
	// hook, set by tests, runs between a re-evaluation and its store.
	hook func() error
}

// due asks for a pass: the bundle set changed.
func (re *reevaluator) due() {
	select {
	case re.wake <- struct{}{}:
	default: // a pass is due already; it reads the policy when it starts
	}
}

// errPolicyChanged ends a pass when Swap replaced the policy it started with.
var errPolicyChanged = errors.New("the bundle set changed during the pass")

// errClustersFailed ends a pass that re-evaluated every cluster it could but not all.
var errClustersFailed = errors.New("clusters failed to re-evaluate")

// run keeps every cluster's latest snapshot evaluated with the active bundle set, today,
// until ctx ends: a pass at once (a restart with new bundles), after
// every Swap, and at the start of each UTC day. A pass re-evaluates, one cluster at a time
// and at most Config.ReevaluateRate a second, each cluster whose cells at its planned
// targets are not of its latest snapshot and the current bundle set, or were judged on an
// earlier day (the rules judge dates by the day: an end of life passes while the inventory
// stays the same), through the notification path a push takes. A Swap during a pass starts
// it again with the new set. A pass that left work (a cluster failed, another replica held
// the lock) is tried again after a delay that doubles while it keeps leaving work.
func (re *reevaluator) run(ctx context.Context) {
	delay := re.retry
	for {
		// The next day's pass is due from the day this pass starts on: a pass that runs
		// past midnight listed its clusters yesterday, so another one follows at once.
		nextDay := time.After(untilNextDay(re.now()))
		var retry <-chan time.Time
		if re.pass(ctx) {
			retry = time.After(delay)
			delay = min(2*delay, maxReevaluationRetry)
		} else {
			delay = re.retry
		}
		select {
		case <-ctx.Done():
			return
		case <-re.wake:
			delay = re.retry
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

// pass runs one pass under the database-wide lock and answers whether work
// is left that another replica's pass may not do (the lock was held, or the pass failed).
func (re *reevaluator) pass(ctx context.Context) bool {
	pol := re.policy.load()
	pending, err := re.pending(ctx, pol)
	if err != nil {
		re.log.Error("re-evaluation: cannot read the fleet; trying again later", "err", err)
		return true
	}
	if len(pending) == 0 {
		return false
	}
	ran, err := re.store.WithLock(ctx, reevaluationLock, func(ctx context.Context) error {
		return re.all(ctx, pol, pending)
	})
	switch {
	case errors.Is(err, errPolicyChanged):
		re.log.Info("re-evaluation: the bundle set changed; starting again")
		return false // Swap queued the next pass
	case ctx.Err() != nil:
		return false
	case errors.Is(err, errClustersFailed):
		re.log.Warn("re-evaluation: some clusters stay outdated; trying them again later", "err", err)
		return true
	case err != nil:
		re.log.Error("re-evaluation failed; trying again later", "err", err)
		return true
	case !ran:
		re.log.Info("re-evaluation: another replica is re-evaluating")
		return true
	}
	return false
}

// pending are the clusters whose latest snapshot is not evaluated with pol today
// at every target it is planned at, in the fleet's order.
func (re *reevaluator) pending(ctx context.Context, pol *policy) ([]store.Cluster, error) {
	v, err := re.reads.loadFleet(ctx, fleetScope)
	if err != nil {
		return nil, err
	}
	pending := re.pendingFilter(pol.key)
	var out []store.Cluster
	for _, c := range v.clusters {
		if pending(c, v.cells[c.ID]) {
			out = append(out, c)
		}
	}
	return out, nil
}

// pendingCount is how many of the view's clusters await a re-evaluation now.
func (re *reevaluator) pendingCount(v fleetView) int {
	pending, n := re.pendingFilter(re.policy.load().key), 0
	for _, c := range v.clusters {
		if pending(c, v.cells[c.ID]) {
			n++
		}
	}
	return n
}

// pendingFilter answers whether a cluster, with its fleet cells, awaits a re-evaluation
// with the bundle set key today. It plans each version's targets once: a fleet runs few.
func (re *reevaluator) pendingFilter(key string) func(store.Cluster, []store.FleetRow) bool {
	planned, now := map[string][]string{}, re.now()
	return func(c store.Cluster, cells []store.FleetRow) bool {
		if c.LatestSnapshotID == 0 {
			return false
		}
		targets, ok := planned[c.ServerVersion]
		if !ok {
			targets = re.plan.plan(c.ServerVersion)
			planned[c.ServerVersion] = targets
		}
		return len(missingTargets(cells, current{c.LatestSnapshotID, key, now}, targets)) > 0
	}
}

// all re-evaluates clusters with pol, paced to Config.ReevaluateRate. A cluster
// that fails is logged and left pending, and the pass goes on; it then ends with
// errClustersFailed, so run tries those again later (as does their next push).
func (re *reevaluator) all(ctx context.Context, pol *policy, clusters []store.Cluster) error {
	interval := time.Duration(float64(time.Second) / re.rate)
	start, done := time.Now(), 0
	var last time.Time // when the previous cluster started: a stall is not made up for
	for _, c := range clusters {
		if err := sleepUntil(ctx, last.Add(interval)); err != nil {
			return err
		}
		last = time.Now()
		if re.policy.load() != pol {
			return errPolicyChanged
		}
		err := re.cluster(ctx, pol, c)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, errPolicyChanged):
			return err
		case err != nil:
			re.log.Error("re-evaluation of a cluster failed; it stays outdated", "cluster", c.Name, "err", err)
		default:
			done++
		}
	}
	failed := len(clusters) - done
	re.log.Info("re-evaluation pass finished", "clusters", done, "failed", failed,
		"bundles", pol.key, "took", time.Since(start).Round(time.Millisecond).String())
	if failed > 0 {
		return fmt.Errorf("%d of %d %w", failed, len(clusters), errClustersFailed)
	}
	return nil
}

// cluster evaluates c's latest snapshot with pol at the planned targets it
// lacks and stores the evaluations with the notification a push would have caused. A
// push that stored a newer snapshot meanwhile wins: nothing is stored.
func (re *reevaluator) cluster(ctx context.Context, pol *policy, c store.Cluster) error {
	snap, doc, err := re.latest(ctx, c.ID)
	if err != nil || doc == nil {
		return err // nil: deleted since the pass began
	}
	cells, err := re.store.ClusterCells(ctx, c.ID)
	if err != nil {
		return err
	}
	planned := re.plan.plan(currentVersion(doc, c.ServerVersion))
	targets := missingTargets(cells, current{snap.ID, pol.key, re.now()}, planned)
	if len(targets) == 0 {
		return nil // a push or another replica got there first
	}
	evals, results, err := re.eval.evaluateInBackground(ctx, pol, doc, targets)
	if err != nil {
		return err
	}
	if re.hook != nil {
		if err := re.hook(); err != nil {
			return err
		}
	}
	// A Swap while this cluster waited for its slot or was evaluated: what pol judged is
	// already outdated, and storing it would notify changes of a set no longer active.
	if re.policy.load() != pol {
		return errPolicyChanged
	}
	// The pass listed the fleet minutes ago: a notification names the cluster as it is
	// named now, after a rename since.
	cur, err := re.store.Cluster(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	head := store.ClusterHead{ID: c.ID, Name: cur.Name, UID: cur.UID, ServerVersion: cur.ServerVersion,
		LatestSnapshotID: snap.ID, LatestHash: snap.Hash}
	return re.save(ctx, head, evals, results)
}

// save stores evals of head's latest snapshot with their notification,
// computing it again when another writer moved a baseline first, as commit does.
func (re *reevaluator) save(ctx context.Context, head store.ClusterHead, evals []store.Evaluation, results map[string]*report.TargetResult) error {
	rec := store.Reevaluation{ClusterID: head.ID, SnapshotID: head.LatestSnapshotID, Evaluations: evals}
	var err error
	for try := 0; try < baselineTries; try++ {
		if rec.Notification, rec.Baselines, err = re.notes.notification(ctx, head, head.Name, rec.Evaluations, results); err != nil {
			return fmt.Errorf("compute notifications: %w", err)
		}
		if len(rec.Evaluations) > 0 && re.policy.load().key != rec.Evaluations[0].BundlesKey {
			return errPolicyChanged // a Swap while the notification was computed
		}
		var stored int
		stored, err = re.store.Reevaluate(ctx, rec)
		switch {
		case errors.Is(err, store.ErrBaselineMoved):
			continue
		case errors.Is(err, store.ErrSuperseded), errors.Is(err, store.ErrNotFound):
			return nil // a newer push was evaluated by itself, or the cluster was deleted
		case err != nil:
			return err
		}
		if stored > 0 && rec.Notification != nil {
			re.notes.wake()
		}
		return nil
	}
	return err
}

// sleepUntil waits until at or until ctx ends, answering ctx's error then.
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

// latest reads the cluster's latest snapshot as the server judges it (snapshots.decode);
// a nil document when it has none (deleted since).
func (re *reevaluator) latest(ctx context.Context, clusterID int64) (store.SnapshotRecord, *inventory.Document, error) {
	snap, err := re.store.LatestSnapshot(ctx, clusterID)
	if errors.Is(err, store.ErrNotFound) {
		return snap, nil, nil
	}
	if err != nil {
		return snap, nil, err
	}
	doc, err := re.snaps.decodeInBackground(ctx, snap)
	return snap, doc, err
}
