package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
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
		if tv, _ := inventory.ParseVersion(minor); !after(tv, current) {
			return "", fail(http.StatusUnprocessableEntity, fmt.Sprintf("target %s: the cluster already runs %s; pick a later minor", minor, current.MinorString()))
		}
	}
	return minor, nil
}

// serve answers the cluster's report at ?target=: the stored evaluation of its latest
// snapshot, else a what-if evaluated now from that snapshot and not stored; for a
// team-scoped reader always its share's, evaluated now. Decoding stored reports and
// inventories takes a turn: each may be tens of megabytes.
func (s *Server) serve(r *http.Request, sc scope) (*served, error) {
	c, _, err := s.cluster(r, sc)
	if err != nil {
		return nil, err
	}
	target, err := targetParam(r, c)
	if err != nil {
		return nil, err
	}
	ctx := r.Context()
	if !sc.fleet {
		return s.servedShare(ctx, c, sc, target)
	}
	if err := acquire(ctx, s.reports, 1, whatIfWait); err != nil {
		return nil, err
	}
	defer s.reports.Release(1)
	ev, err := s.store.LatestEvaluation(ctx, c.ID, target)
	switch {
	case err == nil && ev.SnapshotID == c.LatestSnapshotID:
		rep, err := s.storedReport(ev)
		if err != nil {
			return nil, err
		}
		return &served{cluster: c, target: target, source: sourceStored, snapshotID: ev.SnapshotID,
			evaluatedAt: ev.EvaluatedAt, outdated: s.outdated(ev.BundlesKey, ev.SnapshotID, c.LatestSnapshotID, ev.EvaluatedAt), report: rep}, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	return s.whatIf(ctx, c, target)
}

// storedReport decodes a stored evaluation's report.
func (s *Server) storedReport(ev store.EvaluationRecord) (*report.Report, error) {
	var rep report.Report
	if err := gunzipJSON(ev.Report, 4*s.cfg.MaxSnapshotBytes, &rep); err != nil {
		return nil, fmt.Errorf("read stored report %d: %w", ev.ID, err)
	}
	return &rep, nil
}

// latestInventory reads the cluster's latest snapshot back.
func (s *Server) latestInventory(ctx context.Context, c store.Cluster) (*inventory.Document, int64, error) {
	snap, err := s.store.LatestSnapshot(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, fail(http.StatusNotFound, "the cluster has no snapshot yet")
	} else if err != nil {
		return nil, 0, err
	}
	doc, err := s.decodeInventory(snap)
	return doc, snap.ID, err
}

// whatIf evaluates the cluster's latest snapshot at target, one at a time per server.
func (s *Server) whatIf(ctx context.Context, c store.Cluster, target string) (*served, error) {
	if err := acquire(ctx, s.whatIfs, 1, whatIfWait); err != nil {
		return nil, err
	}
	defer s.whatIfs.Release(1)
	doc, snapID, err := s.latestInventory(ctx, c)
	if err != nil {
		return nil, err
	}
	rep, err := s.policy().eng.Evaluate(ctx, s.cfg.TeamMap.apply(doc), []string{target}, s.now().UTC())
	if err != nil {
		return nil, fmt.Errorf("what-if evaluation of cluster %d at %s: %w", c.ID, target, err)
	}
	at, _ := parseTime(rep.EvaluatedAt)
	return &served{cluster: c, target: target, source: sourceWhatIf, snapshotID: snapID, evaluatedAt: at, report: rep}, nil
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
	points, err := s.history(r.Context(), c, sc, target, limit)
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
