package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/report"
)

// A team-scoped reader's verdicts, scores, counts and findings are those of its share
// (shareOf), evaluated when it reads them from the cluster's latest snapshot with the active
// bundle set: the stored evaluations judged the whole cluster and are the fleet's. What the
// fleet cells of shares sum up is kept in memory (shareCache) until the snapshot, the
// bundle set or the UTC day changes.

// othersGap is what every share's judgement of a cluster has not assessed: the rest of it.
// It is there whether or not other teams own anything, so it says nothing about them; it
// keeps a share's cluster verdict from ever reading ready (the teams' own verdicts, in the
// team rollup, are judged without it).
var othersGap = report.Gap{Capability: "other-teams", Required: true,
	Reason: "not this token's to read: other teams' namespaces, and what the cluster counts without saying where (label sets of image versions also running elsewhere), are left out of a team-scoped judgement, so the cluster's own verdict is unknown here unless its share is blocked"}

// shareJudge evaluates team-scoped readers' shares of clusters and keeps the fleet cells
// they sum up to (cache).
type shareJudge struct {
	admit   *admission.Turns
	snaps   *snapshots
	policy  *activePolicy
	teamMap TeamMap
	plan    targetPlan
	now     func() time.Time
	log     *slog.Logger
	cache   shareCache
}

// judge evaluates the scope's share of cluster c's latest snapshot at targets with pol,
// one evaluation at a time per server (as a what-if), and answers the report, each target
// judged as a share (asShare), with the share's snapshot.
func (sj *shareJudge) judge(ctx context.Context, c store.Cluster, sc scope, pol *policy, targets []string) (*report.Report, judgedShare, error) {
	turn, err := sj.admit.WhatIf(ctx)
	if err != nil {
		return nil, judgedShare{}, err
	}
	defer turn()
	doc, snapID, err := sj.snaps.latest(ctx, c)
	if err != nil {
		return nil, judgedShare{}, err
	}
	share := shareOf(sj.teamMap.apply(doc), sc)
	rep, err := pol.eng.Evaluate(ctx, share, targets, sj.now().UTC())
	if err != nil {
		return nil, judgedShare{}, fmt.Errorf("evaluate the share of teams %v of cluster %d at %v: %w", sc.teams, c.ID, targets, err)
	}
	for i := range rep.Targets {
		asShare(&rep.Targets[i], sc)
	}
	return rep, judgedShare{snapshot: snapID, owners: namespaceTeams(share)}, nil
}

// judgedShare is the snapshot a share was judged from and who owns its namespaces.
type judgedShare struct {
	snapshot int64
	owners   map[string]string
}

// asShare makes an evaluated share's target what a team-scoped reader reads: othersGap
// added (never ready), and the scope's teams alone in the rollup.
func asShare(tr *report.TargetResult, sc scope) {
	tr.NotAssessed = append(tr.NotAssessed, othersGap)
	slices.SortStableFunc(tr.NotAssessed, func(a, b report.Gap) int { return strings.Compare(a.Capability, b.Capability) })
	tr.Verdict = report.Verdict(tr.Blockers, tr.NotAssessed)
	for name := range tr.Teams {
		if !sc.sees(name) {
			delete(tr.Teams, name)
		}
	}
}

// served is the scope's share of cluster c at target, evaluated now: a what-if.
func (sj *shareJudge) served(ctx context.Context, c store.Cluster, sc scope, target string) (*served, error) {
	rep, judged, err := sj.judge(ctx, c, sc, sj.policy.load(), []string{target})
	if err != nil {
		return nil, err
	}
	at, _ := parseTime(rep.EvaluatedAt)
	return &served{cluster: c, target: target, source: sourceWhatIf, snapshotID: judged.snapshot, evaluatedAt: at, report: rep,
		owners: judged.owners}, nil
}

// cells are the fleet cells of the scope's share of c at targets (its planned targets
// when nil), in place of the stored ones; none before its first snapshot. A share that
// fails to evaluate has no cells, as a stored evaluation that failed; only a busy server is
// an error.
func (sj *shareJudge) cells(ctx context.Context, c store.Cluster, sc scope, targets []string) ([]store.FleetRow, error) {
	judged, err := sj.judged(ctx, c, sc, targets)
	return judged.rows, err
}

// shareCells are a share's fleet cells and their report summaries by target.
type shareCells struct {
	rows []store.FleetRow
	sums map[string]*evalSummary
}

// judged is cells with the summaries of the share's report at each target.
func (sj *shareJudge) judged(ctx context.Context, c store.Cluster, sc scope, targets []string) (shareCells, error) {
	if targets == nil {
		targets = sj.plan.plan(c.ServerVersion)
	}
	if c.LatestSnapshotID == 0 || len(targets) == 0 {
		return shareCells{}, nil
	}
	pol := sj.policy.load()
	key := shareKey{cluster: c.ID, snapshot: c.LatestSnapshotID, policy: pol.key, day: sj.now().UTC().Format(time.DateOnly),
		teams: strings.Join(slices.Sorted(slices.Values(sc.teams)), ","), targets: strings.Join(targets, ",")}
	if cached, ok := sj.cache.get(key); ok {
		return cached, nil
	}
	rep, judged, err := sj.judge(ctx, c, sc, pol, targets)
	switch {
	case errors.Is(err, admission.ErrBusy) || ctx.Err() != nil:
		return shareCells{}, err
	case err != nil:
		sj.log.Error("a team-scoped evaluation failed; its cells stay empty", "cluster", c.Name, "err", err)
		return shareCells{}, nil
	}
	out := shareCells{rows: make([]store.FleetRow, 0, len(rep.Targets)), sums: make(map[string]*evalSummary, len(rep.Targets))}
	at, _ := parseTime(rep.EvaluatedAt)
	for i, tr := range rep.Targets {
		out.rows = append(out.rows, store.FleetRow{ClusterID: c.ID, ClusterName: c.Name, Target: tr.Target, SnapshotID: judged.snapshot,
			Verdict: tr.Verdict, Score: tr.Score, Blockers: tr.Blockers, Warnings: tr.Warnings, EvaluatedAt: at,
			BundlesKey: pol.key, Teams: shareTeamCells(tr, judged.owners, sc)})
		out.sums[tr.Target] = summarize(&rep.Targets[i])
	}
	sj.cache.put(key, out)
	return out, nil
}

// shareTeamCells are the scope's teams' cells of a share's target, one for each team owning
// a namespace of the share (owners), as teamCells makes them.
// Teams are judged without othersGap, as the engine judged those with findings. A fleet
// scope's target has no othersGap and sees every team: its cells are teamCells'.
func shareTeamCells(tr report.TargetResult, owners map[string]string, sc scope) map[string]store.TeamCell {
	tr.NotAssessed = slices.DeleteFunc(slices.Clone(tr.NotAssessed), func(g report.Gap) bool {
		return g.Capability == othersGap.Capability && g.Reason == othersGap.Reason
	})
	cells := teamCells(tr, owners)
	for name := range cells {
		if !sc.sees(name) {
			delete(cells, name)
		}
	}
	return cells
}

// history is a team-scoped reader's history of c at target: the share's judgement of
// the latest snapshot alone. The stored history judged the whole cluster, and the earlier
// snapshots' shares are not evaluated again.
func (sj *shareJudge) history(ctx context.Context, c store.Cluster, sc scope, target string) ([]store.HistoryPoint, error) {
	rows, err := sj.cells(ctx, c, sc, []string{target})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	r := rows[0]
	return []store.HistoryPoint{{SnapshotID: r.SnapshotID, Target: r.Target, Verdict: r.Verdict, Score: r.Score,
		Blockers: r.Blockers, Warnings: r.Warnings, EvaluatedAt: r.EvaluatedAt, BundlesKey: r.BundlesKey}}, nil
}

// shareKey names one set of a share's cells: the cluster's latest snapshot, the bundle set,
// the UTC day (rules judge dates by it), the scope's teams and the targets.
type shareKey struct {
	cluster, snapshot           int64
	policy, day, teams, targets string
}

// maxShareCells bounds the cached sets of cells: a few hundred bytes each, and the
// summaries of their blockers and warnings.
const maxShareCells = 4096

// shareCache holds the cells of shares already evaluated. Safe for concurrent use.
type shareCache struct {
	mu sync.Mutex
	m  map[shareKey]shareCells
}

func (c *shareCache) get(k shareKey) (shareCells, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	rows, ok := c.m[k]
	return rows, ok
}

// put stores rows under k; a full cache starts again empty: what it held is judged again
// when read, and entries of past snapshots, bundle sets and days go with it.
func (c *shareCache) put(k shareKey, cells shareCells) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxShareCells {
		c.m = map[shareKey]shareCells{}
	}
	c.m[k] = cells
}
