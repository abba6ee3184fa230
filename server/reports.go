package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/upgradescope/upgradescope/report"
	"github.com/upgradescope/upgradescope/server/store"
)

// Where a per-cluster read's report came from.
const (
	sourceStored = "stored"
	sourceWhatIf = "what-if"
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
}

// targetParam is ?target=, defaulting to the cluster's next minor.
func targetParam(r *http.Request, c store.Cluster) (string, error) {
	t := r.URL.Query().Get("target")
	if t == "" {
		if t = nextMinor(c.ServerVersion); t == "" {
			return "", fail(http.StatusUnprocessableEntity, "no target given and the cluster's server version is unknown: pass ?target=1.NN")
		}
		return t, nil
	}
	minor, err := parseTarget(t)
	if err != nil {
		return "", fail(http.StatusUnprocessableEntity, "target: "+err.Error())
	}
	return minor, nil
}

// serve answers the cluster's report at ?target=: the stored evaluation of its latest
// snapshot, else a what-if evaluated now from that snapshot and not stored.
func (s *Server) serve(r *http.Request, sc scope) (*served, error) {
	c, _, err := s.cluster(r, sc)
	if err != nil {
		return nil, err
	}
	target, err := targetParam(r, c)
	if err != nil {
		return nil, err
	}
	ev, err := s.store.LatestEvaluation(r.Context(), c.ID, target)
	switch {
	case err == nil && ev.SnapshotID == c.LatestSnapshotID:
		var rep report.Report
		if err := gunzipJSON(ev.Report, 4*s.cfg.MaxSnapshotBytes, &rep); err != nil {
			return nil, fmt.Errorf("read stored report %d: %w", ev.ID, err)
		}
		return &served{cluster: c, target: target, source: sourceStored, snapshotID: ev.SnapshotID,
			evaluatedAt: ev.EvaluatedAt, outdated: ev.BundlesKey != s.bundlesKey, report: &rep}, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return s.whatIf(r.Context(), c, target)
}

// whatIf evaluates the cluster's latest snapshot at target, one at a time per server.
func (s *Server) whatIf(ctx context.Context, c store.Cluster, target string) (*served, error) {
	snap, err := s.store.LatestSnapshot(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fail(http.StatusNotFound, "the cluster has no snapshot yet")
	} else if err != nil {
		return nil, err
	}
	doc, err := s.decodeInventory(snap)
	if err != nil {
		return nil, err
	}
	if err := acquire(ctx, s.whatIfs, 1, whatIfWait); err != nil {
		return nil, err
	}
	defer s.whatIfs.Release(1)
	rep, err := s.engine.Evaluate(ctx, s.cfg.TeamMap.apply(doc), []string{target}, s.now().UTC())
	if err != nil {
		return nil, fmt.Errorf("what-if evaluation of cluster %d at %s: %w", c.ID, target, err)
	}
	at, _ := parseTime(rep.EvaluatedAt)
	return &served{cluster: c, target: target, source: sourceWhatIf, snapshotID: snap.ID, evaluatedAt: at, report: rep}, nil
}

func parseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// result is the served report's only target.
func (sv *served) result() *report.TargetResult {
	if len(sv.report.Targets) == 0 {
		return &report.TargetResult{Target: sv.target}
	}
	return &sv.report.Targets[0]
}

func (s *Server) clusterReport(w http.ResponseWriter, r *http.Request, sc scope) error {
	sv, err := s.serve(r, sc)
	if err != nil {
		return err
	}
	scopeResult(sv.result(), sc)
	writeJSON(w, http.StatusOK, map[string]any{"schemaVersion": 1, "clusterId": sv.cluster.ID,
		"clusterName": sv.cluster.Name, "target": sv.target, "source": sv.source, "snapshotId": sv.snapshotID,
		"evaluatedAt": sv.evaluatedAt.UTC(), "outdated": sv.outdated, "report": sv.report})
	return nil
}

func (s *Server) clusterFindings(w http.ResponseWriter, r *http.Request, sc scope) error {
	q := r.URL.Query()
	severity, category := q.Get("severity"), q.Get("category")
	if severity != "" && !slices.Contains([]string{report.SeverityBlocker, report.SeverityWarning, report.SeverityInfo}, severity) {
		return fail(http.StatusUnprocessableEntity, fmt.Sprintf("severity %q: want blocker, warning or info", severity))
	}
	sv, err := s.serve(r, sc)
	if err != nil {
		return err
	}
	tr := sv.result()
	scopeResult(tr, sc)
	findings := []report.Finding{}
	for _, f := range tr.Findings {
		if (severity == "" || f.Severity == severity) && (category == "" || f.Category == category) {
			findings = append(findings, f)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"clusterId": sv.cluster.ID, "target": sv.target,
		"source": sv.source, "snapshotId": sv.snapshotID, "findings": findings})
	return nil
}

func (s *Server) clusterTeams(w http.ResponseWriter, r *http.Request, sc scope) error {
	sv, err := s.serve(r, sc)
	if err != nil {
		return err
	}
	teams := map[string]store.TeamCell{}
	for name, t := range sv.result().Teams {
		if sc.sees(name) {
			teams[name] = store.TeamCell{Verdict: t.Verdict, Score: t.Score, Blockers: t.Blockers, Warnings: t.Warnings}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"clusterId": sv.cluster.ID, "target": sv.target,
		"source": sv.source, "teams": teams})
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

func (s *Server) clusterHistory(w http.ResponseWriter, r *http.Request, sc scope) error {
	c, _, err := s.cluster(r, sc)
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
	points, err := s.store.History(r.Context(), c.ID, target, limit)
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

// scopeResult cuts a target's findings to what a team-scoped reader may see: findings
// attributed to one of its teams, with the other teams' names removed, and team rollups
// of its teams. The cluster's verdict, score and counts stay whole: a team cannot be told
// its cluster is ready when another team's blocker stops the upgrade.
func scopeResult(tr *report.TargetResult, sc scope) {
	if sc.fleet {
		return
	}
	tr.Findings = scopedFindings(tr.Findings, sc)
	tr.Suppressed = scopedFindings(tr.Suppressed, sc)
	for name := range tr.Teams {
		if !sc.sees(name) {
			delete(tr.Teams, name)
		}
	}
	for i := range tr.NotAssessed {
		tr.NotAssessed[i].Skipped = nil
	}
}

func scopedFindings(in []report.Finding, sc scope) []report.Finding {
	out := []report.Finding{}
	for _, f := range in {
		var teams []string
		for _, t := range f.Teams {
			if sc.sees(t) {
				teams = append(teams, t)
			}
		}
		if len(teams) == 0 {
			continue
		}
		if len(teams) < len(f.Teams) {
			// Shared with teams out of scope: which objects are whose is not known here, so
			// everything that may name another team's objects is withheld.
			f.Teams, f.Detail, f.Calls = teams, "", nil
			f.Objects, f.ObjectsOmitted, f.Namespaces = nil, 0, nil
		}
		out = append(out, f)
	}
	return out
}
