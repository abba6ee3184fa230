package web

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

var severities = []string{report.SeverityBlocker, report.SeverityWarning, report.SeverityInfo}

// ClusterQuery is the cluster page's URL: target, the finding filters (category,
// severity, team, q: text in a finding's key, title, detail or objects) and finding, the
// key of a finding to open and scroll to.
type ClusterQuery struct {
	Target, Category, Severity, Team, Q, Finding string
}

// ParseClusterQuery reads the cluster page's filters; target is checked by the server,
// which knows the cluster.
func ParseClusterQuery(v url.Values) (ClusterQuery, error) {
	q := ClusterQuery{Target: v.Get("target"), Category: v.Get("category"), Severity: v.Get("severity"),
		Team: v.Get("team"), Q: strings.TrimSpace(v.Get("q")), Finding: v.Get("finding")}
	if q.Severity != "" && !slices.Contains(severities, q.Severity) {
		return q, fmt.Errorf("severity %q: want blocker, warning or info", q.Severity)
	}
	// A slice, not a map: with several too long, the error names the same one every time.
	for _, p := range []struct{ name, val string }{{"q", q.Q}, {"category", q.Category}, {"team", q.Team}, {"finding", q.Finding}} {
		if len(p.val) > 512 {
			return q, fmt.Errorf("%s: at most 512 bytes", p.name)
		}
	}
	return q, nil
}

func (q ClusterQuery) values() url.Values {
	return url.Values{"target": {q.Target}, "category": {q.Category}, "severity": {q.Severity}, "team": {q.Team}, "q": {q.Q}, "finding": {q.Finding}}
}

// HistoryPoint is one stored evaluation's score, oldest first in Cluster.History.
type HistoryPoint struct {
	At      time.Time
	Score   int
	Verdict string
}

// Bundle is a bundle and its revision; Behind marks an agent's that differs from the
// server's bundle of that name.
type Bundle struct {
	Name, Revision string
	Behind         bool
}

// Cluster is the cluster page's data. Result is the served report's target, already cut
// to the reader's scope.
type Cluster struct {
	Frame
	ID            int64
	Name          string
	ServerVersion string
	LastSeen      time.Time
	Stale         bool
	// Targets are the cluster's planned targets and their stored cells.
	Targets     []FleetCell
	Target      string
	Source      string
	EvaluatedAt time.Time
	Outdated    bool
	Result      *report.TargetResult
	Query       ClusterQuery
	History     []HistoryPoint
	// ServerBundles are what the server evaluates with now, AgentBundles what the cluster's
	// agent last said it has, ReportBundles what produced the served report.
	ServerBundles []Bundle
	AgentBundles  []Bundle
	ReportBundles []report.BundleInfo
	// Collector is what the agent of the served snapshot said it collects with (empty when
	// unknown or not needed: the page names it only to fix probes the agent did not collect).
	Collector report.Collector
	// Exports are the export formats the server offers for the page's target ("csv",
	// "html"): none when the shown report is not stored, since exports never what-if.
	Exports []string
	// TeamVerdicts are the teams the reader sees with a namespace on the cluster or a finding,
	// sorted, each judged as a team is; Unowned counts what no team owns.
	TeamVerdicts []ClusterTeam
	Unowned      Unowned
	// Audit is what the API server's audit webhook backend told the server (nil when no
	// batch arrived).
	Audit *AuditPanel
}

// RenderCluster writes the cluster fragment.
func RenderCluster(c *Cluster) []byte {
	var d doc
	d.Grow(64 << 10)
	d.banner(c.Frame)
	d.w("<h1>%s</h1>\n", esc(c.Name))
	stale := ""
	if c.Stale {
		stale = ` <span class="flag">stale</span>`
	}
	d.w(`<p class="meta">Kubernetes %s · last push <time datetime="%s">%s</time>%s</p>`+"\n", esc(orDash(c.ServerVersion)),
		c.LastSeen.UTC().Format(time.RFC3339), c.LastSeen.UTC().Format("2006-01-02 15:04 MST"), stale)
	c.targets(&d)
	// An unknown verdict's cause is what a reader needs first: the findings are only what
	// could be judged.
	unknown := c.Result != nil && c.Result.Verdict == report.VerdictUnknown
	if unknown {
		c.gaps(&d, true)
	}
	c.findings(&d)
	if !unknown {
		c.gaps(&d, false)
	}
	c.audit(&d)
	c.history(&d)
	c.teams(&d)
	c.bundles(&d)
	return []byte(d.String())
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func (c *Cluster) link(q ClusterQuery) string {
	return href(c.Prefix, "/clusters/"+strconv.FormatInt(c.ID, 10), q.values())
}

func (c *Cluster) targets(d *doc) {
	d.w(`<section id="targets" aria-labelledby="targets-h"><h2 id="targets-h">Targets</h2><div class="targets">`)
	for _, t := range c.Targets {
		v := t.Verdict
		if v == "" {
			v = StatusNone
		}
		score := ""
		if t.Verdict != "" {
			score = " " + scoreText(t.Verdict, t.Score)
		}
		cur := ""
		if t.Target == c.Target {
			cur = ` aria-current="true"`
		}
		d.w(`<a data-target="%s" data-verdict="%s"%s href="%s">Kubernetes %s: %s%s</a>`, esc(t.Target), esc(v), cur,
			c.link(ClusterQuery{Target: t.Target}), esc(t.Target), verdict(t.Verdict), score)
	}
	d.w("</div>\n")
	if len(c.Targets) == 0 {
		c.targetForm(d)
	}
	if r := c.Result; r != nil {
		outdated := ""
		if c.Outdated {
			outdated = ` <span class="flag">outdated: judged with other bundles, or on an earlier day</span>`
		}
		d.w(`<p id="verdict-line">At Kubernetes %s: %s score %s · %s, %s, %s · %s evaluation of <time datetime="%s">%s</time>%s</p>`,
			esc(c.Target), verdict(r.Verdict), scoreText(r.Verdict, r.Score), plural(r.Blockers, "blocker"), plural(r.Warnings, "warning"), plural(r.Infos, "info"), esc(c.Source),
			c.EvaluatedAt.UTC().Format(time.RFC3339), c.EvaluatedAt.UTC().Format("2006-01-02 15:04 MST"), outdated)
	}
	c.exports(d)
	d.w("</section>\n")
}

// exports links the stored evaluation's exports. They are read routes: app.js downloads them
// with the page's read token (an <a href> alone would carry none), and without app.js the
// link still works where reads are open.
func (c *Cluster) exports(d *doc) {
	if len(c.Exports) == 0 {
		return
	}
	// A team-scoped reader's export is its share judged as it downloads (exportHandler), as
	// its page is: a what-if of the stored evaluation's snapshot, which the page says.
	if len(c.Frame.Teams) > 0 {
		d.w(`<p id="exports" class="exports" data-scoped="">Download your teams' share of this cluster, judged from the stored evaluation's snapshot when you download it, as this page is (the file's evaluatedAt is that time):`)
	} else {
		d.w(`<p id="exports" class="exports">Download this evaluation:`)
	}
	for _, f := range c.Exports {
		u := href(c.Prefix, "/api/v1/clusters/"+strconv.FormatInt(c.ID, 10)+"/export", url.Values{"format": {f}, "target": {c.Target}})
		d.w(` <a class="button" data-export="%s" href="%s" download>%s</a>`, esc(f), u, esc(strings.ToUpper(f)))
	}
	d.w(` <span id="export-status" class="muted" role="status"></span></p>`)
}

// scoreText is a score as the page shows it: an unknown verdict's score counts only what
// was assessed, so a 100 there would read as ready; it is shown as not assessed.
func scoreText(v string, score int) string {
	if v == report.VerdictUnknown {
		return `<span class="na" title="the score counts only what was assessed">n/a (not assessed)</span>`
	}
	return strconv.Itoa(score)
}

// targetForm asks for a target when the page has none to offer: the cluster's version is
// unknown (no next minor) and the server plans no --targets, so no link could pick one.
func (c *Cluster) targetForm(d *doc) {
	d.w(`<form id="target-form" class="controls" method="get" action="%s/clusters/%d" aria-label="Pick a target">`, esc(c.Prefix), c.ID)
	d.w(`<label for="target-input">Target (MAJOR.MINOR)<input id="target-input" name="target" type="text" inputmode="decimal" ` +
		`pattern="[0-9]+\.[0-9]+" placeholder="1.35" required autocomplete="off"></label>`)
	d.w(`<button type="submit">Show</button></form>` + "\n")
}

// matches answers whether f passes the query's filters.
func (q ClusterQuery) matches(f *report.Finding) bool {
	if q.Category != "" && f.Category != q.Category || q.Severity != "" && f.Severity != q.Severity {
		return false
	}
	// report.Unattributed keeps what no team owns, as the fleet's findings filter it.
	if q.Team != "" && !slices.Contains(f.Teams, q.Team) && (q.Team != report.Unattributed || len(f.Teams) > 0) {
		return false
	}
	if q.Q == "" {
		return true
	}
	needle := strings.ToLower(q.Q)
	if strings.Contains(strings.ToLower(f.Key+"\n"+f.Title+"\n"+f.Detail+"\n"+strings.Join(f.Namespaces, "\n")), needle) {
		return true
	}
	return slices.ContainsFunc(f.Objects, func(o inventory.ObjectRef) bool {
		return strings.Contains(strings.ToLower(o.Namespace+"/"+o.Name+"\n"+o.File), needle)
	})
}

func (c *Cluster) findings(d *doc) {
	d.w(`<section id="findings" aria-labelledby="findings-h"><h2 id="findings-h">Findings</h2>`)
	if c.Result == nil {
		msg := "No report at this target yet."
		if c.Target == "" {
			msg = "The cluster's Kubernetes version is unknown, so it has no next minor: pick a target above."
			if len(c.Targets) == 0 {
				msg = "The cluster's Kubernetes version is unknown, so it has no next minor: name a target above."
			}
		}
		d.w(`<p class="muted">%s</p></section>`+"\n", msg)
		return
	}
	all := c.Result.Findings
	c.filters(d, all)
	var shown []*report.Finding
	for i := range all {
		if c.Query.matches(&all[i]) {
			shown = append(shown, &all[i])
		}
	}
	d.w(`<p class="muted" id="findings-count">%s of %s findings</p>`, thousands(len(shown)), thousands(len(all)))
	slugs := slugger{}
	for _, sev := range severities {
		var group []*report.Finding
		for _, f := range shown {
			if f.Severity == sev {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		d.w(`<section data-severity="%s" aria-labelledby="sev-%s"><h3 id="sev-%s">%ss (%d)</h3>`+"\n", sev, sev, sev, strings.ToUpper(sev[:1])+sev[1:], len(group))
		for _, f := range group {
			c.finding(d, f, slugs.of(f.Key))
		}
		d.w("</section>\n")
	}
	if c.Query.Finding != "" && !slices.ContainsFunc(shown, func(f *report.Finding) bool { return f.Key == c.Query.Finding }) {
		d.w(`<p class="muted">The linked finding %s is not among the findings shown.</p>`, esc(c.Query.Finding))
	}
	d.w("</section>\n")
}

func (c *Cluster) filters(d *doc, all []report.Finding) {
	var cats, teams []string
	for _, f := range all {
		cats = append(cats, f.Category)
		teams = append(teams, f.Teams...)
	}
	slices.Sort(cats)
	slices.Sort(teams)
	d.w(`<form id="finding-filters" class="controls" method="get" action="%s/clusters/%d" role="search" aria-label="Filter findings">`, esc(c.Prefix), c.ID)
	d.w(`<input type="hidden" name="target" value="%s">`, esc(c.Target))
	options(d, "f-category", "category", "Category", "all categories", slices.Compact(cats), c.Query.Category)
	options(d, "f-severity", "severity", "Severity", "all severities", severities, c.Query.Severity)
	options(d, "f-team", "team", "Team", "all teams", slices.Compact(teams), c.Query.Team)
	d.w(`<label for="f-q">Text<input id="f-q" name="q" type="search" value="%s" autocomplete="off"></label>`, esc(c.Query.Q))
	d.w(`<button type="submit">Apply</button></form>` + "\n")
}

// options writes a labelled select of values, the first option all of them.
func options(d *doc, id, name, label, all string, values []string, current string) {
	d.w(`<label for="%s">%s<select id="%s" name="%s"><option value="">%s</option>`, id, label, id, name, all)
	if current != "" && !slices.Contains(values, current) {
		values = append(slices.Clone(values), current)
	}
	for _, v := range values {
		d.w(`<option value="%s"%s>%s</option>`, esc(v), selectedAttr(v == current), esc(v))
	}
	d.w(`</select></label>`)
}

func (c *Cluster) finding(d *doc, f *report.Finding, slug string) {
	current := f.Key == c.Query.Finding
	cur, open := "", ""
	if current {
		cur, open = ` aria-current="true"`, " open"
	}
	q := c.Query
	q.Finding = f.Key
	d.w(`<article class="finding" id="finding-%s" data-key="%s" data-category="%s" data-severity="%s"%s aria-labelledby="t-%s">`,
		slug, esc(f.Key), esc(f.Category), esc(f.Severity), cur, slug)
	d.w(`<h4 id="t-%s"><a href="%s">%s</a></h4>`, slug, c.link(q), esc(f.Title))
	d.w(`<p class="key">%s · %s</p>`, esc(f.Key), esc(f.Severity))
	if f.Detail != "" {
		d.w(`<p>%s</p>`, esc(f.Detail))
	}
	if len(f.Objects) <= openEvidence {
		open = " open"
	}
	c.evidence(d, f, open)
	if f.Remediation != "" {
		d.w(`<p><strong>Fix:</strong> %s</p>`, esc(f.Remediation))
	}
	if f.Fix != nil {
		d.w(`<p class="chart-fix"><strong>Chart fix:</strong> %s</p>`, esc(f.Fix.Summary(f.Target)))
	}
	if len(f.Citations) > 0 {
		d.w(`<p class="citations">Sources: `)
		d.citations(f.Citations)
		d.w(`</p>`)
	}
	if len(f.Teams) > 0 {
		d.w(`<p class="muted">Teams: %s</p>`, esc(strings.Join(f.Teams, ", ")))
	}
	d.w("</article>\n")
}

// openEvidence is how many objects a finding may list with its evidence open: past it the
// list starts closed, so a page of many findings stays readable.
const openEvidence = 5

// evidence lists the objects (namespace/name, file:line for manifests) and the namespaces
// and deprecated calls; the list opens when the finding is the linked one.
func (c *Cluster) evidence(d *doc, f *report.Finding, open string) {
	n := len(f.Objects) + f.ObjectsOmitted
	if n == 0 && len(f.Namespaces) == 0 && len(f.Calls) == 0 {
		return
	}
	d.w(`<details%s><summary>Evidence: %s</summary><ul>`, open, plural(n, "object"))
	for _, o := range f.Objects {
		d.w(`<li>%s</li>`, esc(objectText(o)))
	}
	if f.ObjectsOmitted > 0 {
		d.w(`<li class="muted">and %s more not listed</li>`, thousands(f.ObjectsOmitted))
	}
	for _, call := range f.Calls {
		d.w(`<li>call: %s</li>`, esc(call))
	}
	d.w(`</ul>`)
	if len(f.Namespaces) > 0 {
		d.w(`<p class="muted">Namespaces: %s</p>`, esc(strings.Join(f.Namespaces, ", ")))
	}
	d.w(`</details>`)
}

// objectText is "Kind ns/name" and, for a manifest, "at file:line" (rendered from a chart).
func objectText(o inventory.ObjectRef) string {
	name := o.Name
	if o.Namespace != "" {
		name = o.Namespace + "/" + o.Name
	}
	if o.Kind != "" {
		name = o.Kind + " " + name
	}
	if o.File != "" {
		name += " at " + o.File
		if o.Line > 0 {
			name += ":" + strconv.Itoa(o.Line)
		}
	}
	if o.RenderedFrom != "" {
		name += " (rendered from " + o.RenderedFrom + ")"
	}
	return name
}

// slugger gives each finding key an id-safe slug, unique within a page.
type slugger map[string]int

func (s slugger) of(key string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(key) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	slug := strings.TrimSuffix(b.String(), "-")
	if slug == "" {
		slug = "x"
	}
	s[slug]++
	if n := s[slug]; n > 1 {
		slug += "-" + strconv.Itoa(n)
	}
	return slug
}

// gapHides says what a capability that was not assessed leaves unseen.
var gapHides = map[string]string{
	inventory.CapAPIUsage:          "objects stored at deprecated or removed APIs: a removed-API blocker cannot be ruled out",
	inventory.CapDeprecatedCalls:   "clients still calling deprecated APIs (the API server's request counter)",
	inventory.CapHelm:              "Helm releases whose charts use removed APIs or whose kubeVersion excludes the target",
	inventory.CapAddons:            "add-ons past end of life or incompatible with the target",
	inventory.CapVersions:          "control-plane and node version skew",
	inventory.CapCRDs:              "custom resources served only at versions the target drops",
	inventory.CapDisruptionBudgets: "PodDisruptionBudgets that stop a node drain",
	inventory.CapPods:              "pods a node drain would delete or whose data it would lose",
	inventory.CapWebhooks:          "admission webhooks that can reject requests or stop the control plane recovering",
	inventory.CapEndpoints:         "webhooks, aggregated APIs and CRD conversions whose service has no ready endpoint",
	inventory.CapAPIServices:       "aggregated APIs that are not Available",
	inventory.CapNodeState:         "nodes not ready, cordoned or under pressure, and what their OS and runtime run",
	inventory.CapComponentFlags:    "feature gates and flags the target's components refuse",
	inventory.CapKubeletConfig:     "kubelet settings the target refuses (feature gates, cgroup v1)",
	"gitops":                       "Argo CD and Flux charts that cannot be assessed from the cluster",
	"namespaces":                   "which team owns each finding",
	"kb-coverage":                  "whatever the knowledge base does not know about this target yet",
}

func hides(capability string) string {
	if h, ok := gapHides[capability]; ok {
		return h
	}
	if id, ok := strings.CutPrefix(capability, "probes/"); ok {
		return "the checks of the rules that read probe " + id
	}
	return "the checks that read this capability"
}

// history is the score chart at the page's target; without a target there is none to chart.
func (c *Cluster) history(d *doc) {
	if c.Target == "" {
		return
	}
	d.w(`<section id="history" aria-labelledby="history-h"><h2 id="history-h">Score history at Kubernetes %s</h2>`, esc(c.Target))
	d.WriteString(ScoreChart(c.History, c.Target))
	d.w("</section>\n")
}

// ClusterTeam is one team's verdict on the cluster at the page's target.
type ClusterTeam struct {
	Team, Verdict                    string
	Score, Blockers, Warnings, Infos int
}

// Unowned counts the shown report's findings no team owns.
type Unowned struct{ Blockers, Warnings int }

// teams is every team with a namespace on the cluster (or a finding), judged as a team is:
// by its own blockers or by any no team owns, which the sentence under the table counts.
// A report where no finding names a team still has its teams: each blocked, or not, by
// what no team owns.
func (c *Cluster) teams(d *doc) {
	d.w(`<section id="cluster-teams" aria-labelledby="teams-h"><h2 id="teams-h">Teams</h2>`)
	if len(c.TeamVerdicts) > 0 {
		d.w(`<div class="table-wrap" tabindex="0"><table id="teams-table"><thead><tr>` +
			`<th scope="col">Team</th><th scope="col">Verdict</th><th scope="col">Score</th><th scope="col">Blockers</th><th scope="col">Warnings</th><th scope="col">Infos</th></tr></thead><tbody>`)
		for _, t := range c.TeamVerdicts {
			q := ClusterQuery{Target: c.Target, Team: t.Team}
			d.w(`<tr data-team="%s" data-verdict="%s"><th scope="row"><a href="%s">%s</a></th><td>%s</td><td>%s</td><td>%d</td><td>%d</td><td>%d</td></tr>`,
				esc(t.Team), esc(t.Verdict), c.link(q), esc(t.Team), verdict(t.Verdict), scoreText(t.Verdict, t.Score), t.Blockers, t.Warnings, t.Infos)
		}
		d.w("</tbody></table></div>")
	} else if c.Result != nil {
		d.w(`<p class="muted" id="teams-none">No namespace of this cluster belongs to a team (a namespace label or the server's --team-map names one).</p>`)
	}
	if c.Result != nil {
		c.unowned(d)
	}
	d.w("</section>\n")
}

// unowned says what no team owns and that its blockers block every team.
func (c *Cluster) unowned(d *doc) {
	u := c.Unowned
	if u.Blockers == 0 && u.Warnings == 0 {
		return
	}
	named := slices.ContainsFunc(c.TeamVerdicts, func(t ClusterTeam) bool { return t.Blockers+t.Warnings+t.Infos > 0 })
	d.w(`<p id="teams-unowned" data-blockers="%d">`, u.Blockers)
	if len(c.TeamVerdicts) > 0 && !named {
		d.w("No finding names a team. ")
	}
	what := plural(u.Blockers, "blocker")
	switch {
	case u.Blockers == 0:
		what = plural(u.Warnings, "warning")
	case u.Warnings > 0:
		what += " and " + plural(u.Warnings, "warning")
	}
	d.w("%s no team owns (cluster-scoped objects, or namespaces without a team)", what)
	switch {
	case u.Blockers > 0 && len(c.TeamVerdicts) > 0:
		d.w(": %s every team here, whatever its own findings.", pick(u.Blockers == 1, "that blocker blocks", "those blockers block"))
	case u.Blockers > 0:
		d.w(": %s the cluster.", pick(u.Blockers == 1, "it blocks", "they block"))
	default:
		d.w(".")
	}
	d.w("</p>")
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

func (c *Cluster) bundles(d *doc) {
	d.w(`<section id="bundles" aria-labelledby="bundles-h"><h2 id="bundles-h">Bundles</h2><div class="table-wrap" tabindex="0"><table><thead><tr>` +
		`<th scope="col">Bundle</th><th scope="col">Server (active)</th><th scope="col">This report</th><th scope="col">Cluster's agent</th></tr></thead><tbody>`)
	names := []string{}
	for _, b := range c.ServerBundles {
		names = append(names, b.Name)
	}
	for _, b := range c.ReportBundles {
		names = append(names, b.Name)
	}
	for _, b := range c.AgentBundles {
		names = append(names, b.Name)
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		agent := "–"
		for _, b := range c.AgentBundles {
			if b.Name == name {
				agent = esc(b.Revision)
				if b.Behind {
					agent += ` <span class="flag" data-behind="">behind the server</span>`
				}
			}
		}
		rep := "–"
		for _, b := range c.ReportBundles {
			if b.Name == name {
				rep = esc(b.Revision)
			}
		}
		srv := "–"
		for _, b := range c.ServerBundles {
			if b.Name == name {
				srv = esc(b.Revision)
			}
		}
		d.w(`<tr><th scope="row">%s</th><td>%s</td><td>%s</td><td>%s</td></tr>`, esc(name), srv, rep, agent)
	}
	d.w("</tbody></table></div></section>\n")
}
