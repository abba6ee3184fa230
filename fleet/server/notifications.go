package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/upgradescope/upgradescope/fleet/server/notify"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/report"
)

// baselineTries bounds how often an ingest compares again after another ingest of the
// same cluster moved a baseline under it (store.ErrBaselineMoved).
const baselineTries = 3

// notifications computes the message a change of readiness enqueues (an ingest's or a
// re-evaluation's) and wakes the worker delivering the outbox to the sinks.
type notifications struct {
	store store.Store
	snaps *snapshots
	log   *slog.Logger
	now   func() time.Time
	// worker delivers the outbox; nil without sinks, and then nothing is enqueued.
	worker *notify.Worker
	// sinks are the queues a message is enqueued to.
	sinks []string
	// base is where links to the dashboard start (Config.PublicURL), "" for no links.
	base string
}

// newNotifications is the notifications of cfg's sinks, none without any.
func newNotifications(cfg Config, snaps *snapshots) *notifications {
	n := &notifications{store: cfg.Store, snaps: snaps, log: cfg.Logger, now: cfg.Now, base: cfg.PublicURL}
	if len(cfg.Sinks) == 0 {
		return n
	}
	opts := append([]notify.Option{notify.WithLogger(cfg.Logger)}, cfg.NotifyOptions...)
	n.worker = notify.NewWorker(cfg.Store, cfg.Sinks, opts...)
	for _, sink := range cfg.Sinks {
		n.sinks = append(n.sinks, sink.Name)
	}
	return n
}

// run delivers queued notifications until ctx ends; without sinks it returns at once.
func (n *notifications) run(ctx context.Context) {
	if n.worker != nil {
		n.worker.Run(ctx)
	}
}

// wake tells the worker a message was enqueued.
func (n *notifications) wake() { n.worker.Wake() }

// collectors are the worker's metrics, none without sinks.
func (n *notifications) collectors() []prometheus.Collector {
	if n.worker == nil {
		return nil
	}
	return n.worker.Collectors()
}

// notification is the message an ingest of cluster head (zero before its first push)
// enqueues for evals, nil when nothing changed or no sink is configured, and the
// baselines it was computed against, for the store to check in the ingest's transaction.
// It sets each evaluation's carried blockers. A cluster's first evaluations are silent;
// so is a target's first decided one, and one the cluster's previous pass did not
// evaluate (a target removed from --target and added back).
func (n *notifications) notification(ctx context.Context, head store.ClusterHead, name string, evals []store.Evaluation, results map[string]*report.TargetResult) (*store.Notification, map[string]int64, error) {
	if n.worker == nil || len(evals) == 0 {
		return nil, nil, nil
	}
	previous, err := n.previousPass(ctx, head)
	if err != nil {
		return nil, nil, err
	}
	baselines := make(map[string]int64, len(evals))
	deltas := make([]notify.TargetDelta, 0, len(evals))
	for i := range evals {
		d, base, err := n.delta(ctx, head.ID, &evals[i], results[evals[i].Target], previous[evals[i].Target])
		if err != nil {
			return nil, nil, err
		}
		baselines[evals[i].Target] = base
		deltas = append(deltas, d)
	}
	if head.ID == 0 {
		return nil, baselines, nil
	}
	cluster := notify.Cluster{ID: head.ID, Name: name}
	body := notify.NewBody(cluster, clusterPage(n.base, head.ID), deltas, n.now())
	if body == nil {
		return nil, baselines, nil
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, nil, fmt.Errorf("encode notification: %w", err)
	}
	return &store.Notification{DeliveryID: body.DeliveryID, Body: raw, Sinks: n.sinks}, baselines, nil
}

// previousPass answers the targets the cluster's latest snapshot was evaluated at.
func (n *notifications) previousPass(ctx context.Context, head store.ClusterHead) (map[string]bool, error) {
	if head.ID == 0 {
		return nil, nil
	}
	cells, err := n.store.ClusterCells(ctx, head.ID)
	if err != nil {
		return nil, fmt.Errorf("read the previous pass: %w", err)
	}
	out := make(map[string]bool, len(cells))
	for _, c := range cells {
		if c.SnapshotID == head.LatestSnapshotID {
			out[c.Target] = true
		}
	}
	return out, nil
}

// delta compares ev with the target's last decided evaluation, sets the blockers ev
// carries, and answers that evaluation's id (0 when there is none). The baseline counts
// only when the previous pass evaluated the target (inPrevious); otherwise, or when its
// report cannot be read (logged), the target is silent this once.
func (n *notifications) delta(ctx context.Context, cluster int64, ev *store.Evaluation, cur *report.TargetResult, inPrevious bool) (notify.TargetDelta, int64, error) {
	d := notify.TargetDelta{Target: notify.Target{Target: ev.Target, Verdict: ev.Verdict, Score: ev.Score, Blockers: ev.Blockers}}
	if notify.Decided(ev.Verdict) {
		if cur == nil {
			return d, 0, fmt.Errorf("no evaluated result for target %s", ev.Target)
		}
		ev.Carried = notify.Carry(nil, *cur)
	}
	if cluster == 0 {
		return d, 0, nil
	}
	base, err := n.store.LastDecidedEvaluation(ctx, cluster, ev.Target)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return d, 0, nil
	case err != nil:
		return d, 0, err
	}
	if !notify.Decided(ev.Verdict) || !inPrevious {
		return d, base.ID, nil
	}
	old, err := n.targetResult(base)
	if err != nil {
		n.log.Error("notifications: the baseline's report is unreadable; this target is silent", "cluster", cluster,
			"target", ev.Target, "err", err)
		return d, base.ID, nil
	}
	b := &notify.Baseline{Result: old, Carried: base.Carried}
	ev.Carried = notify.Carry(b, *cur)
	d.Changes = notify.Compare(b, *cur)
	return d, base.ID, nil
}

// targetResult is the one target a stored evaluation's report holds.
func (n *notifications) targetResult(ev store.EvaluationRecord) (*report.TargetResult, error) {
	rep, err := n.snaps.report(ev)
	if err != nil {
		return nil, err
	}
	for i := range rep.Targets {
		if rep.Targets[i].Target == ev.Target {
			return &rep.Targets[i], nil
		}
	}
	return nil, fmt.Errorf("stored report %d has no target %s", ev.ID, ev.Target)
}

// forIngest sets in's notification and baselines for an ingest of cluster head.
func (n *notifications) forIngest(ctx context.Context, in *store.Ingest, results map[string]*report.TargetResult, head store.ClusterHead, name string) error {
	msg, baselines, err := n.notification(ctx, head, name, in.Evaluations, results)
	if err != nil {
		return fmt.Errorf("compute notifications: %w", err)
	}
	in.Notification, in.Baselines = msg, baselines
	return nil
}
