package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/report"
)

// chartSources maps the source segment of a chart finding's key to the ChartAdvice source
// it reads, with the categories whose findings of that source are about the chart. Only
// blockers' categories: the advice records which versions raise blockers, so a version it
// names may still render an API a deprecated-api warning is about.
var chartSources = map[string]struct {
	source     string
	categories []string
}{
	"helm-release":              {inventory.ChartSourceHelm, []string{"chart-incompat", "removed-api"}},
	inventory.ChartSourceArgoCD: {inventory.ChartSourceArgoCD, []string{"chart-incompat"}},
	inventory.ChartSourceFlux:   {inventory.ChartSourceFlux, []string{"chart-incompat"}},
}

// attachChartFixes sets Fix on each finding about a release's or a GitOps chart's chart
// that the chart advisor advised (inv.ChartAdvice), and names the version in its
// remediation. It is Go because it only presents a judgement already made: the advisor
// evaluated every version it read with these same rules and recorded, per target, which
// blocker keys each version raised (ChartVersionJudged.Blocks); picking the lowest version
// with none is a lookup, not a rule. The result depends only on the findings and the advice.
//
// obs is what the collectors recorded: a Helm release's installed APIs are its stored
// manifest's as the cluster collector lists them (obs's kinds only), while a candidate's are
// every API it renders, so a release's fix compares only the APIs obs lists of both.
func attachChartFixes(targets []report.TargetResult, inv *inventory.Document, obs kb.Observe) {
	if len(inv.ChartAdvice) == 0 {
		return
	}
	advice := make(map[string]*inventory.ChartAdvice, len(inv.ChartAdvice))
	for i := range inv.ChartAdvice {
		a := &inv.ChartAdvice[i]
		k := a.Source + "/" + a.Namespace + "/" + a.Name
		if _, ok := advice[k]; !ok {
			advice[k] = a
		}
	}
	for i := range targets {
		for _, fs := range [][]report.Finding{targets[i].Findings, targets[i].Suppressed} {
			for j := range fs {
				if a := adviceFor(fs[j].Key, advice); a != nil {
					attachChartFix(&fs[j], a, obs)
				}
			}
		}
	}
}

// adviceFor is the advice a finding key names: "<category>/<source>/<namespace>/<name>".
func adviceFor(key string, advice map[string]*inventory.ChartAdvice) *inventory.ChartAdvice {
	parts := strings.Split(key, "/")
	if len(parts) != 4 {
		return nil
	}
	src, ok := chartSources[parts[1]]
	if !ok || !slices.Contains(src.categories, parts[0]) {
		return nil
	}
	return advice[src.source+"/"+parts[2]+"/"+parts[3]]
}

// attachChartFix sets f's fix from a, and prefixes its remediation with the version to
// upgrade to, or with there being none. A finding at a target the advisor did not judge
// keeps no fix: the advice says nothing of that target.
func attachChartFix(f *report.Finding, a *inventory.ChartAdvice, obs kb.Observe) {
	fix := &report.ChartFix{Chart: a.Chart, Repository: a.Repository, From: a.Installed}
	if len(a.Versions) > 0 {
		fix.FromAppVersion = a.Versions[0].AppVersion
	}
	if !a.Read {
		fix.Status, fix.Reason = report.ChartFixUnread, unreadReason(a)
		f.Fix = fix
		return
	}
	if !slices.Contains(a.Targets, f.Target) {
		return
	}
	var later []inventory.ChartVersionJudged
	if len(a.Versions) > 1 {
		later = a.Versions[1:]
	}
	to, unjudged := lowestAdmitted(later, []string{f.Target})
	if len(a.Targets) > 1 {
		if every, _ := lowestAdmitted(later, a.Targets); every != nil {
			fix.EveryHop = every.Version
		}
	}
	if to == nil {
		cov := coverageOf(a, later)
		without := notRead(a)
		fix.Status, fix.Reason = report.ChartFixNone, joinReasons(append([]string{cov.reason(f.Target)}, without...)...)
		fix.Judged, fix.Unjudged, fix.NotJudged, fix.Complete = cov.read-len(cov.failed), len(cov.failed), cov.omitted, cov.complete()
		f.Remediation = joinSentences(noneSentence(a, f.Target, cov), f.Remediation)
		f.Fix = fix
		return
	}
	fix.Status, fix.To, fix.ToAppVersion = report.ChartFixUpgrade, to.Version, to.AppVersion
	without := notRead(a)
	note := unjudgedNote(unjudged)
	fix.Reason = joinReasons(append([]string{note}, without...)...)
	if len(a.Versions) > 0 {
		from, toAPIs := a.Versions[0].APIs, to.APIs
		if a.Source == inventory.ChartSourceHelm {
			from, toAPIs = listed(from, obs), listed(toAPIs, obs)
		}
		fix.APIsAdded = difference(toAPIs, from)
		fix.APIsRemoved = difference(from, toAPIs)
	}
	f.Remediation = joinSentences(upgradeSentence(fix, without, note), f.Remediation)
	f.Fix = fix
}

// lowestAdmitted is the first of versions (ascending) that was judged and no rule blocks at
// any of targets, nil when none, and the versions below it that could not be judged: one
// of them might have been the lowest.
func lowestAdmitted(versions []inventory.ChartVersionJudged, targets []string) (*inventory.ChartVersionJudged, []inventory.ChartVersionJudged) {
	var unjudged []inventory.ChartVersionJudged
	for i := range versions {
		v := &versions[i]
		if v.Error != "" {
			unjudged = append(unjudged, *v)
			continue
		}
		if !slices.ContainsFunc(targets, func(t string) bool { return len(v.Blocks[t]) > 0 }) {
			return v, unjudged
		}
	}
	return nil, unjudged
}

// unjudgedNote names the first lower version that could not be judged, and why (a digest
// mismatch is worth a user's eye), and counts the others: "1.1.0 could not be judged:
// fetch chart web 1.1.0: digest mismatch; 1 other lower version could not either".
func unjudgedNote(unjudged []inventory.ChartVersionJudged) string {
	if len(unjudged) == 0 {
		return ""
	}
	s := unjudged[0].Version + " could not be judged: " + unjudged[0].Error
	if n := len(unjudged) - 1; n > 0 {
		s += fmt.Sprintf("; %d other lower version%s could not either", n, plural(n))
	}
	return s
}

// coverage is what an advice judged above the installed version, and what it did not.
type coverage struct {
	read    int                            // versions above the installed one fetched
	failed  []inventory.ChartVersionJudged // of those, the ones that could not be fetched or rendered
	omitted int                            // versions offered that were never fetched
	stopped string                         // what ended the search early (ChartAdvice.Stopped)
}

func coverageOf(a *inventory.ChartAdvice, later []inventory.ChartVersionJudged) coverage {
	c := coverage{read: len(later), omitted: a.VersionsOmitted}
	for _, v := range later {
		if v.Error != "" {
			c.failed = append(c.failed, v)
		}
	}
	c.stopped = a.Stopped
	return c
}

// complete says every version above the installed one that was offered was judged.
func (c coverage) complete() bool {
	return len(c.failed) == 0 && c.omitted == 0 && c.stopped == ""
}

// reason says how many versions were judged, how many of them could not be, and that more
// were not judged at all.
func (c coverage) reason(target string) string {
	if c.complete() {
		return fmt.Sprintf("none of the %d later versions judged supports %s", c.read, target)
	}
	return c.String()
}

// String is "47 were judged, 2 could not be fetched or rendered (1.1.0: …), 12 more were
// not judged".
func (c coverage) String() string {
	parts := []string{fmt.Sprintf("%d %s judged", c.read-len(c.failed), were(c.read-len(c.failed)))}
	if len(c.failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d could not be fetched or rendered (%s)", len(c.failed), firstOf(c.failed)))
	}
	if c.omitted > 0 {
		parts = append(parts, fmt.Sprintf("%d more %s not judged", c.omitted, were(c.omitted)))
	}
	s := strings.Join(parts, ", ")
	if c.stopped != "" {
		s += "; " + c.stopped
	}
	return s
}

// firstOf names the first version that could not be judged and why: "1.1.0: digest mismatch".
func firstOf(failed []inventory.ChartVersionJudged) string {
	s := failed[0].Version + ": " + failed[0].Error
	if n := len(failed) - 1; n > 0 {
		s += fmt.Sprintf("; %d other%s", n, plural(n))
	}
	return s
}

// notRead are the parts of the values every version was judged without, as a sentence
// names them: "valuesFrom not read".
func notRead(a *inventory.ChartAdvice) []string {
	out := make([]string, len(a.ValuesNotRead))
	for i, part := range a.ValuesNotRead {
		out[i] = part + " not read"
	}
	return out
}

func were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func joinReasons(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

// upgradeSentence names the version to move to, the values it was judged without ("judged
// without: valuesFrom"), and a lower version that could not be judged.
func upgradeSentence(fix *report.ChartFix, without []string, unjudged string) string {
	s := fmt.Sprintf("Upgrade chart %s from %s to %s", fix.Chart, fix.From, fix.To)
	if fix.FromAppVersion != "" && fix.ToAppVersion != "" {
		s += fmt.Sprintf(" (appVersion %s → %s)", fix.FromAppVersion, fix.ToAppVersion)
	}
	if len(without) > 0 {
		names := make([]string, len(without))
		for i, w := range without {
			names[i] = strings.TrimSuffix(w, " not read")
		}
		s += " (judged without: " + strings.Join(names, ", ") + ")"
	}
	if unjudged != "" {
		s += "; " + unjudged
	}
	return s + "."
}

// unreadReason is why the repository, or the declared version, was not read, with the
// declared version's own error (a 401, a timeout, not in the cache) when the advice's reason
// does not already quote it.
func unreadReason(a *inventory.ChartAdvice) string {
	if len(a.Versions) == 0 || a.Versions[0].Error == "" || strings.Contains(a.Reason, a.Versions[0].Error) {
		return a.Reason
	}
	return joinReasons(a.Reason, a.Versions[0].Error)
}

// noneSentence says no version supports target, and only of the versions judged when some
// offered were not.
func noneSentence(a *inventory.ChartAdvice, target string, c coverage) string {
	if !c.complete() {
		return fmt.Sprintf("No version of chart %s judged supports %s: %s.", a.Chart, target, c)
	}
	in := ""
	if a.Repository != "" {
		in = " in " + a.Repository
	}
	return fmt.Sprintf("No version of chart %s%s at or above %s supports %s.", a.Chart, in, a.Installed, target)
}

func joinSentences(first, rest string) string {
	if rest == "" {
		return first
	}
	return first + " " + rest
}

// listed keeps the APIs ("group/version Kind", core "v1 ConfigMap") a stored manifest lists
// (kb.Observe.Lists), so a release's recorded APIs and a render compare like with like.
func listed(apis []string, obs kb.Observe) []string {
	var out []string
	for _, api := range apis {
		apiVersion, kind, ok := strings.Cut(api, " ")
		if !ok {
			continue
		}
		if obs.Lists(apiVersion, kind) {
			out = append(out, api)
		}
	}
	return out
}

// difference is what a holds that b does not, sorted.
func difference(a, b []string) []string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
