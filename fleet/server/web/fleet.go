package web

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// PageSize is how many clusters one fleet page lists.
const PageSize = 100

// Where a cluster stands at the page's target: each cluster is counted in exactly one of
// the first five; "stale" counts beside them.
const (
	StatusReady   = "ready"
	StatusBlocked = "blocked"
	StatusUnknown = "unknown"
	// StatusAlready is a cluster that runs the target or a later minor.
	StatusAlready = "already-there"
	// StatusNone is a cluster not evaluated there: nothing stored, or no version to go by.
	StatusNone  = "none"
	StatusStale = "stale"
	statusNA    = "n/a"
)

// ViewMatrix is the fleet page's optional view: one column per target.
const ViewMatrix = "matrix"

var (
	fleetStatuses = []string{"", StatusReady, StatusBlocked, StatusUnknown, StatusAlready, StatusNone, StatusStale}
	fleetSorts    = []string{"name", "-name", "score", "-score", "verdict", "updated", "blockers"}
	// standings are the five buckets every cluster is counted in, with their labels.
	standings = []struct{ key, label string }{{StatusReady, "ready"}, {StatusBlocked, "blocked"},
		{StatusUnknown, "unknown"}, {StatusAlready, "already there"}, {StatusNone, "not evaluated"}}
)

// FleetQuery is the fleet page's URL: q (a substring of the cluster name, any case),
// verdict (a status), sort, target (the minor the page judges at; "" is each cluster's
// next minor), view ("" one target, or ViewMatrix) and page (from 1).
type FleetQuery struct {
	Q, Verdict, Sort, Target, View string
	Page                           int
}

// ParseFleetQuery reads and checks the fleet page's parameters; the error names the
// parameter and what it accepts.
func ParseFleetQuery(v url.Values) (FleetQuery, error) {
	q := FleetQuery{Q: strings.TrimSpace(v.Get("q")), Verdict: v.Get("verdict"), Sort: v.Get("sort"), Target: v.Get("target"),
		View: v.Get("view"), Page: 1}
	if len(q.Q) > 256 {
		return q, fmt.Errorf("q: at most 256 bytes")
	}
	if !slices.Contains(fleetStatuses, q.Verdict) {
		return q, fmt.Errorf("verdict %q: want ready, blocked, unknown, already-there, none or stale", q.Verdict)
	}
	if q.View != "" && q.View != ViewMatrix {
		return q, fmt.Errorf("view %q: want matrix, or leave it out for one target", q.View)
	}
	if q.Sort == "" {
		q.Sort = "name"
	}
	if !slices.Contains(fleetSorts, q.Sort) {
		return q, fmt.Errorf("sort %q: want one of %s", q.Sort, strings.Join(fleetSorts, ", "))
	}
	var err error
	q.Page, err = parsePage(v.Get("page"))
	return q, err
}

// parsePage reads a page's ?page= (1 when absent); the error names the parameter.
func parsePage(raw string) (int, error) {
	if raw == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > 1_000_000 {
		return 1, fmt.Errorf("page %q: want a whole number from 1", raw)
	}
	return n, nil
}

// values is q as URL parameters, defaults left out.
func (q FleetQuery) values() url.Values {
	v := url.Values{"q": {q.Q}, "verdict": {q.Verdict}, "target": {q.Target}, "view": {q.View}}
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

// FleetRow is one cluster of the fleet: where it stands at the page's target (At), and
// its cells in the fleet's column order for the matrix view.
type FleetRow struct {
	ID            int64
	Name          string
	ServerVersion string
	LastSeen      time.Time
	Stale         bool
	// Behind names the bundles its agent evaluates with at another revision than the
	// server's ("name@revision").
	Behind []string
	At     Standing
	Cells  []FleetCell
}

// Standing is a cluster at the page's target.
type Standing struct {
	// Target is the minor judged: the page's, or the cluster's next minor ("" when its
	// version is unknown).
	Target string
	// Status is one of the five standings (StatusReady … StatusNone).
	Status   string
	Score    int
	Outdated bool
	Blockers int
	// Top is the highest-ranked blocker (severity, then objects, then key); zero when none
	// or its report could not be read.
	Top TopFinding
	// Cause is, for an unknown verdict, what was not assessed, briefly ("60 probes of kb");
	// the cluster page's gaps say it in full.
	Cause string
	// Teams own its blockers ("(unattributed)", last: a blocker no team owns), or, with
	// none, the teams with namespaces in the cluster; sorted.
	Teams []string
}

// TopFinding names a finding by key and title.
type TopFinding struct{ Key, Title string }

// status is where the row stands at the page's target.
func (r *FleetRow) status() string { return r.At.Status }

// scored answers whether the row has a score at the page's target. An unknown verdict's
// score counts only what was assessed (100 when nothing was): shown or sorted as a number
// it would read as ready, so it has none, as on the cluster page.
func (r *FleetRow) scored() bool { return decided(r.At.Status) }

// decided answers whether a verdict is one a score means something for: ready or blocked.
func decided(verdict string) bool { return verdict == StatusReady || verdict == StatusBlocked }

// Fleet is the fleet page's data: every cluster the reader sees and the fleet's columns.
type Fleet struct {
	Frame
	Targets []string
	Rows    []FleetRow
	Query   FleetQuery
}

// TargetMenu is the targets a "Judge at" control offers: the fleet's columns and, when the
// page asks for another minor, that one too, so the control shows what the address says
// (and not "each cluster's next minor"). Every page takes any minor (targetQuery): one the
// fleet has no column for reads as not evaluated, with offTarget saying why.
func TargetMenu(columns []string, target string) []string {
	if target == "" || slices.Contains(columns, target) {
		return columns
	}
	return inventory.SortMinors(append(slices.Clone(columns), target))
}

// targetOptions writes the options of a "Judge at" select: each cluster's next minor, then
// TargetMenu's targets.
func targetOptions(d *doc, columns []string, target string) {
	d.w(`<option value=""%s>each cluster's next minor</option>`, selectedAttr(target == ""))
	for _, t := range TargetMenu(columns, target) {
		d.w(`<option value="%s"%s>Kubernetes %s</option>`, esc(t), selectedAttr(t == target), esc(t))
	}
}

// offTarget says, for a target the fleet has no column for, that no cluster is evaluated
// there and which minors are.
func offTarget(d *doc, columns []string, target string) {
	if target == "" || slices.Contains(columns, target) {
		return
	}
	among := "none yet"
	if len(columns) > 0 {
		among = esc(strings.Join(columns, ", "))
	}
	d.w(`<p id="off-target" class="banner" role="status">Kubernetes %s is not a target this fleet evaluates (%s): no cluster has an evaluation there, so each is counted where it stands without one.</p>`+"\n", esc(target), among)
}

// counts is how many of the clusters q's name keeps stand where at the page's target, and
// how many there are: each count's link keeps q, so it lists as many rows as the count
// says, and the five standings sum to the clusters named (stale counts beside them).
func (f *Fleet) counts() (map[string]int, int) {
	out, named := map[string]int{}, 0
	for i := range f.Rows {
		r := &f.Rows[i]
		if !f.named(r) {
			continue
		}
		named++
		out[r.status()]++
		if r.Stale {
			out[StatusStale]++
		}
	}
	return out, named
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
			if r.status() != f.Query.Verdict {
				continue
			}
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, f.order())
	return out
}

// statusRank orders standings worst first for sort=verdict.
var statusRank = map[string]int{StatusBlocked: 0, StatusUnknown: 1, StatusNone: 2, StatusReady: 3, StatusAlready: 4}

// order is the query's sort; ties fall back to the name, so a page is always the same.
func (f *Fleet) order() func(a, b *FleetRow) int {
	// Clusters without a score sort after every score, both ways.
	scored := func(r *FleetRow) (int, bool) { return r.At.Score, r.scored() }
	byScore := func(a, b *FleetRow, desc bool) int {
		sa, oka := scored(a)
		sb, okb := scored(b)
		if oka != okb {
			if oka {
				return -1
			}
			return 1
		}
		if !oka { // neither has a score: an unknown one's number must not order it
			return 0
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
		key = func(a, b *FleetRow) int { return cmp.Compare(statusRank[a.status()], statusRank[b.status()]) }
	case "blockers":
		key = func(a, b *FleetRow) int { return cmp.Compare(b.At.Blockers, a.At.Blockers) }
	case "updated":
		key = func(a, b *FleetRow) int { return b.LastSeen.Compare(a.LastSeen) }
	default:
		key = func(*FleetRow, *FleetRow) int { return 0 }
	}
	return func(a, b *FleetRow) int { return cmp.Or(key(a, b), cmp.Compare(a.Name, b.Name)) }
}

// RenderFleet writes the fleet fragment: the counts at the target, controls, one page of
// clusters at the target (or, with view=matrix, at every target).
func RenderFleet(f *Fleet) []byte {
	var d doc
	d.Grow(64 << 10)
	d.banner(f.Frame)
	d.w("<h1>Fleet</h1>\n")
	f.summary(&d)
	f.controls(&d)
	offTarget(&d, f.Targets, f.Query.Target)
	rows := f.selected()
	from := min((f.Query.Page-1)*PageSize, len(rows))
	to := min(from+PageSize, len(rows))
	if f.Query.View == ViewMatrix {
		f.matrix(&d, rows[from:to])
	} else {
		f.table(&d, rows[from:to])
	}
	f.pager(&d, from, to, len(rows))
	return []byte(d.String())
}

// at names the page's target for a heading.
func (f *Fleet) at() string {
	if f.Query.Target == "" {
		return "each cluster's next minor"
	}
	return "Kubernetes " + esc(f.Query.Target)
}

// eachAt names the page's target after "Each cluster at".
func (f *Fleet) eachAt() string {
	if f.Query.Target == "" {
		return "its next minor"
	}
	return f.at()
}

func (f *Fleet) summary(d *doc) {
	counts, named := f.counts()
	at := f.at()
	if f.Query.Q != "" {
		at += " of the clusters matching “" + esc(f.Query.Q) + "”"
	}
	d.w(`<section id="summary" aria-labelledby="summary-h"><h2 id="summary-h">Summary at %s</h2>`, at)
	d.w(`<p id="summary-total" class="muted" data-total="%d">%s, each counted once:</p><div class="summary">`, named, plural(named, "cluster"))
	for _, s := range standings {
		q := f.Query
		q.Verdict, q.Page = s.key, 1
		cls := "v-" + s.key
		if s.key == StatusAlready || s.key == StatusNone {
			cls = "v-none"
		}
		d.w(`<a data-count="%s" class="%s" href="%s">%s %s</a>`, s.key, cls, href(f.Prefix, "/", q.values()), thousands(counts[s.key]), s.label)
	}
	q := f.Query
	q.Verdict, q.Page = StatusStale, 1
	d.w(`</div><p class="muted">Of them <a data-count="stale" class="v-none" href="%s">%s stale</a> (no push for a while; counted above by where they stand). `,
		href(f.Prefix, "/", q.values()), thousands(counts[StatusStale]))
	// the findings page has no name search: its link names the whole fleet, not q's clusters
	fq := url.Values{"target": {f.Query.Target}}
	d.w(`<a id="findings-link" href="%s">What blocks them: the fleet's findings at %s</a>.</p></section>`+"\n", href(f.Prefix, "/findings", fq), f.at())
}

func (f *Fleet) controls(d *doc) {
	d.w(`<form id="fleet-controls" class="controls" method="get" action="%s/" role="search" aria-label="Filter clusters">`, esc(f.Prefix))
	if f.Query.View != "" {
		d.w(`<input type="hidden" name="view" value="%s">`, esc(f.Query.View))
	}
	d.w(`<label for="q">Cluster name<input id="q" name="q" type="search" value="%s" autocomplete="off"></label>`, esc(f.Query.Q))
	d.w(`<label for="verdict-filter">Show<select id="verdict-filter" name="verdict"><option value=""%s>all clusters</option>`, selectedAttr(f.Query.Verdict == ""))
	for _, s := range append(standings, struct{ key, label string }{StatusStale, "stale"}) {
		d.w(`<option value="%s"%s>%s</option>`, s.key, selectedAttr(s.key == f.Query.Verdict), s.label)
	}
	d.w(`</select></label>`)
	d.w(`<label for="target">Judge at<select id="target" name="target">`)
	targetOptions(d, f.Targets, f.Query.Target)
	d.w(`</select></label>`)
	d.w(`<label for="sort">Sort by<select id="sort" name="sort">`)
	for _, s := range []struct{ v, label string }{{"name", "name"}, {"-name", "name, Z to A"}, {"verdict", "verdict, blocked first"},
		{"blockers", "blockers, most first"}, {"score", "score, worst first"}, {"-score", "score, best first"}, {"updated", "latest push first"}} {
		d.w(`<option value="%s"%s>%s</option>`, s.v, selectedAttr(s.v == f.Query.Sort), s.label)
	}
	d.w(`</select></label>`)
	d.w(`<button type="submit">Apply</button></form>` + "\n")
	other := f.Query
	other.Page = 1
	if f.Query.View == ViewMatrix {
		other.View = ""
		d.w(`<p><a id="view-link" href="%s">One target: verdict, blockers and owners at %s</a></p>`+"\n", href(f.Prefix, "/", other.values()), f.at())
	} else {
		other.View = ViewMatrix
		d.w(`<p><a id="view-link" href="%s">Per-minor matrix: every cluster at every target</a></p>`+"\n", href(f.Prefix, "/", other.values()))
	}
}

func selectedAttr(on bool) string {
	if on {
		return " selected"
	}
	return ""
}

// sortHeader is a column header whose link (a[data-sort=key]) sorts by key, or by its
// reverse when key is already the sort.
func (f *Fleet) sortHeader(d *doc, class, label, key, reverse string) {
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
	if class != "" {
		class = ` class="` + class + `"`
	}
	d.w(`<th scope="col"%s%s><a data-sort="%s" href="%s">%s</a></th>`, class, aria, key, href(f.Prefix, "/", q.values()), label)
}

// table is the fleet at the page's target: one row a cluster, its name kept in view
// (position: sticky) when the table scrolls sideways on a narrow screen.
func (f *Fleet) table(d *doc, rows []*FleetRow) {
	d.w(`<div class="table-wrap" tabindex="0" role="region" aria-label="Clusters at %s"><table id="fleet" class="at-target"><caption class="muted">Each cluster at %s: where it stands, its blockers, the top one and the teams that own them</caption><thead><tr>`, f.at(), f.eachAt())
	f.sortHeader(d, "name", "Cluster", "name", "-name")
	d.w(`<th scope="col">Version</th>`)
	f.sortHeader(d, "", "Verdict", "verdict", "verdict")
	f.sortHeader(d, "num", "Blockers", "blockers", "blockers")
	d.w(`<th scope="col" class="top">Top blocker</th><th scope="col">Owning teams</th>`)
	f.sortHeader(d, "", "Last push", "updated", "updated")
	d.w("</tr></thead>\n<tbody>\n")
	for _, r := range rows {
		f.row(d, r)
	}
	d.w("</tbody></table></div>\n")
	if len(rows) == 0 {
		d.w(`<p class="muted">No cluster matches.</p>` + "\n")
	}
}

// nameCell is a row's sticky header cell: the cluster's name, linked, and its flags.
func (f *Fleet) nameCell(d *doc, r *FleetRow, target string) {
	behind := ""
	if len(r.Behind) > 0 {
		behind = ` data-behind="` + esc(strings.Join(r.Behind, " ")) + `"`
	}
	name := esc(r.Name)
	link := href(f.Prefix, fmt.Sprintf("/clusters/%d", r.ID), url.Values{"target": {target}})
	d.w(`<tr data-cluster="%s" data-status="%s"%s><th scope="row" class="name"><a href="%s">%s</a>`, name, esc(r.status()), behind, link, name)
	if r.Stale {
		d.w(` <span class="flag">stale</span>`)
	}
	if len(r.Behind) > 0 {
		d.w(` <span class="flag" title="bundles behind the server's: %s">bundles behind</span>`, esc(strings.Join(r.Behind, ", ")))
	}
	d.w(`</th>`)
}

func (f *Fleet) row(d *doc, r *FleetRow) {
	at := r.At
	target := at.Target
	if at.Status == StatusAlready { // the cluster page refuses a target already reached
		target = ""
	}
	f.nameCell(d, r, target)
	d.w(`<td>%s</td><td data-label="Verdict">%s</td>`, esc(r.ServerVersion), f.standing(at))
	if at.Status == StatusReady || at.Status == StatusBlocked || at.Status == StatusUnknown {
		d.w(`<td class="num" data-label="Blockers">%d</td>`, at.Blockers)
	} else {
		d.w(`<td class="num" data-label="Blockers">–</td>`)
	}
	d.w(`<td class="top" data-label="Top blocker">`)
	f.topCell(d, r)
	d.w(`</td><td data-label="Owning teams">%s</td>`, teamList(at.Teams))
	d.w(`<td data-label="Last push"><time datetime="%s">%s</time></td></tr>`+"\n",
		r.LastSeen.UTC().Format(time.RFC3339), r.LastSeen.UTC().Format("2006-01-02 15:04"))
}

// topCell is a row's top blocker, linked to it on the cluster page; for an unknown verdict
// first its cause, linked to the cluster page's gaps: an empty cell would hide why.
func (f *Fleet) topCell(d *doc, r *FleetRow) {
	at := r.At
	if at.Status == StatusUnknown && at.Cause != "" {
		link := href(f.Prefix, fmt.Sprintf("/clusters/%d", r.ID), url.Values{"target": {at.Target}}) + "#gaps"
		d.w(`<a class="cause" href="%s">not assessed: %s</a>`, link, esc(at.Cause))
		if at.Top.Key != "" {
			d.w(`<br>`)
		}
	}
	if at.Top.Key != "" {
		link := href(f.Prefix, fmt.Sprintf("/clusters/%d", r.ID), url.Values{"target": {at.Target}, "finding": {at.Top.Key}})
		d.w(`<a href="%s" data-key="%s">%s</a>`, link, esc(at.Top.Key), esc(at.Top.Title))
	} else if at.Blockers > 0 {
		d.w(`<span class="muted">not read</span>`)
	}
}

// maxTeamsShown is how many owning teams a row names before "and N more".
const maxTeamsShown = 4

// teamList names teams, the first maxTeamsShown of them and the rest behind "and N more".
func teamList(teams []string) string {
	if len(teams) == 0 {
		return `<span class="muted">–</span>`
	}
	names := func(teams []string) string {
		out := make([]string, 0, len(teams))
		for _, t := range teams {
			if t == "(unattributed)" {
				out = append(out, `<span class="team muted">no team</span>`)
			} else {
				out = append(out, `<span class="team">`+esc(t)+`</span>`)
			}
		}
		return strings.Join(out, ", ")
	}
	if len(teams) <= maxTeamsShown {
		return names(teams)
	}
	// The rest fold into a details anyone can open (a title shows only to a mouse).
	return fmt.Sprintf(`%s <details class="more"><summary>and %d more</summary>%s</details>`,
		names(teams[:maxTeamsShown]), len(teams)-maxTeamsShown, names(teams[maxTeamsShown:]))
}

// standing is where a cluster stands as a word: a verdict (with its score when it is
// decided) or why there is none.
func (f *Fleet) standing(at Standing) string {
	out := ""
	switch at.Status {
	case StatusAlready:
		return `<span class="v v-na">already there</span>`
	case StatusNone:
		return `<span class="v v-none">not evaluated</span>`
	case StatusReady, StatusBlocked:
		out = fmt.Sprintf(`%s <span class="score">%d</span>`, verdict(at.Status), at.Score)
	default:
		out = verdict(at.Status)
	}
	if f.Query.Target == "" && at.Target != "" {
		out += ` <span class="muted">at ` + esc(at.Target) + `</span>`
	}
	if at.Outdated {
		out += ` <span class="flag" title="judged with other bundles, of an older snapshot, or on an earlier day">outdated</span>`
	}
	return out
}

// matrix is the optional per-minor view: every cluster at every target of the fleet.
func (f *Fleet) matrix(d *doc, rows []*FleetRow) {
	d.w(`<div class="table-wrap" tabindex="0" role="region" aria-label="Clusters × targets"><table id="fleet" class="matrix"><caption class="muted">Clusters × targets: each cell the stored verdict and score</caption><thead><tr>`)
	f.sortHeader(d, "name", "Cluster", "name", "-name")
	d.w(`<th scope="col">Version</th>`)
	for _, t := range f.Targets {
		d.w(`<th scope="col">%s</th>`, esc(t))
	}
	f.sortHeader(d, "", "Score", "score", "-score")
	f.sortHeader(d, "", "Verdict", "verdict", "verdict")
	f.sortHeader(d, "", "Last push", "updated", "updated")
	d.w("</tr></thead>\n<tbody>\n")
	for _, r := range rows {
		f.nameCell(d, r, "")
		d.w(`<td>%s</td>`, esc(r.ServerVersion))
		for _, c := range r.Cells {
			f.cell(d, c)
		}
		score := "–"
		switch {
		case r.scored():
			score = strconv.Itoa(r.At.Score)
		case r.At.Status == StatusUnknown:
			score = scoreText(StatusUnknown, r.At.Score)
		}
		d.w(`<td data-label="Score">%s</td><td data-label="Verdict">%s</td><td data-label="Last push"><time datetime="%s">%s</time></td></tr>`+"\n",
			score, f.standing(r.At), r.LastSeen.UTC().Format(time.RFC3339), r.LastSeen.UTC().Format("2006-01-02 15:04"))
	}
	d.w("</tbody></table></div>\n")
	if len(rows) == 0 {
		d.w(`<p class="muted">No cluster matches.</p>` + "\n")
	}
}

func (f *Fleet) cell(d *doc, c FleetCell) {
	v := c.Verdict
	switch v {
	case "":
		d.w(`<td data-target="%s" data-verdict="none">%s</td>`, esc(c.Target), verdict(""))
	case statusNA:
		d.w(`<td data-target="%s" data-verdict="n/a">%s</td>`, esc(c.Target), verdict(statusNA))
	default:
		out := verdict(v)
		if decided(v) { // any other verdict reads unknown and has no score (scored)
			out += " " + strconv.Itoa(c.Score)
		}
		if c.Outdated {
			out += ` <span class="flag" title="judged with other bundles, of an older snapshot, or on an earlier day">outdated</span>`
		}
		d.w(`<td data-target="%s" data-verdict="%s">%s</td>`, esc(c.Target), esc(v), out)
	}
}

func (f *Fleet) pager(d *doc, from, to, total int) {
	pager{prefix: f.Prefix, path: "/", page: f.Query.Page, size: PageSize, noun: "cluster", at: func(n int) url.Values {
		q := f.Query
		q.Page = n
		return q.values()
	}}.write(d, from, to, total)
}

// pager is a list page's pager: page of size rows, at(n) page n's query.
type pager struct {
	prefix, path, noun string
	page, size         int
	at                 func(n int) url.Values
}

func (p pager) write(d *doc, from, to, total int) {
	d.w(`<nav class="pager" aria-label="Pages">`)
	last := max(1, (total+p.size-1)/p.size)
	if p.page > last {
		// A page past the last says so and links the last, never "Previous" to another empty page.
		d.w(`<span id="page-info">Page %s is past the last page, page %s (%s)</span> <a id="last-page" href="%s">Go to the last page</a></nav>`+"\n",
			thousands(p.page), thousands(last), plural(total, p.noun), href(p.prefix, p.path, p.at(last)))
		return
	}
	if p.page > 1 {
		d.w(`<a id="prev-page" href="%s">Previous %d</a>`, href(p.prefix, p.path, p.at(p.page-1)), p.size)
	}
	info := "0 of 0"
	if total > 0 {
		info = fmt.Sprintf("%s–%s of %s", thousands(from+1), thousands(to), thousands(total))
	}
	d.w(`<span id="page-info">%s</span>`, info)
	if to < total {
		d.w(`<a id="next-page" href="%s">Next %d</a>`, href(p.prefix, p.path, p.at(p.page+1)), p.size)
	}
	d.w("</nav>\n")
}
