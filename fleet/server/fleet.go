package server

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// fleet is GET /api/v1/fleet: clusters × targets from stored evaluations only, a null
// cell where there is none or the cluster already runs the target.
func (s *Server) fleet(w http.ResponseWriter, r *http.Request, sc scope) error {
	asked, err := fleetTargets(r.URL.Query().Get("targets"))
	if err != nil {
		return err
	}
	v, err := s.loadFleet(r.Context(), sc)
	if err != nil {
		return err
	}
	targets := asked
	if targets == nil {
		targets = s.defaultColumns(v.clusters)
	}
	rows := make([]api.FleetRow, 0, len(v.clusters))
	parsed := parseMinors(targets)
	for _, c := range byName(v.clusters) {
		rows = append(rows, s.fleetRow(c, v.cells[c.ID], targets, parsed))
	}
	pol := s.policy()
	writeJSON(w, http.StatusOK, map[string]any{"targets": targets, "generatedAt": s.now().UTC(), "clusters": rows,
		"bundles": sortedBundles(pol.bundles), "reevaluation": map[string]int{"pending": s.pendingCount(v)}})
	return nil
}

// fleetRow is cluster c's row at targets (parsed: the same minors, parsed once a request).
func (s *Server) fleetRow(c store.Cluster, cells []store.FleetRow, targets []string, parsed []inventory.Version) api.FleetRow {
	row := api.FleetRow{ClusterID: c.ID, Name: c.Name, LastSeen: c.LastSeen.UTC(), Stale: s.stale(c),
		ServerVersion: c.ServerVersion, Cells: make(map[string]*api.Evaluation, len(targets)), NotApplicable: []string{},
		Bundles: s.agentBundles(c)}
	current, vErr := inventory.ParseVersion(c.ServerVersion)
	for i, t := range targets {
		row.Cells[t] = nil
		if vErr == nil && !after(parsed[i], current) {
			row.NotApplicable = append(row.NotApplicable, t)
			continue
		}
		for _, cell := range cells {
			if cell.Target == t {
				row.Cells[t] = s.summary(c, cell)
			}
		}
	}
	return row
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
	return err != nil || after(tv, current)
}

func after(a, b inventory.Version) bool {
	return a.Major > b.Major || a.Major == b.Major && a.Minor > b.Minor
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

// defaultColumns is every cluster's next minor and the server's --targets, the newest
// MaxFleetTargets of them.
func (s *Server) defaultColumns(clusters []store.Cluster) []string {
	targets := slices.Clone(s.cfg.Targets)
	for _, c := range clusters {
		if t := inventory.DefaultTarget(c.ServerVersion); t != "" {
			targets = append(targets, t)
		}
	}
	targets = inventory.SortMinors(targets)
	if len(targets) > MaxFleetTargets {
		targets = targets[len(targets)-MaxFleetTargets:]
	}
	if targets == nil {
		targets = []string{}
	}
	return targets
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
func (s *Server) fleetTeams(w http.ResponseWriter, r *http.Request, sc scope) error {
	raw := r.URL.Query().Get("target")
	if raw == "" {
		return fail(http.StatusUnprocessableEntity, "target is required: ?target=1.NN")
	}
	target, err := inventory.ParseTarget(raw)
	if err != nil {
		return fail(http.StatusUnprocessableEntity, "target: "+err.Error())
	}
	v, err := s.loadFleet(r.Context(), sc)
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
func rollTeams(v fleetView, sc scope, target string) (map[string]*teamRollup, []store.Cluster) {
	teams, missing := map[string]*teamRollup{}, []store.Cluster{}
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
		for name, cell := range v.cells[c.ID][i].Teams {
			if sc.sees(name) {
				teams[name] = roll(teams[name], cell, c.Name)
			}
		}
	}
	return teams, missing
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
