// Package outcome is what a dry run answers: each cluster's Result with a Delta per target,
// the fleet's Summary, the thresholds a pipeline fails at, and the table a person reads.
// It holds no judging and links no OPA: rollout computes these values, the fleet server
// streams them, and a client (fleet/client) reads them without an evaluator.
package outcome

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
	// NewBlockers are the keys of the blockers after that were not blockers before: new,
	// or raised to blocker. A target already blocked that gains one shows it here though
	// its verdict stays. Sorted; nil only in an answer of a server from before it was
	// added.
	NewBlockers []string `json:"newBlockers"`
}

// Turned answers the verdict the target turns to, or "" when the verdict stays: a target
// judged for the first time turns to whatever it is judged.
func (d Delta) Turned() string {
	if d.Before != nil && d.Before.Verdict == d.After.Verdict {
		return ""
	}
	return d.After.Verdict
}

// changed reports whether the candidate changes anything at d: its verdict, or a finding.
func (d Delta) changed() bool {
	return d.Turned() != "" || len(d.New)+len(d.Changed)+len(d.Resolved) > 0
}

// Result is one cluster's dry run. Error says why it has no deltas: the candidate failed
// on it (Candidate: a pack breaking the findings contract, a limit crossed), or it could
// not be read or judged, or the budget ran out first.
type Result struct {
	Cluster   string  `json:"cluster"`
	Targets   []Delta `json:"targets"`
	Error     string  `json:"error,omitempty"`
	Candidate bool    `json:"candidateError,omitempty"`
	// Skipped says why a cluster has nothing to compare: no target to judge it at. Such a
	// cluster fails no threshold; nothing judges it with the current bundles either.
	Skipped string `json:"skipped,omitempty"`
}

// Unchanged reports whether the candidate was judged on r and changes nothing at any of
// its targets. A cluster not judged, or skipped, is not unchanged: nothing was compared.
func (r Result) Unchanged() bool {
	if r.Error != "" || r.Skipped != "" {
		return false
	}
	for _, d := range r.Targets {
		if d.changed() {
			return false
		}
	}
	return true
}

// gainsBlocker reports whether a target of r gains a blocker key (Delta.NewBlockers).
func (r Result) gainsBlocker() bool {
	for _, d := range r.Targets {
		if len(d.NewBlockers) > 0 {
			return true
		}
	}
	return false
}
