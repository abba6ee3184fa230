package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/report"
)

// The fleet page's top blocker and the fleet's findings read what each fleet cell's report
// holds, while a cell holds counts only. Decoding every report on every read would cost a
// fleet of 1,000 clusters × 4 targets seconds; instead each evaluation's report is decoded
// once into an evalSummary kept by evaluation id. An id is never reused and a stored
// evaluation never changes, so a summary never goes stale: when the store's FleetVersion
// moves, only the cells pointing at new ids are decoded, and ids no cell points at any more
// are dropped. A team-scoped reader's cells are its share's, judged now (shareJudge); their
// summaries are made from the share's report and cached with its cells.

// findingSum is one blocker or warning of an evaluation, as the fleet's reads need it.
type findingSum struct {
	Key, Title, Category, Severity string
	// Objects is how many objects the finding names, those past its list included.
	Objects int
	// Teams own the finding's namespaces (sorted); none when no team owns them.
	Teams []string
}

// evalSummary is an evaluation's blockers and warnings, ranked (rankFindings). Read-only
// once made: shared by concurrent reads.
type evalSummary struct {
	findings []findingSum
	// cause is what was not assessed, briefly, when a required input was not: why a verdict
	// is unknown ("60 probes of kb", and how many other causes). "" when every required
	// input was assessed.
	cause string
	// unreadable: the stored report could not be decoded; its findings are not known.
	unreadable bool
}

// summarize is tr's blockers and warnings, ranked; infos say nothing about an upgrade.
func summarize(tr *report.TargetResult) *evalSummary {
	s := &evalSummary{}
	for _, f := range tr.Findings {
		if f.Severity != report.SeverityBlocker && f.Severity != report.SeverityWarning {
			continue
		}
		teams := slices.Clone(f.Teams)
		slices.Sort(teams)
		s.findings = append(s.findings, findingSum{Key: f.Key, Title: f.Title, Category: f.Category,
			Severity: f.Severity, Objects: len(f.Objects) + f.ObjectsOmitted, Teams: slices.Compact(teams)})
	}
	slices.SortFunc(s.findings, rankFindings)
	s.cause = gapCause(tr.NotAssessed)
	return s
}

// gapCause names the first required group of gaps (report.GroupGaps, as the cluster page
// groups them) and counts the other required groups: a fleet row's cue to why its cluster
// is unknown, the cluster page saying the rest.
func gapCause(gaps []report.Gap) string {
	var required []report.GapGroup
	for _, g := range report.GroupGaps(gaps) {
		if g.Required {
			required = append(required, g)
		}
	}
	if len(required) == 0 {
		return ""
	}
	g := required[0]
	out := g.Capabilities[0]
	if bundle, probes := g.Probes(); probes && len(g.Capabilities) > 1 {
		out = fmt.Sprintf("%d probes of %s", len(g.Capabilities), bundle)
	}
	switch n := len(required) - 1; n {
	case 0:
	case 1:
		out += " and 1 more cause"
	default:
		out += fmt.Sprintf(" and %d more causes", n)
	}
	return out
}

// titleCount is the count of objects, nodes, pods or manifests a rule puts in a finding's
// title, in parentheses ("… removed in 1.25 (1 object)"): one cluster's, wrong beside the
// fleet's total. TestFleetTitlesLeaveNoRulesCount holds it to every title the rules' tests
// and the goldens spell.
var titleCount = regexp.MustCompile(` \(\d+ (?:object|node|pod|manifest)s?\)`)

// fleetTitle is a finding's title across clusters: its title without the per-cluster count
// the rules put in parentheses. A rule that words a count otherwise ("3 nodes are not
// Ready") keeps it: its title is the first cluster's by name.
func fleetTitle(title string) string { return titleCount.ReplaceAllString(title, "") }

// ownerOrder is teams as every owner list reads them: sorted, report.Unattributed ("no
// team") last, each once.
func ownerOrder(teams []string) []string {
	out := slices.Clone(teams)
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(boolRank(a == report.Unattributed), boolRank(b == report.Unattributed)), strings.Compare(a, b))
	})
	return slices.Compact(out)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// severityRank orders severities worst first.
var severityRank = map[string]int{report.SeverityBlocker: 0, report.SeverityWarning: 1, report.SeverityInfo: 2}

// rankFindings orders an evaluation's findings: worst severity, then most objects, then key,
// so the top blocker is the same on every read.
func rankFindings(a, b findingSum) int {
	return cmp.Or(cmp.Compare(severityRank[a.Severity], severityRank[b.Severity]), cmp.Compare(b.Objects, a.Objects),
		strings.Compare(a.Key, b.Key))
}

// top is the highest-ranked blocker, nil when there is none (or the summary is nil).
func (s *evalSummary) top() *findingSum {
	if s == nil || len(s.findings) == 0 || s.findings[0].Severity != report.SeverityBlocker {
		return nil
	}
	return &s.findings[0]
}

// blockerTeams are the teams owning the summary's blockers, sorted, then
// report.Unattributed when a blocker has no team: who must act, named teams first.
func (s *evalSummary) blockerTeams() []string {
	if s == nil {
		return nil
	}
	var out []string
	unowned := false
	for _, f := range s.findings {
		if f.Severity != report.SeverityBlocker {
			break
		}
		unowned = unowned || len(f.Teams) == 0
		out = append(out, f.Teams...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if unowned {
		out = append(out, report.Unattributed)
	}
	return out
}

// unowned counts the summary's blockers and warnings no team owns: what the report's
// report.Unattributed team counts, which it leaves out when no finding names a team.
func (s *evalSummary) unowned() (blockers, warnings int) {
	for _, f := range s.findings {
		if len(f.Teams) > 0 {
			continue
		}
		if f.Severity == report.SeverityBlocker {
			blockers++
		} else {
			warnings++
		}
	}
	return blockers, warnings
}

// summaryOf is the summary of the report's result at target (the stored report of one
// target holds that target alone).
func summaryOf(rep *report.Report, target string) *evalSummary {
	for i := range rep.Targets {
		if rep.Targets[i].Target == target {
			return summarize(&rep.Targets[i])
		}
	}
	return &evalSummary{}
}

// summaryCache is the summaries of the evaluations the fleet cells of version point at.
type summaryCache struct {
	// mu is held through a fill, so concurrent reads after a move decode each report once.
	mu      sync.Mutex
	version string
	byID    map[int64]*evalSummary
}

// summaries answers the summaries of every fleet cell's evaluation by evaluation id, as of
// cells at version (fleetCells). A report that cannot be read gives an unreadable summary;
// an evaluation pruned meanwhile gives none.
func (fr *fleetReads) summaries(ctx context.Context, cells map[int64][]store.FleetRow, version string) (map[int64]*evalSummary, error) {
	fr.sums.mu.Lock()
	defer fr.sums.mu.Unlock()
	if fr.sums.byID != nil && fr.sums.version == version {
		return fr.sums.byID, nil
	}
	next := make(map[int64]*evalSummary, len(fr.sums.byID))
	var missing []store.FleetRow
	for _, rows := range cells {
		for _, r := range rows {
			if s, ok := fr.sums.byID[r.EvaluationID]; ok {
				next[r.EvaluationID] = s
			} else {
				missing = append(missing, r)
			}
		}
	}
	if err := fr.decodeSummaries(ctx, missing, next); err != nil {
		return nil, err
	}
	fr.sums.byID, fr.sums.version = next, version
	return next, nil
}

// decodeSummaries reads and summarizes the reports of rows into into, within one turn of
// decoding reports (each may be tens of megabytes).
func (fr *fleetReads) decodeSummaries(ctx context.Context, rows []store.FleetRow, into map[int64]*evalSummary) error {
	if len(rows) == 0 {
		return nil
	}
	turn, err := fr.admit.Report(ctx)
	if err != nil {
		return err
	}
	defer turn()
	for _, r := range rows {
		ev, err := fr.store.Evaluation(ctx, r.EvaluationID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		rep, err := fr.snaps.report(ev)
		if err != nil {
			fr.log.Error("a stored report cannot be read; its findings are left out of the fleet's", "cluster", r.ClusterName, "target", r.Target, "err", err)
			into[r.EvaluationID] = &evalSummary{unreadable: true}
			continue
		}
		into[r.EvaluationID] = summaryOf(rep, r.Target)
	}
	return nil
}
