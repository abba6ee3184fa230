package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/upgradescope/upgradescope/fleet/server/notify"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/report"
)

// baselineTries bounds how often an ingest compares again after another ingest of the
// same cluster moved a baseline under it (store.ErrBaselineMoved).
const baselineTries = 3

// RunNotifications delivers queued notifications until ctx ends; without sinks it returns
// at once.
func (s *Server) RunNotifications(ctx context.Context) {
	if s.notifier != nil {
		s.notifier.Run(ctx)
	}
}

// notification is the message an ingest of cluster head (zero before its first push)
// enqueues for evals, nil when nothing changed or no sink is configured, and the
// baselines it was computed against, for the store to check in the ingest's transaction.
// It sets each evaluation's carried blockers. A cluster's first evaluations are silent;
// so is a target's first decided one, and one the cluster's previous pass did not
// evaluate (a target removed from --targets and added back).
func (s *Server) notification(ctx context.Context, head store.ClusterHead, name string, evals []store.Evaluation, results map[string]*report.TargetResult) (*store.Notification, map[string]int64, error) {
	if s.notifier == nil || len(evals) == 0 {
		return nil, nil, nil
	}
	previous, err := s.previousPass(ctx, head)
	if err != nil {
		return nil, nil, err
	}
	baselines := make(map[string]int64, len(evals))
	deltas := make([]notify.TargetDelta, 0, len(evals))
	for i := range evals {
		d, base, err := s.delta(ctx, head.ID, &evals[i], results[evals[i].Target], previous[evals[i].Target])
		if err != nil {
			return nil, nil, err
		}
		baselines[evals[i].Target] = base
		deltas = append(deltas, d)
	}
	if head.ID == 0 {
		return nil, baselines, nil
	}
	body := notify.NewBody(notify.Cluster{ID: head.ID, Name: name}, deltas, s.now())
	if body == nil {
		return nil, baselines, nil
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, nil, fmt.Errorf("encode notification: %w", err)
	}
	return &store.Notification{DeliveryID: body.DeliveryID, Body: raw, Sinks: s.sinkNames}, baselines, nil
}

// previousPass answers the targets the cluster's latest snapshot was evaluated at.
func (s *Server) previousPass(ctx context.Context, head store.ClusterHead) (map[string]bool, error) {
	if head.ID == 0 {
		return nil, nil
	}
	cells, err := s.store.ClusterCells(ctx, head.ID)
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
func (s *Server) delta(ctx context.Context, cluster int64, ev *store.Evaluation, cur *report.TargetResult, inPrevious bool) (notify.TargetDelta, int64, error) {
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
	base, err := s.store.LastDecidedEvaluation(ctx, cluster, ev.Target)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return d, 0, nil
	case err != nil:
		return d, 0, err
	}
	if !notify.Decided(ev.Verdict) || !inPrevious {
		return d, base.ID, nil
	}
	old, err := s.targetResult(base)
	if err != nil {
		s.log.Error("notifications: the baseline's report is unreadable; this target is silent", "cluster", cluster,
			"target", ev.Target, "err", err)
		return d, base.ID, nil
	}
	b := &notify.Baseline{Result: old, Carried: base.Carried}
	ev.Carried = notify.Carry(b, *cur)
	d.Changes = notify.Compare(b, *cur)
	return d, base.ID, nil
}

// targetResult is the one target a stored evaluation's report holds.
func (s *Server) targetResult(ev store.EvaluationRecord) (*report.TargetResult, error) {
	rep, err := s.storedReport(ev)
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

// notify sets in's notification and baselines for an ingest of cluster head.
func (s *Server) notify(ctx context.Context, in *store.Ingest, results map[string]*report.TargetResult, head store.ClusterHead, name string) error {
	n, baselines, err := s.notification(ctx, head, name, in.Evaluations, results)
	if err != nil {
		return fmt.Errorf("compute notifications: %w", err)
	}
	in.Notification, in.Baselines = n, baselines
	return nil
}
