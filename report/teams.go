package report

import "slices"

// Unattributed is the team under which a report's team rollup counts the findings no team
// owns.
const Unattributed = "(unattributed)"

// The report package (policies/rules/upgradescope/report/report.rego) judges each target:
// its verdict and its score. Go judges again only where findings are counted after the
// rules ran: each team of a report (the engine attributes findings to teams in Go, for
// speed), a team owning namespaces but no finding (the fleet server), and a gate's share of
// a stored cluster (Recount). Verdict and Score are those two rules written once in Go;
// the engine's TestGoJudgementMatchesReportRego evaluates report.rego's own verdict and
// score over a table of counts and gaps and holds these to them.

// Verdict is report.rego's verdict(counts, gaps): blocked by a blocker, else unknown when a
// required capability was not assessed, else ready.
func Verdict(blockers int, gaps []Gap) string {
	switch {
	case blockers > 0:
		return VerdictBlocked
	case slices.ContainsFunc(gaps, func(g Gap) bool { return g.Required }):
		return VerdictUnknown
	}
	return VerdictReady
}

// Score is report.rego's score(counts), the public score formula: info never counts.
func Score(blockers, warnings int) int {
	return max(0, 100-min(75, 25*blockers)-min(20, 5*warnings))
}

// JudgeTeam scores and judges a team by its counts, as a report judges a team
// (docs/concepts.md): scored by its own findings, blocked by its own blockers or by one no
// team owns (unowned), else judged as the target is by the gaps.
func JudgeTeam(counts TeamResult, unowned int, gaps []Gap) TeamResult {
	counts.Score = Score(counts.Blockers, counts.Warnings)
	counts.Verdict = Verdict(counts.Blockers+unowned, gaps)
	return counts
}

// TeamWithoutFindings is the judgement of a team that owns namespaces but none of t's
// findings, which t.Teams leaves out: ready at score 100, or blocked or unknown by what no
// team owns. The fleet server stores one for every owning team.
func (t *TargetResult) TeamWithoutFindings() TeamResult {
	return JudgeTeam(TeamResult{}, unownedBlockers(t.Findings), t.NotAssessed)
}

// unownedBlockers counts the blockers among fs that no team owns.
func unownedBlockers(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if len(f.Teams) == 0 && f.Severity == SeverityBlocker {
			n++
		}
	}
	return n
}

// TeamRollup scores each team by the findings that name it (JudgeTeam). Findings without a
// team count for "(unattributed)". Nil when no finding has a team.
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
	unowned := unownedBlockers(kept)
	out := make(map[string]TeamResult, len(counts))
	for team, c := range counts {
		out[team] = JudgeTeam(*c, unowned, gaps)
	}
	return out
}
