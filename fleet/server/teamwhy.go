package server

import (
	"maps"
	"slices"

	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/report"
)

// explainTeams says, for each team the scope sees, which clusters make its verdict what it
// is (web.TeamWhy), from the same cells as rollTeams. A team is blocked by its own blockers
// or by blockers no team owns (report.JudgeTeam): the second is why a team with 0 blockers
// of its own reads blocked. Another team's blockers never block it, but they do block the
// cluster it shares, which the page says too, naming that team.
func explainTeams(v fleetView, sc scope, target string) map[string][]web.TeamWhy {
	out := map[string][]web.TeamWhy{}
	judged, _ := judgedAt(v, target)
	for _, j := range judged {
		ref := web.ClusterRef{ID: j.cluster.ID, Name: j.cluster.Name}
		for _, team := range slices.Sorted(maps.Keys(j.row.Teams)) {
			if !sc.sees(team) {
				continue
			}
			if why, ok := teamWhy(j, sc, team); ok {
				why.Cluster = ref
				out[team] = append(out[team], why)
			}
		}
	}
	return out
}

// teamWhy is team's part on one cluster: its own blockers, blockers no team owns, other
// teams' blockers, or a gap; false when the team is ready there on a ready cluster.
func teamWhy(j judgedCluster, sc scope, team string) (web.TeamWhy, bool) {
	cell := j.row.Teams[team]
	switch {
	case cell.Blockers > 0:
		return web.TeamWhy{Kind: web.WhyOwn, Blockers: cell.Blockers}, true
	case cell.Verdict == report.VerdictBlocked:
		n, known := unownedBlockers(j, sc)
		if !known {
			n = -1
		}
		return web.TeamWhy{Kind: web.WhyUnowned, Blockers: n}, true
	}
	why := web.TeamWhy{Kind: web.WhyOthers}
	for _, other := range slices.Sorted(maps.Keys(j.row.Teams)) {
		if other != team && other != report.Unattributed && j.row.Teams[other].Blockers > 0 {
			why.Teams = append(why.Teams, other)
			why.Blockers += j.row.Teams[other].Blockers
		}
	}
	if len(why.Teams) > 0 {
		return why, true
	}
	if cell.Verdict == report.VerdictUnknown {
		return web.TeamWhy{Kind: web.WhyUnknown}, true
	}
	return web.TeamWhy{}, false
}

// unownedBlockers is how many of the cluster's blockers no team owns. The report counts them
// under report.Unattributed whenever some finding names a team; when none does, every
// blocker is no team's. A team-scoped reader's share drops that row, and its count of
// blockers mixes its own in, so there the number is not known.
func unownedBlockers(j judgedCluster, sc scope) (int, bool) {
	if cell, ok := j.row.Teams[report.Unattributed]; ok {
		return cell.Blockers, true
	}
	if !sc.fleet {
		return 0, false
	}
	return j.row.Blockers, true
}
