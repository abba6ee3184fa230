package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// fleetHandler is the fleet-wide reads: GET /api/v1/fleet and /api/v1/fleet/teams.
type fleetHandler struct {
	reads  *fleetReads
	policy *activePolicy
	plan   targetPlan
	now    func() time.Time
	// pending counts the view's clusters awaiting a re-evaluation (reevaluator).
	pending func(fleetView) int
}

// matrix is GET /api/v1/fleet: clusters × targets from stored evaluations only, a null
// cell where there is none or the cluster already runs the target, and every cluster
// counted where it stands at ?target= (each cluster's next minor when absent), its row
// saying where and why as the fleet page does (standingOf).
func (h *fleetHandler) matrix(w http.ResponseWriter, r *http.Request, sc scope) error {
	asked, err := fleetTargets(r.URL.Query().Get("targets"))
	if err != nil {
		return err
	}
	at, err := targetQuery(r)
	if err != nil {
		return err
	}
	v, err := h.reads.loadFleet(r.Context(), sc)
	if err != nil {
		return err
	}
	if err := h.reads.withSummaries(r.Context(), &v); err != nil {
		return err
	}
	targets := asked
	if targets == nil {
		targets = h.plan.columns(v.clusters)
	}
	rows := make([]api.FleetRow, 0, len(v.clusters))
	parsed := parseMinors(targets)
	for _, c := range byName(v.clusters) {
		row := h.reads.fleetRow(c, v.cells[c.ID], targets, parsed)
		row.Standing = h.reads.standingOf(v, standAt(c, v.cells[c.ID], at), sc)
		rows = append(rows, row)
	}
	writeJSON(w, http.StatusOK, api.Fleet{Targets: targets, GeneratedAt: h.now().UTC(), Clusters: rows,
		Bundles: wireBundles(h.policy.load().bundles), Reevaluation: api.Reevaluation{Pending: h.pending(v)},
		Counts: countStandings(at, v.standings(at))})
	return nil
}

// wireBundles is bundles by name as the API answers them, never nil.
func wireBundles(bundles []store.Bundle) []api.Bundle {
	out := []api.Bundle{}
	for _, b := range sortedBundles(bundles) {
		out = append(out, api.Bundle{Name: b.Name, Revision: b.Revision})
	}
	return out
}

// sortedBundles is bundles by name, never nil.
func sortedBundles(bundles []store.Bundle) []store.Bundle {
	out := append([]store.Bundle{}, bundles...)
	slices.SortFunc(out, func(a, b store.Bundle) int { return strings.Compare(a.Name+"@"+a.Revision, b.Name+"@"+b.Revision) })
	return out
}

// parseMinors parses targets the request has already checked.
func parseMinors(targets []string) []inventory.Version {
	out := make([]inventory.Version, len(targets))
	for i, t := range targets {
		out[i], _ = inventory.ParseVersion(t)
	}
	return out
}

// applicable answers whether target is after the minor the cluster runs (true when either
// version is unknown): a cell at a target already reached says nothing about upgrading.
func applicable(c store.Cluster, target string) bool {
	current, err := inventory.ParseVersion(c.ServerVersion)
	if err != nil {
		return true
	}
	tv, err := inventory.ParseVersion(target)
	return err != nil || tv.LaterMinor(current)
}

// fleetTargets reads ?targets= (nil when absent): at most MaxFleetTargets minors.
func fleetTargets(raw string) ([]string, error) {
	if raw == "" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.Split(raw, ",") {
		t, err := inventory.ParseTarget(strings.TrimSpace(part))
		if err != nil {
			return nil, fail(http.StatusUnprocessableEntity, "targets: "+err.Error())
		}
		out = append(out, t)
	}
	out = inventory.SortMinors(out)
	if len(out) > MaxFleetTargets {
		return nil, fail(http.StatusUnprocessableEntity, fmt.Sprintf("targets: at most %d minors", MaxFleetTargets))
	}
	return out, nil
}

func byName(clusters []store.Cluster) []store.Cluster {
	out := slices.Clone(clusters)
	slices.SortFunc(out, func(a, b store.Cluster) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// teamRollup is one team across the fleet at one target.
type teamRollup struct {
	Verdict    string   `json:"verdict"`
	WorstScore int      `json:"worstScore"`
	Blockers   int      `json:"blockers"`
	Clusters   []string `json:"clusters"`
}

// verdictRank orders verdicts from best to worst: a team's rollup takes its worst.
var verdictRank = map[string]int{report.VerdictReady: 0, report.VerdictUnknown: 1, report.VerdictBlocked: 2}

// fleetTeams is GET /api/v1/fleet/teams?target=: each team's worst verdict and score, and
// its blockers summed, across the stored evaluations the reader sees.
func (h *fleetHandler) teams(w http.ResponseWriter, r *http.Request, sc scope) error {
	// Without a target each cluster is judged at its next minor, as fleet/findings and the
	// dashboard's pages judge it.
	target := ""
	if raw := r.URL.Query().Get("target"); raw != "" {
		var err error
		if target, err = inventory.ParseTarget(raw); err != nil {
			return fail(http.StatusUnprocessableEntity, "target: "+err.Error())
		}
	}
	v, err := h.reads.loadFleet(r.Context(), sc)
	if err != nil {
		return err
	}
	teams, missing := rollTeams(v, sc, target)
	names := make([]string, len(missing))
	for i, c := range missing {
		names[i] = c.Name
	}
	writeJSON(w, http.StatusOK, map[string]any{"target": target, "teams": teams, "missing": names})
	return nil
}

// rollTeams rolls each team the scope sees up across the fleet view at target ("" is each
// cluster's next minor), and answers the clusters with no stored evaluation there, by name.
// Clusters that already run the target are left out of both.
//
// report.Unattributed, which only the fleet sees, is the blockers no team owns: the
// clusters having some, their sum, blocked; absent when there are none. A cell's
// (unattributed) team is the report's, which counts every finding without a team (so it
// sits, ready, on clusters with an unowned warning) and is left out of a report where no
// finding names a team (where every blocker is no team's): neither answers "what blocks
// every team", so the row is made from unownedOn instead.
func rollTeams(v fleetView, sc scope, target string) (map[string]*teamRollup, []store.Cluster) {
	teams := map[string]*teamRollup{}
	judged, missing := judgedAt(v, target)
	for _, j := range judged {
		for name, cell := range j.row.Teams {
			if name != report.Unattributed && sc.sees(name) {
				teams[name] = roll(teams[name], cell, j.cluster.Name)
			}
		}
		if !sc.sees(report.Unattributed) {
			continue
		}
		if u, ok := unownedOn(v, j, sc); ok && u.Blockers > 0 {
			teams[report.Unattributed] = roll(teams[report.Unattributed], u, j.cluster.Name)
		}
	}
	return teams, missing
}

// judgedCluster is a cluster and its fleet row at the target a team rollup judges it at.
type judgedCluster struct {
	cluster store.Cluster
	row     store.FleetRow
}

// judgedAt is the clusters of v, by name, with their rows at target ("" is each cluster's
// next minor), and those without one (missing). Clusters that already run the target are
// left out of both: a team rollup and its explanation read the same cells.
func judgedAt(v fleetView, target string) (judged []judgedCluster, missing []store.Cluster) {
	missing = []store.Cluster{}
	for _, c := range byName(v.clusters) {
		t := target
		if t == "" {
			if t = inventory.DefaultTarget(c.ServerVersion); t == "" {
				missing = append(missing, c)
				continue
			}
		}
		if !applicable(c, t) {
			continue
		}
		i := slices.IndexFunc(v.cells[c.ID], func(row store.FleetRow) bool { return row.Target == t })
		if i < 0 {
			missing = append(missing, c)
			continue
		}
		judged = append(judged, judgedCluster{cluster: c, row: v.cells[c.ID][i]})
	}
	return judged, missing
}

func roll(acc *teamRollup, t store.TeamCell, cluster string) *teamRollup {
	if acc == nil {
		return &teamRollup{Verdict: t.Verdict, WorstScore: t.Score, Blockers: t.Blockers, Clusters: []string{cluster}}
	}
	if verdictRank[t.Verdict] > verdictRank[acc.Verdict] {
		acc.Verdict = t.Verdict
	}
	acc.WorstScore = min(acc.WorstScore, t.Score)
	acc.Blockers += t.Blockers
	acc.Clusters = append(acc.Clusters, cluster)
	return acc
}
