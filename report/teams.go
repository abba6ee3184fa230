package report

import "slices"

// Unattributed is the team under which a report's team rollup counts the findings no team
// owns.
const Unattributed = "(unattributed)"

// UnownedBlockers counts the blockers among fs that no team owns.
func UnownedBlockers(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if len(f.Teams) == 0 && f.Severity == SeverityBlocker {
			n++
		}
	}
	return n
}

// TeamVerdict judges a team as a report does (docs/concepts.md): blocked by its own blockers
// or by one no team owns, else unknown when a required capability was not assessed, else
// ready. The engine judges the teams with findings by it, and the fleet server the teams
// without.
func TeamVerdict(blockers, unowned int, gaps []Gap) string {
	switch {
	case blockers+unowned > 0:
		return VerdictBlocked
	case slices.ContainsFunc(gaps, func(g Gap) bool { return g.Required }):
		return VerdictUnknown
	}
	return VerdictReady
}

// Score is the public score formula (report.rego): info never counts.
func Score(blockers, warnings int) int {
	return max(0, 100-min(75, 25*blockers)-min(20, 5*warnings))
}

// TeamRollup scores each team by the findings that name it, with the target's formula: a
// team is blocked by its own blockers or by one no team owns, else judged as the target is.
// Findings without a team count for "(unattributed)". Nil when no finding has a team.
func TeamRollup(kept []Finding, gaps []Gap) map[string]TeamResult {
	counts := make(map[string]*TeamResult)
	named := false
	for _, f := range kept {
		teams := f.Teams
		if len(teams) == 0 {
			teams = []string{Unattributed}
		} else {
			named = true
		}
		for _, team := range teams {
			c := counts[team]
			if c == nil {
				c = &TeamResult{}
				counts[team] = c
			}
			switch f.Severity {
			case SeverityBlocker:
				c.Blockers++
			case SeverityWarning:
				c.Warnings++
			case SeverityInfo:
				c.Infos++
			}
		}
	}
	if !named {
		return nil
	}
	unowned := UnownedBlockers(kept)
	out := make(map[string]TeamResult, len(counts))
	for team, c := range counts {
		c.Score = Score(c.Blockers, c.Warnings)
		c.Verdict = TeamVerdict(c.Blockers, unowned, gaps)
		out[team] = *c
	}
	return out
}
