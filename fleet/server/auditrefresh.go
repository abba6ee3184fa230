package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// When an audit batch names something new (newInSection), the cluster's latest snapshot is
// judged again with the section stored then, so its page shows the finding without waiting
// for the next push: auditRefreshDelay after the batch, so that the batches of one burst of
// calls (the API server sends one a second) are judged together, and at most once every
// auditRefreshEvery per cluster, so a stream of new callers costs one evaluation in that time.
const (
	auditRefreshDelay = 2 * time.Second
	auditRefreshEvery = 30 * time.Second
	// auditRefreshTimeout bounds one refresh, waiting for its evaluation slot included.
	auditRefreshTimeout = 5 * time.Minute
)

// auditRefresh schedules the refreshes of clusters whose audit section grew. What it keeps
// is this replica's: a batch another replica took is that replica's to refresh after. Safe
// for concurrent use.
type auditRefresh struct {
	re    *reevaluator
	work  context.Context
	log   *slog.Logger
	delay time.Duration
	every time.Duration
	mu    sync.Mutex
	// due holds the clusters' scheduled refreshes, last when each last started one.
	due    map[int64]*time.Timer
	last   map[int64]time.Time
	closed bool
	// running counts the refreshes scheduled and not yet done or stopped, for close.
	running sync.WaitGroup
}

func newAuditRefresh(re *reevaluator, work context.Context, log *slog.Logger) *auditRefresh {
	return &auditRefresh{re: re, work: work, log: log, delay: auditRefreshDelay, every: auditRefreshEvery,
		due: map[int64]*time.Timer{}, last: map[int64]time.Time{}}
}

// schedule asks for a refresh of the cluster: auditRefreshDelay from now, or auditRefreshEvery
// after its last one began when that is later; nothing more when one is scheduled already,
// since it reads the section when it runs.
func (ar *auditRefresh) schedule(clusterID int64) {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.closed || ar.due[clusterID] != nil {
		return
	}
	wait := ar.delay
	if next := time.Until(ar.last[clusterID].Add(ar.every)); next > wait {
		wait = next
	}
	ar.running.Add(1)
	ar.due[clusterID] = time.AfterFunc(wait, func() { ar.run(clusterID) })
}

// close stops the refreshes scheduled and waits for those running (their context is the
// server's work, cancelled before), so that the store is closed under none.
func (ar *auditRefresh) close() {
	ar.mu.Lock()
	ar.closed = true
	for id, t := range ar.due {
		if t.Stop() {
			ar.running.Done()
		}
		delete(ar.due, id)
	}
	ar.mu.Unlock()
	ar.running.Wait()
}

func (ar *auditRefresh) run(clusterID int64) {
	defer ar.running.Done()
	ar.mu.Lock()
	delete(ar.due, clusterID)
	ar.last[clusterID] = time.Now()
	ar.mu.Unlock()
	if ar.work.Err() != nil {
		return // the server is closing
	}
	ctx, cancel := context.WithTimeout(ar.work, auditRefreshTimeout)
	defer cancel()
	if err := ar.re.refresh(ctx, clusterID); err != nil && ctx.Err() == nil {
		ar.log.Warn("re-evaluation after new audit callers failed; the next push judges them", "clusterId", clusterID, "err", err)
	}
}

// refresh judges the cluster's latest snapshot again at every target it is planned at,
// with the active bundle set and the audit section stored now, and stores the evaluations
// as a re-evaluation does, with the notification a change of readiness causes. The pass
// would not: neither the snapshot nor the bundle set changed. A push that stored a newer
// snapshot meanwhile wins (store.ErrSuperseded): it was judged with the section itself.
func (re *reevaluator) refresh(ctx context.Context, clusterID int64) error {
	c, err := re.store.Cluster(ctx, clusterID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // deleted since the batch
	}
	if err != nil {
		return err
	}
	snap, doc, err := re.latest(ctx, c.ID)
	if err != nil || doc == nil {
		return err
	}
	pol := re.policy.load()
	targets := re.plan.plan(currentVersion(doc, c.ServerVersion))
	if len(targets) == 0 {
		return nil
	}
	evals, results, err := re.eval.evaluateInBackground(ctx, pol, doc, targets)
	if err != nil {
		return err
	}
	head := store.ClusterHead{ID: c.ID, Name: c.Name, UID: c.UID, ServerVersion: c.ServerVersion,
		LatestSnapshotID: snap.ID, LatestHash: snap.Hash}
	if err := re.save(ctx, head, evals, results); !errors.Is(err, errPolicyChanged) {
		return err
	}
	return nil // a bundle change's pass judges the cluster again, with the section
}
