// Package rollout answers what a candidate policy bundle would do to a fleet before it
// ships: each cluster judged with the candidate in the bundle set, compared with its
// judgement without it, target by target, and the fleet summed up.
package rollout

import (
	"slices"

	"github.com/upgradescope/upgradescope/report"
)

// Judgement is one cluster's evaluation at one target, as the comparison shows it.
type Judgement struct {
	Verdict  string `json:"verdict"`
	Score    int    `json:"score"`
	Blockers int    `json:"blockers"`
	Warnings int    `json:"warnings"`
}

// Delta is what the candidate changes at one target. Before is nil when the cluster had
// no judgement at the target (the server never stored one).
type Delta struct {
	Target string     `json:"target"`
	Before *Judgement `json:"before"`
	After  Judgement  `json:"after"`
	// New are the keys of findings the candidate brings, Changed those whose severity it
	// changes, Resolved those it takes away; each sorted.
	New      []string `json:"new"`
	Changed  []string `json:"changed"`
	Resolved []string `json:"resolved"`
}

// Turned answers the verdict the target turns to, or "" when the verdict stays: a target
// judged for the first time turns to whatever it is judged.
func (d Delta) Turned() string {
	if d.Before != nil && d.Before.Verdict == d.After.Verdict {
		return ""
	}
	return d.After.Verdict
}

func judgement(t report.TargetResult) Judgement {
	return Judgement{Verdict: t.Verdict, Score: t.Score, Blockers: t.Blockers, Warnings: t.Warnings}
}

// Compare answers the delta from before (nil: none) to after at after's target. Only the
// findings that count are compared: suppressed ones are out of the score on both sides.
func Compare(before *report.TargetResult, after report.TargetResult) Delta {
	d := Delta{Target: after.Target, After: judgement(after), New: []string{}, Changed: []string{}, Resolved: []string{}}
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
		switch sev, ok := was[f.Key]; {
		case !ok:
			d.New = append(d.New, f.Key)
		case sev != f.Severity:
			d.Changed = append(d.Changed, f.Key)
		}
	}
	for key := range was {
		if _, ok := is[key]; !ok {
			d.Resolved = append(d.Resolved, key)
		}
	}
	for _, keys := range [][]string{d.New, d.Changed, d.Resolved} {
		slices.Sort(keys)
	}
	d.New, d.Changed = slices.Compact(d.New), slices.Compact(d.Changed)
	return d
}
