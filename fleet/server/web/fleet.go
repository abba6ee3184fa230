package web

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// PageSize is how many clusters one fleet page lists.
const PageSize = 100

// Fleet statuses a cluster is counted and filtered by ("stale" counts beside its verdict).
const (
	StatusReady   = "ready"
	StatusBlocked = "blocked"
	StatusUnknown = "unknown"
	StatusStale   = "stale"
	StatusNone    = "none"
	statusNA      = "n/a"
)

var (
	fleetStatuses = []string{"", StatusReady, StatusBlocked, StatusUnknown, StatusStale, StatusNone}
	fleetSorts    = []string{"name", "-name", "score", "-score", "verdict", "updated"}
)

// FleetQuery is the fleet page's URL: q (a substring of the cluster name, any case),
// verdict (a status), sort, target (the column the summary, filter and score sort read;
// "" is each cluster's next minor) and page (from 1).
type FleetQuery struct {
	Q, Verdict, Sort, Target string
	Page                     int
}

// ParseFleetQuery reads and checks the fleet page's parameters; the error names the
// parameter and what it accepts.
func ParseFleetQuery(v url.Values) (FleetQuery, error) {
	q := FleetQuery{Q: strings.TrimSpace(v.Get("q")), Verdict: v.Get("verdict"), Sort: v.Get("sort"), Target: v.Get("target"), Page: 1}
	if len(q.Q) > 256 {
		return q, fmt.Errorf("q: at most 256 bytes")
	}
	if !slices.Contains(fleetStatuses, q.Verdict) {
		return q, fmt.Errorf("verdict %q: want ready, blocked, unknown, stale or none", q.Verdict)
	}
	if q.Sort == "" {
		q.Sort = "name"
	}
	if !slices.Contains(fleetSorts, q.Sort) {
		return q, fmt.Errorf("sort %q: want one of %s", q.Sort, strings.Join(fleetSorts, ", "))
	}
	if raw := v.Get("page"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > 1_000_000 {
			return q, fmt.Errorf("page %q: want a whole number from 1", raw)
		}
		q.Page = n
	}
	return q, nil
}

// values is q as URL parameters, defaults left out.
func (q FleetQuery) values() url.Values {
	v := url.Values{"q": {q.Q}, "verdict": {q.Verdict}, "target": {q.Target}}
	if q.Sort != "name" {
		v.Set("sort", q.Sort)
	}
	if q.Page > 1 {
		v.Set("page", strconv.Itoa(q.Page))
	}
	return v
}

// FleetCell is one cluster at one target. Verdict is "" when no evaluation is stored and
// "n/a" when the cluster already runs the target.
type FleetCell struct {
	Target   string
	Verdict  string
	Score    int
	Outdated bool
}

// FleetRow is one cluster of the fleet matrix, its cells in the fleet's column order.
type FleetRow struct {
	ID            int64
	Name          string
	ServerVersion string
	LastSeen      time.Time
	Stale         bool
	// Behind names the bundles its agent evaluates with at another revision than the
	// server's ("name@revision").
	Behind []string
	// Next is its next minor, the target the summary reads when the query names none.
	Next  string
	Cells []FleetCell
}

// focus is the cell the query's target selects, or the row's next minor's.
func (r *FleetRow) focus(target string) FleetCell {
	if target == "" {
		target = r.Next
	}
	for _, c := range r.Cells {
		if c.Target == target {
			return c
		}
	}
	return FleetCell{Target: target}
}

// status is the row's verdict at the focused target, "none" without an evaluation.
func (r *FleetRow) status(target string) string {
	c := r.focus(target)
	if c.Verdict == "" {
		return StatusNone
	}
	return c.Verdict
}

// Fleet is the fleet page's data: every cluster the reader sees and the fleet's columns.
type Fleet struct {
	Frame
	Targets []string
	Rows    []FleetRow
	Query   FleetQuery
}

// CheckTarget refuses a target that is not one of the fleet's columns.
func (f *Fleet) CheckTarget() error {
	if f.Query.Target != "" && !slices.Contains(f.Targets, f.Query.Target) {
		return fmt.Errorf("target %q: not a column of this fleet (%s)", f.Query.Target, strings.Join(f.Targets, ", "))
	}
	return nil
}

// counts is how many of the clusters q keeps have each status at the focused target: each
// count's link keeps q, so it lists as many rows as the count says.
func (f *Fleet) counts() map[string]int {
	out := map[string]int{}
	for i := range f.Rows {
		r := &f.Rows[i]
		if !f.named(r) {
			continue
		}
		if s := r.status(f.Query.Target); s != statusNA {
			out[s]++
		}
		if r.Stale {
			out[StatusStale]++
		}
	}
	return out
}

// named answers whether the row's name contains the query's q, in any case.
func (f *Fleet) named(r *FleetRow) bool {
	return f.Query.Q == "" || strings.Contains(strings.ToLower(r.Name), strings.ToLower(f.Query.Q))
}

// selected is the rows the query's q and verdict keep, in its order.
func (f *Fleet) selected() []*FleetRow {
	var out []*FleetRow
	for i := range f.Rows {
		r := &f.Rows[i]
		if !f.named(r) {
			continue
		}
		switch f.Query.Verdict {
		case "":
		case StatusStale:
			if !r.Stale {
				continue
			}
		default:
			if r.status(f.Query.Target) != f.Query.Verdict {
				continue
			}
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, f.order())
	return out
}

// statusRank orders verdicts worst first for sort=verdict.
var statusRank = map[string]int{StatusBlocked: 0, StatusUnknown: 1, StatusNone: 2, StatusReady: 3, statusNA: 4}

// order is the query's sort; ties fall back to the name, so a page is always the same.
func (f *Fleet) order() func(a, b *FleetRow) int {
	t := f.Query.Target
	// Clusters without a score sort after every score, both ways.
	scored := func(r *FleetRow) (int, bool) {
		c := r.focus(t)
		return c.Score, c.Verdict != "" && c.Verdict != statusNA
	}
	byScore := func(a, b *FleetRow, desc bool) int {
		sa, oka := scored(a)
		sb, okb := scored(b)
		if oka != okb {
			if oka {
				return -1
			}
			return 1
		}
		if desc {
			return cmp.Compare(sb, sa)
		}
		return cmp.Compare(sa, sb)
	}
	var key func(a, b *FleetRow) int
	switch f.Query.Sort {
	case "-name":
		return func(a, b *FleetRow) int { return cmp.Compare(b.Name, a.Name) }
	case "score":
		key = func(a, b *FleetRow) int { return byScore(a, b, false) }
	case "-score":
		key = func(a, b *FleetRow) int { return byScore(a, b, true) }
	case "verdict":
		key = func(a, b *FleetRow) int { return cmp.Compare(statusRank[a.status(t)], statusRank[b.status(t)]) }
	case "updated":
		key = func(a, b *FleetRow) int { return b.LastSeen.Compare(a.LastSeen) }
	default:
		key = func(*FleetRow, *FleetRow) int { return 0 }
	}
	return func(a, b *FleetRow) int { return cmp.Or(key(a, b), cmp.Compare(a.Name, b.Name)) }
}

// RenderFleet writes the fleet fragment: summary strip, controls, one page of the matrix.
func RenderFleet(f *Fleet) []byte {
	var d doc
	d.Grow(64 << 10)
	d.banner(f.Frame)
	d.w("<h1>Fleet</h1>\n")
	f.summary(&d)
	f.controls(&d)
	rows := f.selected()
	from := min((f.Query.Page-1)*PageSize, len(rows))
	to := min(from+PageSize, len(rows))
	f.table(&d, rows[from:to])
	f.pager(&d, from, to, len(rows))
	return []byte(d.String())
}

func (f *Fleet) summary(d *doc) {
	counts := f.counts()
	at := "each cluster's next minor"
	if f.Query.Target != "" {
		at = "Kubernetes " + esc(f.Query.Target)
	}
	if f.Query.Q != "" {
		at += " of the clusters matching “" + esc(f.Query.Q) + "”"
	}
	d.w(`<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Summary at %s</h2><div class="summary">`, at)
	for _, s := range []struct{ key, label string }{{StatusReady, "ready"}, {StatusBlocked, "blocked"},
		{StatusUnknown, "unknown"}, {StatusStale, "stale"}, {StatusNone, "no stored evaluation"}} {
		q := f.Query
		q.Verdict, q.Page = s.key, 1
		cls := "v-" + s.key
		if s.key == StatusStale || s.key == StatusNone {
			cls = "v-none"
		}
		d.w(`<a data-count="%s" class="%s" href="%s">%s %s</a>`, s.key, cls, href(f.Prefix, "/", q.values()), thousands(counts[s.key]), s.label)
	}
	d.w("</div></section>\n")
}

func (f *Fleet) controls(d *doc) {
	d.w(`<form id="fleet-controls" class="controls" method="get" action="%s/" role="search" aria-label="Filter clusters">`, esc(f.Prefix))
	d.w(`<label for="q">Cluster name<input id="q" name="q" type="search" value="%s" autocomplete="off"></label>`, esc(f.Query.Q))
	d.w(`<label for="verdict-filter">Show<select id="verdict-filter" name="verdict">`)
	for _, s := range []struct{ v, label string }{{"", "all clusters"}, {StatusReady, "ready"}, {StatusBlocked, "blocked"},
		{StatusUnknown, "unknown"}, {StatusStale, "stale"}, {StatusNone, "no stored evaluation"}} {
		d.w(`<option value="%s"%s>%s</option>`, s.v, selectedAttr(s.v == f.Query.Verdict), s.label)
	}
	d.w(`</select></label>`)
	if len(f.Targets) > 1 {
		d.w(`<label for="target">Judge at<select id="target" name="target"><option value=""%s>each cluster's next minor</option>`, selectedAttr(f.Query.Target == ""))
		for _, t := range f.Targets {
			d.w(`<option value="%s"%s>Kubernetes %s</option>`, esc(t), selectedAttr(t == f.Query.Target), esc(t))
		}
		d.w(`</select></label>`)
	}
	// The column headers sort too, but a phone shows each cluster as a card without them.
	d.w(`<label for="sort">Sort by<select id="sort" name="sort">`)
	for _, s := range []struct{ v, label string }{{"name", "name"}, {"-name", "name, Z to A"}, {"score", "score, worst first"},
		{"-score", "score, best first"}, {"verdict", "verdict, blocked first"}, {"updated", "latest push first"}} {
		d.w(`<option value="%s"%s>%s</option>`, s.v, selectedAttr(s.v == f.Query.Sort), s.label)
	}
	d.w(`</select></label>`)
	d.w(`<button type="submit">Apply</button></form>` + "\n")
}

func selectedAttr(on bool) string {
	if on {
		return " selected"
	}
	return ""
}

// sortHeader is a column header whose link (a[data-sort=key]) sorts by key, or by its
// reverse when key is already the sort.
func (f *Fleet) sortHeader(d *doc, label, key, reverse string) {
	q := f.Query
	q.Page = 1
	aria := ""
	switch f.Query.Sort {
	case key:
		q.Sort = reverse
		aria = ` aria-sort="ascending"`
	case reverse:
		q.Sort = key
		aria = ` aria-sort="descending"`
	default:
		q.Sort = key
	}
	d.w(`<th scope="col"%s><a data-sort="%s" href="%s">%s</a></th>`, aria, key, href(f.Prefix, "/", q.values()), label)
}

func (f *Fleet) table(d *doc, rows []*FleetRow) {
	d.w(`<div class="table-wrap" tabindex="0"><table id="fleet"><caption class="muted">Clusters × targets: each cell the stored verdict and score</caption><thead><tr>`)
	f.sortHeader(d, "Cluster", "name", "-name")
	d.w(`<th scope="col" class="wide">Version</th>`)
	for _, t := range f.Targets {
		d.w(`<th scope="col">%s</th>`, esc(t))
	}
	f.sortHeader(d, "Score", "score", "-score")
	f.sortHeader(d, "Verdict", "verdict", "verdict")
	f.sortHeader(d, `<span class="wide">Last push</span><span class="narrow">Pushed</span>`, "updated", "updated")
	d.w("</tr></thead>\n<tbody>\n")
	for _, r := range rows {
		f.row(d, r)
	}
	d.w("</tbody></table></div>\n")
	if len(rows) == 0 {
		d.w(`<p class="muted">No cluster matches.</p>` + "\n")
	}
}

func (f *Fleet) row(d *doc, r *FleetRow) {
	behind := ""
	if len(r.Behind) > 0 {
		behind = ` data-behind="` + esc(strings.Join(r.Behind, " ")) + `"`
	}
	name := esc(r.Name)
	d.w(`<tr data-cluster="%s"%s><th scope="row" class="name"><a href="%s/clusters/%d">%s</a>`, name, behind, esc(f.Prefix), r.ID, name)
	if r.Stale {
		d.w(` <span class="flag">stale</span>`)
	}
	if len(r.Behind) > 0 {
		d.w(` <span class="flag" title="bundles behind the server's: %s">bundles behind</span>`, esc(strings.Join(r.Behind, ", ")))
	}
	d.w(`</th><td class="wide">%s</td>`, esc(r.ServerVersion))
	for _, c := range r.Cells {
		f.cell(d, c)
	}
	focus := r.focus(f.Query.Target)
	score := "–"
	if focus.Verdict != "" && focus.Verdict != statusNA {
		score = strconv.Itoa(focus.Score)
	}
	// data-label names a cell where a phone lays the row out as a card, without the headers.
	d.w(`<td data-label="Score">%s</td><td data-label="Verdict">%s</td><td data-label="Last push"><time datetime="%s">%s</time></td></tr>`+"\n", score, verdict(r.status(f.Query.Target)),
		r.LastSeen.UTC().Format(time.RFC3339), r.LastSeen.UTC().Format("2006-01-02 15:04"))
}

func (f *Fleet) cell(d *doc, c FleetCell) {
	v := c.Verdict
	switch v {
	case "":
		d.w(`<td data-target="%s" data-verdict="none">%s</td>`, esc(c.Target), verdict(""))
	case statusNA:
		d.w(`<td data-target="%s" data-verdict="n/a">%s</td>`, esc(c.Target), verdict(statusNA))
	default:
		out := ""
		if c.Outdated {
			out = ` <span class="flag" title="judged with other bundles, of an older snapshot, or on an earlier day">outdated</span>`
		}
		d.w(`<td data-target="%s" data-verdict="%s">%s %d%s</td>`, esc(c.Target), esc(v), verdict(v), c.Score, out)
	}
}

func (f *Fleet) pager(d *doc, from, to, total int) {
	d.w(`<nav class="pager" aria-label="Pages">`)
	if f.Query.Page > 1 {
		q := f.Query
		q.Page--
		d.w(`<a id="prev-page" href="%s">Previous %d</a>`, href(f.Prefix, "/", q.values()), PageSize)
	}
	info := "0 of 0"
	if total > 0 && to > from {
		info = fmt.Sprintf("%s–%s of %s", thousands(from+1), thousands(to), thousands(total))
	} else if total > 0 {
		info = fmt.Sprintf("past the last page; %s clusters", thousands(total))
	}
	d.w(`<span id="page-info">%s</span>`, info)
	if to < total {
		q := f.Query
		q.Page++
		d.w(`<a id="next-page" href="%s">Next %d</a>`, href(f.Prefix, "/", q.values()), PageSize)
	}
	d.w("</nav>\n")
}
