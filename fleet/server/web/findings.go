package web

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/upgradescope/upgradescope/report"
)

// Findings is the fleet's findings page: each finding key once across the clusters the
// reader sees at a target, as GET /api/v1/fleet/findings answers it.
type Findings struct {
	Frame
	Query FindingsQuery
	// Targets are the fleet's columns, Teams and Categories what the findings at the
	// target hold before the filters: the choices the controls offer.
	Targets, Teams, Categories []string
	// Counts are where the clusters stand at the target (StatusReady … StatusNone).
	Counts     map[string]int
	Clusters   int
	Rows       []FindingRow
	Unreadable []string
	// BlockedByUnowned are, for the query's team, the clusters it is blocked on by blockers
	// no team owns: none of them its findings, so its filter alone would not show them.
	BlockedByUnowned []ClusterRef
}

// FindingsQuery is the findings page's URL: target ("" each cluster's next minor), team,
// category and severity ("" or "blocker" blockers, "warning", or "all"), and page (from 1,
// FindingsPageSize findings a page). GET /api/v1/fleet/findings takes the same filters and
// answers every finding; its default severity is both.
type FindingsQuery struct {
	Target, Team, Category, Severity string
	Page                             int
}

// FindingsPageSize is how many findings one findings page lists: a fleet whose clusters
// differ holds hundreds of keys, and the page's weight and time grow with the rows shown.
const FindingsPageSize = 50

// SeverityAll asks the findings page for blockers and warnings both.
const SeverityAll = "all"

// ParseFindingsQuery reads the findings page's parameters; the error names the one refused.
func ParseFindingsQuery(v url.Values) (FindingsQuery, error) {
	q := FindingsQuery{Target: v.Get("target"), Team: v.Get("team"), Category: v.Get("category"), Severity: v.Get("severity"), Page: 1}
	if !slices.Contains([]string{"", "blocker", "warning", SeverityAll}, q.Severity) {
		return q, fmt.Errorf("severity %q: want blocker, warning or all", q.Severity)
	}
	var err error
	q.Page, err = parsePage(v.Get("page"))
	return q, err
}

// APISeverity is the severity filter GET /api/v1/fleet/findings takes for the page's.
func (q FindingsQuery) APISeverity() string {
	switch q.Severity {
	case SeverityAll:
		return ""
	case "":
		return "blocker"
	}
	return q.Severity
}

// values are the query's filters, without the page: the CSV link and the controls ask for
// every finding, and a changed filter starts at page 1.
func (q FindingsQuery) values() url.Values {
	return url.Values{"target": {q.Target}, "team": {q.Team}, "category": {q.Category}, "severity": {q.Severity}}
}

// pageValues are values with page n.
func (q FindingsQuery) pageValues(n int) url.Values {
	v := q.values()
	if n > 1 {
		v.Set("page", strconv.Itoa(n))
	}
	return v
}

// FindingRow is one finding key across the fleet.
type FindingRow struct {
	Key, Title, Category, Severity string
	ClustersBlocked, Objects       int
	Teams                          []string
	Clusters                       []FindingCluster
}

// FindingCluster is one cluster a finding affects.
type FindingCluster struct {
	ID                     int64
	Name, Target, Severity string
	Objects                int
	Teams                  []string
}

// A finding's row names maxClustersShown clusters, folds away up to maxClustersListed in all,
// and counts the rest, which the CSV lists: a finding blocking 1,000 clusters would otherwise
// make a page of megabytes.
const (
	maxClustersShown  = 8
	maxClustersListed = 50
)

// RenderFindings writes the findings fragment.
func RenderFindings(f *Findings) []byte {
	var d doc
	d.Grow(32 << 10)
	d.banner(f.Frame)
	at := "each cluster's next minor"
	if f.Query.Target != "" {
		at = "Kubernetes " + esc(f.Query.Target)
	}
	d.w("<h1>Findings across the fleet</h1>\n")
	d.w(`<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Clusters at %s</h2>`, at)
	d.w(`<p id="summary-total" class="muted" data-total="%d">%s, each counted once:</p><div class="summary">`, f.Clusters, plural(f.Clusters, "cluster"))
	for _, s := range standings {
		d.w(`<a data-count="%s" class="v-none" href="%s">%s %s</a>`, s.key, href(f.Prefix, "/", url.Values{"target": {f.Query.Target}, "verdict": {s.key}}),
			thousands(f.Counts[s.key]), s.label)
	}
	d.w("</div></section>\n")
	f.controls(&d)
	offTarget(&d, f.Targets, f.Query.Target)
	f.unownedNote(&d)
	if len(f.Unreadable) > 0 {
		d.w(`<p class="banner" role="status">The stored reports of %s could not be read: their findings are missing here.</p>`+"\n", esc(strings.Join(f.Unreadable, ", ")))
	}
	f.table(&d)
	return []byte(d.String())
}

func (f *Findings) controls(d *doc) {
	d.w(`<form id="findings-controls" class="controls" method="get" action="%s/findings" role="search" aria-label="Filter findings">`, esc(f.Prefix))
	d.w(`<label for="target">Judge at<select id="target" name="target">`)
	targetOptions(d, f.Targets, f.Query.Target)
	d.w(`</select></label>`)
	f.choice(d, "team", "Team", "every team", f.Teams, f.Query.Team)
	f.choice(d, "category", "Category", "every category", f.Categories, f.Query.Category)
	d.w(`<label for="severity">Severity<select id="severity" name="severity">`)
	// The blockers' option is spelled out, so the address the form makes means the same to
	// GET /api/v1/fleet/findings, whose default is both.
	shown := f.Query.Severity
	if shown == "" {
		shown = "blocker"
	}
	for _, s := range []struct{ v, label string }{{"blocker", "blockers"}, {"warning", "warnings"}, {SeverityAll, "blockers and warnings"}} {
		d.w(`<option value="%s"%s>%s</option>`, s.v, selectedAttr(s.v == shown), s.label)
	}
	d.w(`</select></label><button type="submit">Apply</button></form>` + "\n")
	api := f.Query.values()
	api.Set("severity", f.Query.APISeverity())
	api.Set("format", "csv")
	d.w(`<p><a id="findings-csv" data-export="csv" href="%s">Download these findings as CSV</a> <span id="export-status" role="status" class="muted"></span></p>`+"\n",
		href(f.Prefix, "/api/v1/fleet/findings", api))
}

// choice is a select of options with an "every" first; a value not among the options
// (filtered to nothing) is kept as one, so the form shows what the address says.
func (f *Findings) choice(d *doc, name, label, every string, options []string, value string) {
	d.w(`<label for="%s">%s<select id="%s" name="%s"><option value=""%s>%s</option>`, name, label, name, name, selectedAttr(value == ""), every)
	if value != "" && !slices.Contains(options, value) {
		options = append([]string{value}, options...)
	}
	for _, o := range options {
		text := esc(o)
		if o == report.Unattributed {
			text = "no team (unattributed)"
		}
		d.w(`<option value="%s"%s>%s</option>`, esc(o), selectedAttr(o == value), text)
	}
	d.w(`</select></label>`)
}

func (f *Findings) table(d *doc) {
	d.w(`<div class="table-wrap" tabindex="0" role="region" aria-label="Findings"><table id="findings"><caption class="muted">Each finding once, most clusters blocked first: the clusters it affects, their teams and objects</caption><thead><tr>`)
	d.w(`<th scope="col" class="name">Finding</th><th scope="col">Severity</th><th scope="col" class="num">Clusters blocked</th><th scope="col" class="num">Objects</th><th scope="col">Teams</th><th scope="col">Clusters</th></tr></thead>` + "\n<tbody>\n")
	f.Query.Page = max(f.Query.Page, 1) // a query not parsed from a URL asks for the first
	from := min((f.Query.Page-1)*FindingsPageSize, len(f.Rows))
	to := min(from+FindingsPageSize, len(f.Rows))
	for _, r := range f.Rows[from:to] {
		f.row(d, r)
	}
	d.w("</tbody></table></div>\n")
	if len(f.Rows) == 0 {
		d.w(`<p class="muted">No finding matches.</p>` + "\n")
		return
	}
	pager{prefix: f.Prefix, path: "/findings", page: f.Query.Page, size: FindingsPageSize, noun: "finding", at: f.Query.pageValues}.write(d, from, to, len(f.Rows))
}

func (f *Findings) row(d *doc, r FindingRow) {
	d.w(`<tr data-key="%s" data-severity="%s"><th scope="row" class="name">%s<br><span class="key">%s</span> <span class="muted">%s</span></th>`,
		esc(r.Key), esc(r.Severity), esc(r.Title), esc(r.Key), esc(r.Category))
	d.w(`<td data-label="Severity">%s</td><td class="num" data-label="Clusters blocked">%d</td><td class="num" data-label="Objects">%s</td><td data-label="Teams">%s</td><td data-label="Clusters">`,
		severityWord(r.Severity), r.ClustersBlocked, thousands(r.Objects), teamList(r.owners()))
	// One list item a cluster, so entries never run together; past maxClustersShown the rest
	// fold into a details of their own list.
	d.w(`<ul class="affected-list">`)
	for i, c := range r.Clusters[:min(len(r.Clusters), maxClustersListed)] {
		if i == maxClustersShown {
			d.w(`</ul><details><summary>%d more</summary><ul class="affected-list">`, len(r.Clusters)-maxClustersShown)
		}
		link := href(f.Prefix, fmt.Sprintf("/clusters/%d", c.ID), url.Values{"target": {c.Target}, "finding": {r.Key}})
		d.w(`<li class="affected"><a class="cluster" data-cluster="%s" href="%s">%s</a> (%s) <span class="muted">%s, %s</span></li>`,
			esc(c.Name), link, esc(c.Name), teamList(c.owners()), plural(c.Objects, "object"), esc(c.Severity))
	}
	d.w(`</ul>`)
	if n := len(r.Clusters) - maxClustersListed; n > 0 {
		d.w(`<p class="muted">and %s more: the CSV lists every one</p>`, thousands(n))
	}
	if len(r.Clusters) > maxClustersShown {
		d.w(`</details>`)
	}
	d.w("</td></tr>\n")
}

// owners are the teams owning the finding's objects on the cluster, report.Unattributed
// ("no team") when they are in no team's namespaces.
func (c FindingCluster) owners() []string {
	if len(c.Teams) == 0 {
		return []string{report.Unattributed}
	}
	return c.Teams
}

// unownedNote says, for a team, on which clusters blockers no team owns block it, with a
// link to them: its own filter lists none of them.
func (f *Findings) unownedNote(d *doc) {
	if len(f.BlockedByUnowned) == 0 {
		return
	}
	q := f.Query
	q.Team, q.Category, q.Severity = report.Unattributed, "", "blocker"
	d.w(`<p id="unowned-note" class="banner" role="status">%s is blocked on %s by blockers no team owns, which this list of %s's findings leaves out: `,
		esc(f.Query.Team), plural(len(f.BlockedByUnowned), "cluster"), esc(f.Query.Team))
	for i, c := range f.BlockedByUnowned {
		if i > 0 {
			d.w(", ")
		}
		d.w(`<a href="%s">%s</a>`, href(f.Prefix, fmt.Sprintf("/clusters/%d", c.ID), url.Values{"target": {f.Query.Target}}), esc(c.Name))
	}
	d.w(`. <a id="unowned-link" href="%s">See the blockers no team owns</a>.</p>`+"\n", href(f.Prefix, "/findings", q.values()))
}

// owners are the teams owning the finding and, when some cluster's objects of it are in no
// team's namespaces, report.Unattributed ("no team") after them, as the fleet page's owning
// teams are: an empty list would read as nobody having to act.
func (r FindingRow) owners() []string {
	out := r.Teams
	for _, c := range r.Clusters {
		if len(c.Teams) == 0 && !slices.Contains(out, report.Unattributed) {
			out = append(slices.Clip(out), report.Unattributed)
		}
	}
	return out
}

// severityWord is a severity as a word in its colour.
func severityWord(s string) string {
	if s == "blocker" {
		return `<span class="v v-blocked">blocker</span>`
	}
	return `<span class="v v-unknown">` + esc(s) + `</span>`
}
