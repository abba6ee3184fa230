package outcome

import (
	"fmt"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/report"
)

// Summary sums a dry run up by cluster name, each list in the clusters' order. A cluster is
// in a Turned list when any of its targets turns to that verdict.
type Summary struct {
	Clusters      int      `json:"clusters"`
	TurnedBlocked []string `json:"turnedBlocked"`
	TurnedUnknown []string `json:"turnedUnknown"`
	TurnedReady   []string `json:"turnedReady"`
	// Changed clusters have a verdict turned or a finding new, changed or resolved.
	Changed []string `json:"changed"`
	// NewBlockers are the clusters that gain a blocker key at some target
	// (Delta.NewBlockers), blocked before or not. nil only in an answer of a server from
	// before it was added.
	NewBlockers []string `json:"newBlockers"`
	// CandidateErrors are the clusters the candidate failed on; Unjudged those read or
	// judged without it that failed, or that the budget left out.
	CandidateErrors []string `json:"candidateErrors"`
	Unjudged        []string `json:"unjudged"`
	// Skipped clusters have no target to judge them at (Result.Skipped); they fail nothing.
	Skipped []string `json:"skipped,omitempty"`
}

// Summarize sums results up, in their order.
func Summarize(results []Result) Summary {
	s := Summary{Clusters: len(results), TurnedBlocked: []string{}, TurnedUnknown: []string{}, TurnedReady: []string{},
		Changed: []string{}, NewBlockers: []string{}, CandidateErrors: []string{}, Unjudged: []string{}}
	for _, r := range results {
		switch {
		case r.Candidate:
			s.CandidateErrors = append(s.CandidateErrors, r.Cluster)
			continue
		case r.Error != "":
			s.Unjudged = append(s.Unjudged, r.Cluster)
			continue
		case r.Skipped != "":
			s.Skipped = append(s.Skipped, r.Cluster)
			continue
		}
		turned := map[string]bool{}
		for _, d := range r.Targets {
			if v := d.Turned(); v != "" {
				turned[v] = true
			}
		}
		for verdict, list := range map[string]*[]string{report.VerdictBlocked: &s.TurnedBlocked,
			report.VerdictUnknown: &s.TurnedUnknown, report.VerdictReady: &s.TurnedReady} {
			if turned[verdict] {
				*list = append(*list, r.Cluster)
			}
		}
		if !r.Unchanged() {
			s.Changed = append(s.Changed, r.Cluster)
		}
		if r.gainsBlocker() {
			s.NewBlockers = append(s.NewBlockers, r.Cluster)
		}
	}
	return s
}

// Thresholds a dry run fails its pipeline at: the least change that fails it. blocked: a
// cluster turns blocked; new-blocker: that, or a cluster already blocked gains a blocker
// key; unknown: a cluster turns blocked or unknown; changed: anything changes.
const (
	FailOnBlocked    = "blocked"
	FailOnNewBlocker = "new-blocker"
	FailOnUnknown    = "unknown"
	FailOnChanged    = "changed"
	FailOnNever      = "never"
)

// ParseFailOn validates a threshold.
func ParseFailOn(s string) (string, error) {
	switch s {
	case FailOnBlocked, FailOnUnknown, FailOnChanged, FailOnNewBlocker, FailOnNever:
		return s, nil
	}
	return "", fmt.Errorf("unknown threshold %q: want blocked, new-blocker, unknown, changed or never", s)
}

// Fails says why the dry run fails at threshold, "" when it passes. A cluster the candidate
// failed on, or that could not be judged, fails every threshold but never: what was not
// assessed is never called safe.
func (s Summary) Fails(threshold string) string {
	if threshold == FailOnNever {
		return ""
	}
	var reasons []string
	add := func(list []string, what string) {
		if len(list) > 0 {
			reasons = append(reasons, fmt.Sprintf("%s %s (%s)", report.Count(len(list), "cluster"), what, names(list)))
		}
	}
	add(s.CandidateErrors, "where the candidate fails")
	add(s.Unjudged, "not judged")
	add(s.TurnedBlocked, "would turn blocked")
	if threshold == FailOnNewBlocker {
		add(without(s.NewBlockers, s.TurnedBlocked), "already blocked would gain a blocker")
	}
	if threshold == FailOnUnknown || threshold == FailOnChanged {
		add(s.TurnedUnknown, "would turn unknown")
	}
	if threshold == FailOnChanged {
		add(s.Changed, "would change")
	}
	return strings.Join(reasons, "; ")
}

// names lists the first few names of a list, counting the rest.
// without is list less the names in drop, in list's order.
func without(list, drop []string) []string {
	out := []string{}
	for _, n := range list {
		if !slices.Contains(drop, n) {
			out = append(out, n)
		}
	}
	return out
}

func names(list []string) string {
	const shown = 5
	if len(list) <= shown {
		return strings.Join(list, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(list[:shown], ", "), len(list)-shown)
}
