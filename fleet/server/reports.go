package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// Where a per-cluster read's report came from.
const (
	sourceStored = api.SourceStored
	sourceWhatIf = api.SourceWhatIf
)

// served is one target's report for a per-cluster read, stored or what-if.
type served struct {
	cluster     store.Cluster
	target      string
	source      string
	snapshotID  int64
	evaluatedAt time.Time
	outdated    bool
	report      *report.Report
	// owners maps namespaces to the teams owning them (teamCells reads its values): the
	// judged inventory's; for a stored evaluation, the teams of its stored cells, each
	// under its own name.
	owners map[string]string
}

// targetParam is ?target=, defaulting to the cluster's next minor. A target the cluster
// already runs is refused: judged there, every cluster would look ready.
func targetParam(r *http.Request, c store.Cluster) (string, error) {
	t := r.URL.Query().Get("target")
	if t == "" {
		if t = inventory.DefaultTarget(c.ServerVersion); t == "" {
			return "", fail(http.StatusUnprocessableEntity, "no target given and the cluster's server version is unknown: pass ?target=1.NN")
		}
		return t, nil
	}
	minor, err := inventory.ParseTarget(t)
	if err != nil || minor != t {
		return "", fail(http.StatusUnprocessableEntity, fmt.Sprintf("target %q: write a minor as 1.NN", t))
	}
	if current, err := inventory.ParseVersion(c.ServerVersion); err == nil {
		if tv, _ := inventory.ParseVersion(minor); !tv.LaterMinor(current) {
			return "", fail(http.StatusUnprocessableEntity, fmt.Sprintf("target %s: the cluster already runs %s; pick a later minor", minor, current.MinorString()))
		}
	}
	return minor, nil
}

// servedReports answers a cluster's report at a target for every per-cluster read (the
// report, findings, teams, the export, the dashboard): stored, or a what-if.
type servedReports struct {
	reads   *fleetReads
	shares  *shareJudge
	snaps   *snapshots
	admit   *admission.Turns
	store   store.Store
	policy  *activePolicy
	teamMap TeamMap
	now     func() time.Time
}

// serve answers the cluster's report at ?target=: the stored evaluation of its latest
// snapshot, else a what-if evaluated now from that snapshot and not stored; for a
// team-scoped reader always its share's, evaluated now. Decoding stored reports and
// inventories takes a turn: each may be tens of megabytes.
func (sr *servedReports) serve(r *http.Request, sc scope) (*served, error) {
	c, _, err := sr.reads.cluster(r, sc)
	if err != nil {
		return nil, err
	}
	target, err := targetParam(r, c)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	if !sc.fleet {
		return sr.shares.served(ctx, c, sc, target)
	}
	turn, err := sr.admit.Report(ctx)
	if err != nil {
		return nil, err
	}
	defer turn()
	ev, err := sr.store.LatestEvaluation(ctx, c.ID, target)
	switch {
	case err == nil && ev.SnapshotID == c.LatestSnapshotID:
		rep, err := sr.snaps.report(ev)
		if err != nil {
			return nil, err
		}
		return &served{cluster: c, target: target, source: sourceStored, snapshotID: ev.SnapshotID,
			evaluatedAt: ev.EvaluatedAt, outdated: sr.reads.outdated(ev.BundlesKey, ev.SnapshotID, c.LatestSnapshotID, ev.EvaluatedAt), report: rep,
			owners: storedOwners(ev.Teams)}, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return sr.whatIf(ctx, c, target)
}

// whatIf evaluates the cluster's latest snapshot at target, one at a time per server.
func (sr *servedReports) whatIf(ctx context.Context, c store.Cluster, target string) (*served, error) {
	turn, err := sr.admit.WhatIf(ctx)
	if err != nil {
		return nil, err
	}
	defer turn()
	doc, snapID, err := sr.snaps.latest(ctx, c)
	if err != nil {
		return nil, err
	}
	mapped := sr.teamMap.apply(doc)
	rep, err := sr.policy.load().eng.Evaluate(ctx, mapped, []string{target}, sr.now().UTC())
	if err != nil {
		return nil, fmt.Errorf("what-if evaluation of cluster %d at %s: %w", c.ID, target, err)
	}
	at, _ := parseTime(rep.EvaluatedAt)
	return &served{cluster: c, target: target, source: sourceWhatIf, snapshotID: snapID, evaluatedAt: at, report: rep,
		owners: namespaceTeams(mapped)}, nil
}

// stored is a stored evaluation of c as served, decoded within a turn of decoding
// reports.
func (sr *servedReports) stored(ctx context.Context, c store.Cluster, ev store.EvaluationRecord) (*served, error) {
	turn, err := sr.admit.Report(ctx)
	if err != nil {
		return nil, err
	}
	defer turn()
	rep, err := sr.snaps.report(ev)
	if err != nil {
		return nil, err
	}
	return &served{cluster: c, target: ev.Target, source: sourceStored, snapshotID: ev.SnapshotID,
		evaluatedAt: ev.EvaluatedAt, report: rep, owners: storedOwners(ev.Teams)}, nil
}

// storedOwners are the teams of a stored evaluation's cells (teamCells stored one for every
// team owning a namespace), each under its own name, as served.owners holds them.
func storedOwners(cells map[string]store.TeamCell) map[string]string {
	out := make(map[string]string, len(cells))
	for team := range cells {
		if team != report.Unattributed {
			out[team] = team
		}
	}
	return out
}

// namespaceTeams maps each namespace with a team to it.
func namespaceTeams(doc *inventory.Document) map[string]string {
	out := make(map[string]string, len(doc.Namespaces))
	for _, ns := range doc.Namespaces {
		if ns.Team != "" {
			out[ns.Name] = ns.Team
		}
	}
	return out
}

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// teams are the served target's team cells the scope sees, as the fleet's cells hold them
// (teamCells): the report's rollup, which has teams only when a finding names one, and a
// cell for every team owning a namespace, blocked by what no team owns. Never nil.
func (sv *served) teams(sc scope) map[string]store.TeamCell {
	cells := shareTeamCells(*sv.result(), sv.owners, sc)
	if cells == nil {
		cells = map[string]store.TeamCell{}
	}
	return cells
}

// result is the served report's only target.
func (sv *served) result() *report.TargetResult {
	if len(sv.report.Targets) == 0 {
		return &report.TargetResult{Target: sv.target}
	}
	return &sv.report.Targets[0]
}

// reportsHandler is the per-cluster reads of a report: GET /api/v1/clusters/{id}/report,
// findings, teams and history.
type reportsHandler struct {
	served *servedReports
	reads  *fleetReads
}

func (h *reportsHandler) report(w http.ResponseWriter, r *http.Request, sc scope) error {
	sv, err := h.served.serve(r, sc)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.ClusterReport{SchemaVersion: api.ClusterReportSchema, ClusterID: sv.cluster.ID,
		ClusterName: sv.cluster.Name, Target: sv.target, Source: sv.source, SnapshotID: sv.snapshotID,
		EvaluatedAt: sv.evaluatedAt.UTC(), Outdated: sv.outdated, Report: sv.report})
	return nil
}

func (h *reportsHandler) findings(w http.ResponseWriter, r *http.Request, sc scope) error {
	q := r.URL.Query()
	severity, category := q.Get("severity"), q.Get("category")
	if severity != "" && !slices.Contains([]string{report.SeverityBlocker, report.SeverityWarning, report.SeverityInfo}, severity) {
		return fail(http.StatusUnprocessableEntity, fmt.Sprintf("severity %q: want blocker, warning or info", severity))
	}
	sv, err := h.served.serve(r, sc)
	if err != nil {
		return err
	}
	findings := []report.Finding{}
	for _, f := range sv.result().Findings {
		if (severity == "" || f.Severity == severity) && (category == "" || f.Category == category) {
			findings = append(findings, f)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"clusterId": sv.cluster.ID, "target": sv.target,
		"source": sv.source, "snapshotId": sv.snapshotID, "findings": findings})
	return nil
}

func (h *reportsHandler) teams(w http.ResponseWriter, r *http.Request, sc scope) error {
	sv, err := h.served.serve(r, sc)
	if err != nil {
		return err
	}
	unowned, _ := summarize(sv.result()).unowned()
	writeJSON(w, http.StatusOK, map[string]any{"clusterId": sv.cluster.ID, "target": sv.target,
		"source": sv.source, "teams": sv.teams(sc), "unownedBlockers": unowned})
	return nil
}

// historyPoint is one score point.
type historyPoint struct {
	At         time.Time `json:"at"`
	SnapshotID int64     `json:"snapshotId"`
	Verdict    string    `json:"verdict"`
	Score      int       `json:"score"`
	Ready      bool      `json:"ready"`
	Blockers   int       `json:"blockers"`
	Warnings   int       `json:"warnings"`
}

// Bounds of ?limit= on history.
const (
	defaultHistory = 100
	maxHistory     = 1000
)

func (h *reportsHandler) history(w http.ResponseWriter, r *http.Request, sc scope) error {
	c, _, err := h.reads.cluster(r, sc)
	if err != nil {
		return err
	}
	target, err := targetParam(r, c)
	if err != nil {
		return err
	}
	limit := defaultHistory
	if l := r.URL.Query().Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > maxHistory {
			return fail(http.StatusUnprocessableEntity, fmt.Sprintf("limit %q: want a whole number from 1 to %d", l, maxHistory))
		}
	}
	points, err := h.reads.history(r.Context(), c, sc, target, limit)
	if err != nil {
		return err
	}
	out := make([]historyPoint, 0, len(points))
	for _, p := range slices.Backward(points) { // the store answers newest first
		out = append(out, historyPoint{At: p.EvaluatedAt.UTC(), SnapshotID: p.SnapshotID, Verdict: p.Verdict,
			Score: p.Score, Ready: p.Verdict == report.VerdictReady, Blockers: p.Blockers, Warnings: p.Warnings})
	}
	writeJSON(w, http.StatusOK, map[string]any{"clusterId": c.ID, "target": target, "history": out})
	return nil
}
