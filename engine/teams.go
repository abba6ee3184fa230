package engine

import (
	"slices"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// attributeTeams gives each finding the teams that own its namespaces (the namespace team
// label) and scores every team (report.TeamRollup), after the report package has judged
// each target. It is Go rather than Rego: copying each finding to add its teams and counting
// each team's run of findings were half of evaluating a 500-namespace cluster, and the fleet
// server evaluates one of those for every pushed snapshot. TestGoJudgementMatchesReportRego
// holds the team's score and verdict to report.rego's. With no team label anywhere the
// findings keep the teams their packs gave them, if any.
func attributeTeams(targets []report.TargetResult, inv *inventory.Document) {
	// A namespace listed twice (the schema allows it; collectors never write it) takes its
	// last team.
	owner := make(map[string]string)
	for _, ns := range inv.Namespaces {
		if ns.Team != "" {
			owner[ns.Name] = ns.Team
		}
	}
	for i := range targets {
		tr := &targets[i]
		if len(owner) > 0 {
			setTeams(tr.Findings, owner)
			setTeams(tr.Suppressed, owner)
		}
		tr.Teams = report.TeamRollup(tr.Findings, tr.NotAssessed)
	}
}

// setTeams sets each finding's teams: those owning its namespaces, sorted, none repeated.
func setTeams(fs []report.Finding, owner map[string]string) {
	for i := range fs {
		var teams []string
		for _, ns := range fs[i].Namespaces {
			if team, ok := owner[ns]; ok {
				teams = append(teams, team)
			}
		}
		slices.Sort(teams)
		fs[i].Teams = slices.Compact(teams)
	}
}
