package server

import (
	"maps"
	"slices"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/report"
)

// explainTeams says, for each team the scope sees, which clusters make its verdict what it
// is (web.TeamWhy), from the same cells as rollTeams. A team is blocked by its own blockers
// or by blockers no team owns (report.JudgeTeam): the second is why a team with 0 blockers
// of its own reads blocked. Another team's blockers never block it, but they do block the
// cluster it shares, which the page says too, naming that team. report.Unattributed's
// clusters are those with blockers no team owns (rollTeams), each with their count.
func explainTeams(v fleetView, sc scope, target string) map[string][]web.TeamWhy {
	out := map[string][]web.TeamWhy{}
	judged, _ := judgedAt(v, target)
	for _, j := range judged {
		ref := web.ClusterRef{ID: j.cluster.ID, Name: j.cluster.Name}
		for _, team := range slices.Sorted(maps.Keys(j.row.Teams)) {
			if team == report.Unattributed || !sc.sees(team) {
				continue
			}
			if why, ok := teamWhy(v, j, sc, team); ok {
				why.Cluster = ref
				out[team] = append(out[team], why)
			}
		}
		if !sc.sees(report.Unattributed) {
			continue
		}
		if u, ok := unownedOn(v, j, sc); ok && u.Blockers > 0 {
			out[report.Unattributed] = append(out[report.Unattributed], web.TeamWhy{Cluster: ref, Kind: web.WhyOwn, Blockers: u.Blockers})
		}
	}
	return out
}

// teamWhy is team's part on one cluster: its own blockers, blockers no team owns, other
// teams' blockers, or a gap; false when the team is ready there on a ready cluster.
func teamWhy(v fleetView, j judgedCluster, sc scope, team string) (web.TeamWhy, bool) {
	cell := j.row.Teams[team]
	switch {
	case cell.Blockers > 0:
		return web.TeamWhy{Kind: web.WhyOwn, Blockers: cell.Blockers}, true
	case cell.Verdict == report.VerdictBlocked:
		n := -1
		if u, ok := unownedOn(v, j, sc); ok {
			n = u.Blockers
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

// unownedOn is what no team owns on a judged cluster, as one team's cell: its blockers and
// warnings, the score they make, blocked when there is a blocker. False when the reader may
// not count them.
//
// The cell's report summary holds each finding's teams (a team-scoped reader's view always
// has its share's; the fleet's when read withSummaries). Without it the stored cells tell
// exactly too: the report's report.Unattributed cell counts what no team owns whenever a
// finding names a team; without that cell either every finding names a team (then the
// teams' cells hold the cluster's blockers and warnings, and none is unowned) or none
// does, and the cluster's counts are all no team's. A team-scoped share drops that cell and its other teams', so
// there only the summary can count.
func unownedOn(v fleetView, j judgedCluster, sc scope) (store.TeamCell, bool) {
	if s := v.summary(j.row); s != nil && !s.unreadable {
		b, w := s.unowned()
		return unownedCell(b, w), true
	}
	if !sc.fleet {
		return store.TeamCell{}, false
	}
	if cell, ok := j.row.Teams[report.Unattributed]; ok {
		return unownedCell(cell.Blockers, cell.Warnings), true
	}
	for _, cell := range j.row.Teams {
		if cell.Blockers > 0 || cell.Warnings > 0 {
			return unownedCell(0, 0), true
		}
	}
	return unownedCell(j.row.Blockers, j.row.Warnings), true
}

// unownedCell judges what no team owns: blocked by any of its blockers, scored by the
// public formula as a team is; a gap is the cluster's, not the unowned findings'.
func unownedCell(blockers, warnings int) store.TeamCell {
	return store.TeamCell{Verdict: report.Verdict(blockers, nil), Score: report.Score(blockers, warnings),
		Blockers: blockers, Warnings: warnings}
}
