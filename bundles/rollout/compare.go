// Package rollout answers what a candidate policy bundle would do to a fleet before it
// ships: each cluster judged with the candidate in the bundle set, compared with its
// judgement without it, target by target, and the fleet summed up. What it answers
// (results, summary, thresholds, table) is package outcome, which links no OPA.
package rollout

import (
	"slices"

	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/report"
)

func judgement(t report.TargetResult) outcome.Judgement {
	return outcome.Judgement{Verdict: t.Verdict, Score: t.Score, Blockers: t.Blockers, Warnings: t.Warnings}
}

// Compare answers the delta from before (nil: none) to after at after's target. Only the
// findings that count are compared: suppressed ones are out of the score on both sides.
func Compare(before *report.TargetResult, after report.TargetResult) outcome.Delta {
	d := outcome.Delta{Target: after.Target, After: judgement(after), New: []string{}, Changed: []string{}, Resolved: []string{},
		NewBlockers: []string{}}
	was := map[string]string{}
	if before != nil {
		j := judgement(*before)
		d.Before = &j
		for _, f := range before.Findings {
			was[f.Key] = f.Severity
		}
	}
	is := map[string]string{}
	for _, f := range after.Findings {
		is[f.Key] = f.Severity
		sev, ok := was[f.Key]
		switch {
		case !ok:
			d.New = append(d.New, f.Key)
		case sev != f.Severity:
			d.Changed = append(d.Changed, f.Key)
		}
		if f.Severity == report.SeverityBlocker && sev != report.SeverityBlocker {
			d.NewBlockers = append(d.NewBlockers, f.Key)
		}
	}
	for key := range was {
		if _, ok := is[key]; !ok {
			d.Resolved = append(d.Resolved, key)
		}
	}
	for _, keys := range [][]string{d.New, d.Changed, d.Resolved, d.NewBlockers} {
		slices.Sort(keys)
	}
	d.New, d.Changed, d.NewBlockers = slices.Compact(d.New), slices.Compact(d.Changed), slices.Compact(d.NewBlockers)
	return d
}
