package notify

import (
	"fmt"
	"slices"

	"github.com/upgradescope/upgradescope/report"
)

// CategoryEOLApproaching is the add-on rule's category for a release line or product whose
// end of life is near (policies/rules/upgradescope/rules/addons).
const CategoryEOLApproaching = "eol-approaching"

// Decided reports whether a verdict can be a baseline or announce anything: unknown
// passes are silent and never compared with.
func Decided(verdict string) bool {
	return verdict == report.VerdictReady || verdict == report.VerdictBlocked
}

// Baseline is what a target's evaluation is compared with: the target's last decided
// evaluation and the blockers it carries.
type Baseline struct {
	Result *report.TargetResult
	// Carried are the identities (keys, or titles for findings without one) of the
	// blockers Result carries, as Carry answered when it was stored: its own, and its own
	// baseline's carried ones when it could not assess a capability. nil for an evaluation
	// stored before carried sets were: its own blockers.
	Carried []string
}

// carried is b's carried set; empty for no baseline.
func (b *Baseline) carried() map[string]bool {
	switch {
	case b == nil || b.Result == nil:
		return map[string]bool{}
	case b.Carried == nil:
		return keys(b.Result.Findings, isBlocker)
	}
	out := make(map[string]bool, len(b.Carried))
	for _, k := range b.Carried {
		out[k] = true
	}
	return out
}

// Carry answers the blockers cur carries, to store with it for when it is a baseline:
// its own blockers and, when it is blocked and could not assess a capability, every
// blocker base carried, since what a blocked pass could not see is carried, not resolved.
// A ready pass carries nothing: its verdict is the report's, gaps or not, and became-ready
// announced it (Compare), so a blocker seen again later is new. Sorted; nil for an unknown
// pass, which is never a baseline.
func Carry(base *Baseline, cur report.TargetResult) []string {
	if !Decided(cur.Verdict) {
		return nil
	}
	set := keys(cur.Findings, isBlocker)
	if cur.Verdict == report.VerdictBlocked && len(cur.NotAssessed) > 0 {
		for k := range base.carried() {
			set[k] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Compare answers what changed at one target between base, the target's last decided
// evaluation (nil when it has none), and cur:
//
//   - nothing when cur is unknown, or when there is no baseline (a new target or cluster);
//   - new-blocker for each blocker whose key (its title when it has none) the baseline did
//     not carry, once per key;
//   - became-ready when the baseline carried a blocker and cur is ready. The stored
//     verdict decides, as the dashboard and the gate show it: a ready pass may lack an
//     optional capability (a required one makes it unknown, which is silent). A blocked
//     pass that could not assess a capability carries its baseline's blockers on (Carry),
//     so a blocker whose evidence was not collected is not announced again when it is;
//   - eol-approaching for each eol-approaching warning the baseline did not have.
func Compare(base *Baseline, cur report.TargetResult) []Change {
	if base == nil || base.Result == nil || !Decided(cur.Verdict) {
		return nil
	}
	var out []Change
	had := base.carried()
	for _, f := range fresh(cur.Findings, had, isBlocker) {
		out = append(out, change(KindNewBlocker, f, cur.Target))
	}
	if len(had) > 0 && cur.Verdict == report.VerdictReady {
		out = append(out, Change{Kind: KindBecameReady, Severity: report.SeverityInfo,
			Title:  fmt.Sprintf("ready for %s: all blockers resolved", cur.Target),
			Detail: fmt.Sprintf("score %d", cur.Score), Targets: []string{cur.Target}})
	}
	for _, f := range fresh(cur.Findings, keys(base.Result.Findings, isEOLWarning), isEOLWarning) {
		out = append(out, change(KindEOLApproaching, f, cur.Target))
	}
	return out
}

func isBlocker(f report.Finding) bool { return f.Severity == report.SeverityBlocker }

func isEOLWarning(f report.Finding) bool {
	return f.Severity == report.SeverityWarning && f.Category == CategoryEOLApproaching
}

// identity is a finding's count-free key, or its title for a finding without one.
func identity(f report.Finding) string {
	if f.Key != "" {
		return f.Key
	}
	return f.Title
}

func keys(fs []report.Finding, keep func(report.Finding) bool) map[string]bool {
	out := map[string]bool{}
	for _, f := range fs {
		if keep(f) {
			out[identity(f)] = true
		}
	}
	return out
}

// fresh answers the findings keep selects whose identity is not in had, once each, in
// the report's order.
func fresh(fs []report.Finding, had map[string]bool, keep func(report.Finding) bool) []report.Finding {
	var out []report.Finding
	seen := map[string]bool{}
	for _, f := range fs {
		id := identity(f)
		if !keep(f) || had[id] || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, f)
	}
	return out
}

func change(kind string, f report.Finding, target string) Change {
	return Change{Kind: kind, Key: f.Key, Severity: f.Severity, Title: f.Title, Detail: f.Detail,
		Targets: []string{target}, Teams: union(nil, f.Teams)}
}
