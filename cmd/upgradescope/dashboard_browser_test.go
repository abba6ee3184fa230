package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/upgradescope/upgradescope/internal/testenv/browsertest"
)

// The dashboard as a person uses it, in Debian's headless Chromium against a real serve whose
// fleet came in through ingest (dashboard_fleet_test.go). Every view is checked with axe-core;
// a page that throws, trips its own CSP or asks another origin for anything fails the test
// (internal/browsertest). UPGRADESCOPE_SCREENSHOTS_DIR=$PWD/docs/dashboard writes the
// documentation's pictures (docs/dashboard.md).

// desktop is a release manager's monitor window, the width issue 34 was tried at.
var desktop = browsertest.Viewport{Name: "desktop", Width: 1440, Height: 900}

var viewports = []browsertest.Viewport{desktop, browsertest.Phone}

// signIn loads path, which must ask for a token, and gives it token; ready is what the view
// shows once the token is accepted.
func signIn(t *testing.T, p *browsertest.Page, path, token string, remember bool, ready string) {
	t.Helper()
	p.Visit(path)
	p.WaitVisible("the token prompt", "form#token-form")
	if typ := p.Attrs("#token-input", "type"); len(typ) != 1 || typ[0] != "password" {
		t.Errorf("the token input's type is %v, want password", typ)
	}
	p.Do("type the token", chromedp.SendKeys(chromedp.CSS("#token-input"), token))
	if remember {
		p.Do("tick remember", chromedp.Click(chromedp.CSS("#token-remember")))
	}
	p.Follow("submit the token", chromedp.Click(chromedp.CSS("button#token-submit")), ready)
}

// typeAndEnter replaces what the text field sel holds with text and presses Enter.
func typeAndEnter(sel, text string) chromedp.Action[chromedp.Void] {
	clear := chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).value = ""`, sel))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		if v, err := clear(ctx, t); err != nil {
			return v, err
		}
		return chromedp.SendKeys(chromedp.CSS(sel), text+kb.Enter)(ctx, t)
	}
}

// query answers the page's query parameters.
func query(t *testing.T, p *browsertest.Page) url.Values {
	t.Helper()
	u, err := url.Parse(p.Path())
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// fleetRows answers the clusters the fleet table lists, in order.
func fleetRows(p *browsertest.Page) []string {
	return p.Attrs("table#fleet tr[data-cluster]", "data-cluster")
}

// noScriptRan fails when the hostile object name ran as markup anywhere.
func noScriptRan(t *testing.T, p *browsertest.Page) {
	t.Helper()
	if browsertest.Eval[bool](p, `window.__pwned !== undefined`) {
		t.Error("the hostile object name ran as a script")
	}
}

// TestDashboardInABrowser runs the browser tests against one fleet: they only read it, and a
// fleet takes a serve and five pushes to fill.
func TestDashboardInABrowser(t *testing.T) {
	browsertest.Paths(t) // skips (or fails under UPGRADESCOPE_REQUIRE_BROWSER) before the fleet is built
	f := startDashFleet(t, "")
	for _, tt := range []struct {
		name string
		test func(*testing.T, *dashFleet)
	}{
		{"a release manager picks a target and reads who must act", releaseManagerPicksATarget},
		{"the fleet is filtered and sorted and the address keeps it", fleetIsFilteredAndSorted},
		{"the per-minor matrix shows an unknown verdict without a score", matrixShowsUnknownWithoutAScore},
		{"the fleet sorts by name and score", fleetSortsByNameAndScore},
		{"a cluster shows its findings and filters them", clusterShowsItsFindings},
		{"an unknown cluster opens with its cause", unknownClusterOpensWithItsCause},
		{"a deep link opens and scrolls to the finding", deepLinkOpensTheFinding},
		{"a token is asked for and a team token sees its teams only", teamTokenSeesItsTeamsOnly},
		{"a token is remembered only when asked and forgotten", tokenIsRememberedOnlyWhenAsked},
		{"teams roll up and knowledge is searchable", teamsRollUpAndKnowledgeIsSearchable},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.test(t, f) })
	}
}

// The fleet at 1.37: the summary, one row per cluster with where it stands, search,
// verdict filter and sort kept in the address and through a reload and the back button.
func fleetIsFilteredAndSorted(t *testing.T, f *dashFleet) {
	for _, vp := range viewports {
		t.Run(vp.Name, func(t *testing.T) {
			p := browsertest.Start(t, f.origin).Open(vp)
			signIn(t, p, "/?target=1.37", dashReadToken, false, "table#fleet")
			p.Accessible("fleet")

			if got, want := fleetRows(p), []string{"checkout-us-1", "clean-1", longCluster, "prod-eu-1", "unknown-1"}; !slices.Equal(got, want) {
				t.Errorf("fleet rows %v, want every cluster by name %v", got, want)
			}
			// at 1.37 every cluster has an evaluation: clean-1 ready, unknown-1 unknown, the rest blocked
			for kind, want := range map[string]int{"ready": 1, "blocked": 3, "unknown": 1, "already-there": 0, "none": 0, "stale": 0} {
				text := p.Text(`section#summary [data-count="` + kind + `"]`)
				if !strings.ContainsAny(text, "0123456789") || firstNumber(t, text) != want {
					t.Errorf("the summary's %s count reads %q, want %d", kind, text, want)
				}
			}
			for name, want := range map[string]struct{ status, text string }{
				"prod-eu-1": {"blocked", "blocked 50"}, "clean-1": {"ready", "ready 100"}, "unknown-1": {"unknown", "unknown"},
			} {
				row := fmt.Sprintf(`tr[data-cluster=%q]`, name)
				if v := p.Attrs(row, "data-status"); !slices.Equal(v, []string{want.status}) {
					t.Errorf("%s at 1.37: data-status %v, want %s", name, v, want.status)
				}
				if text := p.Text(row + ` td[data-label="Verdict"]`); text != want.text {
					t.Errorf("%s at 1.37 reads %q, want %q", name, text, want.text)
				}
			}
			if vp.Mobile {
				if wide := p.Overflow(); len(wide) > 0 {
					t.Errorf("on a phone the fleet page scrolls sideways; too wide: %v", wide)
				}
			}

			p.Follow("filter blocked", browsertest.SubmitWith("select#verdict-filter", "blocked"), "table#fleet")
			if q := query(t, p); q.Get("verdict") != "blocked" || q.Get("target") != "1.37" {
				t.Errorf("after filtering the address is %s, want verdict=blocked and target=1.37", p.Path())
			}
			if got, want := fleetRows(p), []string{"checkout-us-1", longCluster, "prod-eu-1"}; !slices.Equal(got, want) {
				t.Errorf("blocked clusters %v, want %v", got, want)
			}
			p.Follow("search prod-eu", typeAndEnter("input#q", "prod-eu"), "table#fleet")
			if q := query(t, p); q.Get("q") != "prod-eu" || q.Get("verdict") != "blocked" {
				t.Errorf("after searching the address is %s, want q=prod-eu and verdict=blocked", p.Path())
			}
			if got := fleetRows(p); !slices.Equal(got, []string{"prod-eu-1"}) {
				t.Errorf("blocked clusters named like prod-eu: %v, want prod-eu-1", got)
			}
			p.Publish("fleet-filtered")
			p.Reload("table#fleet")
			if got := fleetRows(p); !slices.Equal(got, []string{"prod-eu-1"}) || query(t, p).Get("q") != "prod-eu" {
				t.Errorf("after a reload: rows %v at %s, want the same filtered view", got, p.Path())
			}
			p.Do("back", chromedp.NavigateBack())
			p.WaitFor("back to the blocked filter", "table#fleet")
			pollRows(t, p, []string{"checkout-us-1", longCluster, "prod-eu-1"}, "back to verdict=blocked")
		})
	}
}

// The per-minor matrix: one column per target; an unknown verdict's score counts only what
// was assessed, so neither its cell nor the score column shows it as a number.
func matrixShowsUnknownWithoutAScore(t *testing.T, f *dashFleet) {
	p := browsertest.Start(t, f.origin).Open(desktop)
	signIn(t, p, "/?target=1.37&view=matrix", dashReadToken, false, "table#fleet.matrix")
	p.Accessible("matrix")
	p.Publish("fleet-matrix")
	cell := `tr[data-cluster="prod-eu-1"] td[data-target="1.37"]`
	if text := p.Text(cell); !strings.Contains(text, "blocked") || !strings.Contains(text, "50") {
		t.Errorf("prod-eu-1 at 1.37 reads %q, want the word blocked and the score 50", text)
	}
	if text := p.Text(`tr[data-cluster="unknown-1"] td[data-target="1.37"]`); text != "unknown" {
		t.Errorf("unknown-1 at 1.37 reads %q, want the word unknown and no score", text)
	}
	if text := p.Text(`tr[data-cluster="unknown-1"] td[data-label="Score"]`); text != "n/a (not assessed)" {
		t.Errorf("unknown-1's score reads %q, want n/a (not assessed)", text)
	}
	p.Follow("back to one target", chromedp.Click(chromedp.CSS("a#view-link")), "table#fleet.at-target")
	if q := query(t, p); q.Get("view") != "" || q.Get("target") != "1.37" {
		t.Errorf("one target from the matrix is %s, want the target kept and no view", p.Path())
	}
}

// pickOption chooses value in the select sel as a person does: the page follows the change.
func pickOption(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const e = document.querySelector(%q);
		e.value = %q;
		e.dispatchEvent(new Event("change", {bubbles: true}));
	})()`, sel, value))
}

// fitsSideways fails when the page scrolls sideways, or, at a desktop width, when the fleet
// or findings table scrolls inside its frame.
func fitsSideways(t *testing.T, p *browsertest.Page, vp browsertest.Viewport, page string) {
	t.Helper()
	if w := browsertest.Eval[[]int](p, `[document.documentElement.scrollWidth, document.documentElement.clientWidth]`); w[0] > w[1] {
		t.Errorf("the %s page is %d px wide in a %d px window: it scrolls sideways; too wide: %v", page, w[0], w[1], p.Overflow())
	}
	if vp.Mobile { // a phone scrolls the table in its frame, the name column kept in view
		return
	}
	if w := browsertest.Eval[[]int](p, `(() => { const e = document.querySelector(".table-wrap"); return [e.scrollWidth, e.clientWidth]; })()`); w[0] > w[1] {
		t.Errorf("the %s table is %d px in a %d px frame at %d px: it scrolls sideways", page, w[0], w[1], vp.Width)
	}
}

// The question as a release manager asks it: open the fleet, pick Kubernetes 1.37
// with the page's own target control, and read which clusters can move (the ready count and
// its rows), what blocks the rest (the top blocker) and who must act (the owning teams),
// without scrolling sideways; then the fleet's findings at 1.37, and their CSV downloaded
// through the page's link with the read token.
func releaseManagerPicksATarget(t *testing.T, f *dashFleet) {
	for _, vp := range viewports {
		t.Run(vp.Name, func(t *testing.T) {
			b := browsertest.Start(t, f.origin)
			downloads := b.Downloads()
			p := b.Open(vp)
			signIn(t, p, "/", dashReadToken, false, "table#fleet")
			if !p.Visible("select#target") {
				t.Fatal("the fleet page shows no target control")
			}
			if opts := p.Attrs("select#target option", "value"); len(opts) < 2 || opts[0] != "" || !slices.Contains(opts, "1.37") {
				t.Fatalf("the target control offers %v, want each cluster's next minor and the fleet's minors, 1.37 among them", opts)
			}
			p.Follow("pick 1.37", pickOption("select#target", "1.37"), `table#fleet`)
			p.WaitUntil("the fleet at 1.37", `document.querySelector("#summary-h").textContent.indexOf("Kubernetes 1.37") >= 0`, "the summary at 1.37")
			if q := query(t, p); q.Get("target") != "1.37" || q.Get("view") != "" {
				t.Errorf("after picking 1.37 the address is %s, want target=1.37 (a bookmark) and one target", p.Path())
			}
			if text := p.Text(`section#summary [data-count="ready"]`); firstNumber(t, text) != 1 {
				t.Errorf("the ready count reads %q, want 1", text)
			}
			if got := p.Attrs(`table#fleet tr[data-status="ready"]`, "data-cluster"); !slices.Equal(got, []string{"clean-1"}) {
				t.Errorf("the clusters that can move to 1.37 are %v, want clean-1", got)
			}
			for name, owners := range map[string][]string{"prod-eu-1": {"payments", "no team"}, "checkout-us-1": {"checkout"}, longCluster: {"no team"}} {
				row := fmt.Sprintf(`table#fleet tr[data-cluster=%q][data-status="blocked"]`, name)
				if p.Count(row) != 1 {
					t.Errorf("%s is not listed blocked at 1.37", name)
					continue
				}
				if top := p.Text(row + ` td[data-label="Top blocker"] a[data-key]`); top == "" {
					t.Errorf("%s names no top blocker", name)
				}
				teams := p.Text(row + ` td[data-label="Owning teams"]`)
				for _, owner := range owners {
					if !strings.Contains(teams, owner) {
						t.Errorf("%s's owning teams read %q, want %s among them", name, teams, owner)
					}
				}
			}
			fitsSideways(t, p, vp, "fleet")
			p.Accessible("fleet at 1.37")
			p.Publish("fleet")

			p.Follow("the fleet's findings", chromedp.Click(chromedp.CSS("a#findings-link")), "table#findings")
			if u := p.Path(); !strings.HasPrefix(u, "/findings?") || query(t, p).Get("target") != "1.37" {
				t.Errorf("the fleet's findings link led to %s, want /findings at target=1.37", u)
			}
			ingress := `table#findings tr[data-key*="Ingress" i]`
			if clusters := p.Attrs(ingress+` a.cluster`, "data-cluster"); len(clusters) < 2 || !slices.Contains(clusters, "prod-eu-1") {
				t.Errorf("the Ingress finding lists clusters %v, want prod-eu-1 among several", clusters)
			}
			// who must act: the teams owning it, and "no team" where a cluster's objects of it are in no team's namespaces
			for key, owners := range map[string][]string{"Ingress": {"checkout", "payments", "no team"}, "PodSecurityPolicy": {"no team"}} {
				teams := p.Text(fmt.Sprintf(`table#findings tr[data-key*=%q i] td[data-label="Teams"]`, key))
				for _, owner := range owners {
					if !strings.Contains(teams, owner) {
						t.Errorf("the %s finding's teams read %q, want %s among them", key, teams, owner)
					}
				}
			}
			fitsSideways(t, p, vp, "findings")
			p.Accessible("findings at 1.37")
			p.Publish("findings")
			downloadsTheFindingsCSV(t, b, p, downloads)
		})
	}
}

// downloadsTheFindingsCSV clicks the findings page's CSV link and reads the file the browser
// saved: fetched with the read token (a bare link would answer 401), one row per finding and
// cluster under the API's header.
func downloadsTheFindingsCSV(t *testing.T, b *browsertest.Browser, p *browsertest.Page, dir string) {
	t.Helper()
	from := len(p.Requests())
	p.Do("download the CSV", chromedp.Click(chromedp.CSS(`a#findings-csv[data-export="csv"]`)))
	p.WaitRequest("the CSV is fetched", from, "/api/v1/fleet/findings?")
	p.WaitUntil("the CSV is downloaded", `/^Download(ed|.*failed)/.test(document.querySelector("#export-status").textContent)`, "a word on the download")
	status := p.Text("#export-status")
	m := regexp.MustCompile(`^Downloaded (upgradescope-fleet-findings-[^ ]+\.csv) \(`).FindStringSubmatch(status)
	if m == nil {
		t.Fatalf("the CSV link says %q, want Downloaded upgradescope-fleet-findings-….csv", status)
	}
	lines := strings.Split(strings.TrimSpace(string(b.Downloaded(dir, m[1]))), "\n")
	const header = "key,title,category,severity,clusters_blocked,objects_total,cluster,cluster_version,target,cluster_severity,cluster_objects,teams"
	if strings.TrimSpace(lines[0]) != header || len(lines) < 3 {
		t.Errorf("the downloaded CSV starts %q and has %d lines, want the header %q and a row per finding and cluster", lines[0], len(lines), header)
	}
	for _, line := range lines[1:] {
		if !strings.Contains(line, ",1.37,") {
			t.Errorf("a CSV row is not at the page's target 1.37: %q", line)
		}
	}
}

// An unknown cluster's page says why first: the verdict, its score as not assessed, and the
// inputs that were not assessed, above its findings and on the first screen.
func unknownClusterOpensWithItsCause(t *testing.T, f *dashFleet) {
	for _, vp := range viewports {
		t.Run(vp.Name, func(t *testing.T) {
			p := browsertest.Start(t, f.origin).Open(vp)
			signIn(t, p, f.clusterURLs["unknown-1"]+"?target=1.37", dashReadToken, false, "section#gaps")
			if line := p.Text("#verdict-line"); !strings.Contains(line, "unknown") || !strings.Contains(line, "n/a (not assessed)") || strings.Contains(line, "100") {
				t.Errorf("the verdict line reads %q, want unknown with its score not assessed", line)
			}
			if cause := p.Text("section#gaps"); !strings.Contains(cause, "api-usage") {
				t.Errorf("the cause reads %q, want the input not assessed (api-usage)", cause)
			}
			if !browsertest.Eval[bool](p, `!!(document.querySelector("section#gaps").compareDocumentPosition(document.querySelector("section#findings")) & Node.DOCUMENT_POSITION_FOLLOWING)`) {
				t.Error("the unknown cluster's cause is not above its findings")
			}
			if !p.InViewport("section#gaps") {
				t.Error("the cause is not on the first screen")
			}
			if chart := p.TextContent("section#history svg title#chart-title"); strings.Contains(chart, "from 100") || !strings.Contains(chart, "not assessed") {
				t.Errorf("the score history's title reads %q, want the unknown evaluation not assessed, not a score of 100", chart)
			}
			if wide := p.Overflow(); len(wide) > 0 {
				t.Errorf("the unknown cluster's page scrolls sideways; too wide: %v", wide)
			}
			p.Accessible("unknown cluster")
			p.Publish("cluster-unknown")
		})
	}
}

// pollRows waits for the fleet table to list want: after a history step the shell refetches.
func pollRows(t *testing.T, p *browsertest.Page, want []string, what string) {
	t.Helper()
	wantJSON, _ := json.Marshal(want)
	p.WaitUntil(what, fmt.Sprintf(`JSON.stringify(Array.from(document.querySelectorAll("table#fleet tr[data-cluster]"), e => e.dataset.cluster)) === %q`,
		wantJSON), fmt.Sprintf("rows %s", wantJSON))
}

// Sorting by each key the headers offer orders the rows by it, in the direction the address says.
func fleetSortsByNameAndScore(t *testing.T, f *dashFleet) {
	p := browsertest.Start(t, f.origin).Open(desktop)
	signIn(t, p, "/?target=1.37&view=matrix", dashReadToken, false, "table#fleet")
	for _, key := range []string{"name", "score"} {
		for range 2 { // a header clicked twice turns its order around
			link := fmt.Sprintf(`a[data-sort="%s"], a[data-sort="-%s"]`, key, key)
			if p.Count(link) == 0 {
				t.Fatalf("no sortable header for %s", key)
			}
			p.Follow("sort by "+key, chromedp.Click(chromedp.CSS(link)), "table#fleet")
			sort := query(t, p).Get("sort")
			if sort == "" {
				sort = "name" // the default order, left out of the address
			}
			if strings.TrimPrefix(sort, "-") != key {
				t.Fatalf("after clicking the %s header the address has sort=%q", key, sort)
			}
			checkOrder(t, p, sort)
		}
	}
	// verdict (worst first) and last push have one direction: the address says which
	for _, key := range []string{"verdict", "updated"} {
		p.Follow("sort by "+key, chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[data-sort=%q]`, key))), "table#fleet")
		if sort := query(t, p).Get("sort"); sort != key || len(fleetRows(p)) != len(dashClusters) {
			t.Errorf("after clicking the %s header: sort=%q, rows %v", key, sort, fleetRows(p))
		}
	}
	p.Accessible("sorted")
}

// checkOrder fails unless the rows follow sort (name or score at 1.37, - for descending).
// A row without a score at 1.37 (an unknown verdict has none) sorts after every score, both
// ways, then by name.
func checkOrder(t *testing.T, p *browsertest.Page, sort string) {
	t.Helper()
	rows := fleetRows(p)
	keys := make([]string, len(rows))
	for i, name := range rows {
		keys[i] = name
		if strings.TrimPrefix(sort, "-") == "score" {
			text := p.Text(fmt.Sprintf(`tr[data-cluster=%q] td[data-target="1.37"]`, name))
			keys[i] = "~" + name // after every score
			if strings.ContainsAny(text, "0123456789") {
				keys[i] = fmt.Sprintf("%03d", firstNumber(t, text))
			}
		}
	}
	ordered := slices.IsSorted(keys)
	if strings.HasPrefix(sort, "-") {
		scored := slices.IndexFunc(keys, func(k string) bool { return strings.HasPrefix(k, "~") })
		if scored < 0 {
			scored = len(keys)
		}
		ordered = slices.IsSortedFunc(keys[:scored], func(a, b string) int { return strings.Compare(b, a) }) &&
			slices.IsSorted(keys[scored:]) && !slices.ContainsFunc(keys[scored:], func(k string) bool { return !strings.HasPrefix(k, "~") })
	}
	if !ordered || len(rows) != len(dashClusters) {
		t.Errorf("sort=%s: rows %v (keys %v) are not in that order", sort, rows, keys)
	}
}

// firstNumber answers the first whole number in text (a cell's score).
func firstNumber(t *testing.T, text string) int {
	t.Helper()
	for _, word := range strings.FieldsFunc(text, func(r rune) bool { return r < '0' || r > '9' }) {
		n, err := strconv.Atoi(word)
		if err == nil {
			return n
		}
	}
	t.Fatalf("no number in %q", text)
	return 0
}

// A cluster opened from the fleet: its targets, findings grouped by severity with their
// evidence (the hostile object name as text), the gaps, the score chart, the teams table and
// the bundles; each finding filter narrows the list and stays in the address.
func clusterShowsItsFindings(t *testing.T, f *dashFleet) {
	for _, vp := range viewports {
		t.Run(vp.Name, func(t *testing.T) {
			p := browsertest.Start(t, f.origin).Open(vp)
			signIn(t, p, "/?target=1.33", dashReadToken, false, "table#fleet")
			p.Follow("open prod-eu-1", chromedp.Click(chromedp.CSS(`tr[data-cluster="prod-eu-1"] a[href]`)), "h1")
			if got, want := p.Path(), f.clusterURLs["prod-eu-1"]; !strings.HasPrefix(got, want) {
				t.Errorf("the cluster's address is %s, want %s", got, want)
			}
			if h1 := p.Text("main#view h1"); !strings.Contains(h1, "prod-eu-1") {
				t.Errorf("the heading reads %q, want the cluster's name", h1)
			}
			p.Goto(f.clusterURLs["prod-eu-1"]+"?target=1.33", "article.finding")
			if v := p.Attrs(`section#targets [data-target="1.33"][data-verdict]`, "data-verdict"); !slices.Equal(v, []string{"blocked"}) {
				t.Errorf("section#targets at 1.33: %v, want blocked", v)
			}
			if text := p.Text(`section#targets [data-target="1.33"]`); !strings.Contains(text, "blocked") {
				t.Errorf("the 1.33 target reads %q, want the word blocked", text)
			}
			for _, sel := range []string{"section#gaps", "section#history svg", "table#teams-table", "section#bundles",
				"section[data-severity] article.finding[data-key][data-category][data-severity]"} {
				if p.Count(sel) == 0 {
					t.Errorf("the cluster page has no %s", sel)
				}
			}
			for _, sev := range p.Attrs("section[data-severity]", "data-severity") {
				inner := p.Attrs(fmt.Sprintf(`section[data-severity=%q] article.finding`, sev), "data-severity")
				if len(inner) == 0 || slices.ContainsFunc(inner, func(s string) bool { return s != sev }) {
					t.Errorf("the %s group holds findings of severities %v", sev, inner)
				}
			}
			ingress := p.TextContent(`article.finding[data-key*="Ingress" i]`)
			if !strings.Contains(ingress, hostileObject) || !strings.Contains(ingress, "shop") {
				t.Errorf("the Ingress finding's evidence should name shop and the object %q as text:\n%s", hostileObject, ingress)
			}
			noScriptRan(t, p)
			p.Accessible("cluster")
			p.Publish("cluster")
			if vp.Mobile {
				if wide := p.Overflow(); len(wide) > 0 {
					t.Errorf("on a phone the cluster page scrolls sideways; too wide: %v", wide)
				}
			}
			filterFindings(t, p)
		})
	}
}

// filterFindings narrows the cluster's findings by each filter in turn and back.
func filterFindings(t *testing.T, p *browsertest.Page) {
	t.Helper()
	all := p.Count("article.finding")
	categories := p.Attrs("article.finding", "data-category")
	severities := p.Attrs("article.finding", "data-severity")
	if all < 2 {
		t.Fatalf("prod-eu-1 shows %d findings at 1.33, want at least the Ingress and the PodSecurityPolicy", all)
	}
	for _, tt := range []struct {
		name, field, param, value, attr string
	}{
		{"by category", "select#f-category", "category", categories[0], "data-category"},
		{"by severity", "select#f-severity", "severity", severities[len(severities)-1], "data-severity"},
	} {
		p.Follow("filter "+tt.name, browsertest.SubmitWith(tt.field, tt.value), "#finding-filters")
		if got := query(t, p); got.Get(tt.param) != tt.value || got.Get("target") != "1.33" {
			t.Errorf("filtered %s: the address is %s, want %s=%s and the target kept", tt.name, p.Path(), tt.param, tt.value)
		}
		got := p.Attrs("article.finding", tt.attr)
		if len(got) == 0 || slices.ContainsFunc(got, func(s string) bool { return s != tt.value }) {
			t.Errorf("filtered %s=%s: findings with %s %v", tt.param, tt.value, tt.attr, got)
		}
		p.Follow("clear the filter", browsertest.SubmitWith(tt.field, ""), "article.finding")
		if n := p.Count("article.finding"); n != all {
			t.Errorf("without the %s filter %d findings show, want %d", tt.param, n, all)
		}
	}
	p.Follow("search PodSecurityPolicy", typeAndEnter("input#f-q", "PodSecurityPolicy"), "#finding-filters")
	texts := p.Texts("article.finding")
	if query(t, p).Get("q") != "PodSecurityPolicy" || len(texts) == 0 || len(texts) >= all ||
		slices.ContainsFunc(texts, func(s string) bool { return !strings.Contains(s, "PodSecurityPolicy") }) {
		t.Errorf("searching PodSecurityPolicy at %s shows %d of %d findings: %q", p.Path(), len(texts), all, texts)
	}
	p.Follow("team payments", browsertest.SubmitWith("select#f-team", "payments"), "#finding-filters")
	if query(t, p).Get("team") != "payments" {
		t.Errorf("the team filter is not in the address: %s", p.Path())
	}
	p.Publish("cluster-filtered")
	p.Accessible("cluster-filtered")
}

// A finding's link is a deep link: loaded cold it opens the cluster at that finding, marked
// current and scrolled into view, at every width.
func deepLinkOpensTheFinding(t *testing.T, f *dashFleet) {
	for _, vp := range viewports {
		t.Run(vp.Name, func(t *testing.T) {
			p := browsertest.Start(t, f.origin).Open(vp)
			cluster := f.clusterURLs["prod-eu-1"] + "?target=1.33"
			signIn(t, p, cluster, dashReadToken, false, "article.finding")
			keys := p.Attrs("article.finding", "data-key")
			last := keys[len(keys)-1] // the lowest on the page: it must be scrolled to
			deep := cluster + "&finding=" + url.QueryEscape(last)
			p.Goto(deep, `article.finding[aria-current="true"]`)
			if got := p.Attrs(`article.finding[aria-current="true"]`, "data-key"); !slices.Equal(got, []string{last}) {
				t.Errorf("?finding=%s marks %v current", last, got)
			}
			if !p.InViewport(`article.finding[aria-current="true"]`) {
				t.Errorf("the deep-linked finding %s is not scrolled into view", last)
			}
			p.Accessible("deep link")
			p.Publish("finding")
			p.Reload(`article.finding[aria-current="true"]`)
			if got := p.Attrs(`article.finding[aria-current="true"]`, "data-key"); !slices.Equal(got, []string{last}) {
				t.Errorf("after a reload %v is current, want %s", got, last)
			}
		})
	}
}

// The token prompt: a fleet-wide read token sees every cluster and no banner; a team-scoped
// one sees a banner naming its team and only its team's clusters, and another team's cluster
// answers an error, not its findings. A token kept only for the tab is asked for again in a
// new tab; a remembered one is not, until it is forgotten.
func teamTokenSeesItsTeamsOnly(t *testing.T, f *dashFleet) {
	for _, tt := range []struct {
		name     string
		token    string
		clusters []string
		banner   bool
	}{
		{"a fleet-wide read token", dashReadToken, []string{"checkout-us-1", "clean-1", longCluster, "prod-eu-1", "unknown-1"}, false},
		{"a payments token", f.payments, []string{"clean-1", "prod-eu-1"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, vp := range viewports {
				t.Run(vp.Name, func(t *testing.T) {
					b := browsertest.Start(t, f.origin)
					p := b.Open(vp)
					checkSecurityHeaders(t, p.VisitHeaders("/"))
					p.WaitVisible("the token prompt", "form#token-form")
					p.Accessible("token prompt")
					if tt.banner {
						p.Publish("token")
					}
					signIn(t, p, "/", tt.token, false, "table#fleet")
					if got := fleetRows(p); !slices.Equal(got, tt.clusters) {
						t.Errorf("the fleet lists %v, want %v", got, tt.clusters)
					}
					banner := p.Text("div#team-banner")
					if tt.banner != (banner != "") || tt.banner && !strings.Contains(banner, "payments") {
						t.Errorf("team banner %q; want one naming payments: %v", banner, tt.banner)
					}
					if tt.banner {
						if first := browsertest.Eval[string](p, `document.querySelector("main#view").firstElementChild.id`); first != "team-banner" {
							t.Errorf("the fragment starts with #%s, want the team banner first", first)
						}
						p.Accessible("team banner")
						p.Publish("team-banner")
						p.Goto(f.clusterURLs["checkout-us-1"], "div#error")
						if text := p.Text("main#view"); strings.Contains(text, "removed-api") || strings.Contains(text, "Ingress") {
							t.Errorf("another team's cluster shows its findings to a payments token:\n%s", text)
						}
						p.Goto(f.clusterURLs["prod-eu-1"]+"?target=1.33", "article.finding")
						if p.Text("div#team-banner") == "" {
							t.Error("the cluster page for a payments token has no team banner")
						}
					}
					if got := browsertest.Eval[string](p, `sessionStorage.getItem("upgradescope.token") + "|" + localStorage.getItem("upgradescope.token")`); got != tt.token+"|null" {
						t.Errorf("storage after an unticked prompt: %q, want the token in sessionStorage only", got)
					}
					second := b.Open(vp)
					second.Visit("/")
					second.WaitVisible("a new tab asks again", "form#token-form")
				})
			}
		})
	}
}

// checkSecurityHeaders fails unless the shell, as the browser got it, carries the contract's
// security headers: a CSP that allows scripts from the server only and no framing.
func checkSecurityHeaders(t *testing.T, h map[string]string) {
	t.Helper()
	csp := h["content-security-policy"]
	script := ""
	for directive := range strings.SplitSeq(csp, ";") {
		if d := strings.TrimSpace(directive); strings.HasPrefix(d, "script-src ") {
			script = d
		}
	}
	if script != "script-src 'self'" || !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("Content-Security-Policy %q: want default-src 'self', script-src 'self' alone and frame-ancestors 'none'", csp)
	}
	for name, want := range map[string]string{"x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "x-frame-options": "DENY",
		"cache-control": "no-cache"} {
		if h[name] != want {
			t.Errorf("%s: %q, want %q", name, h[name], want)
		}
	}
}

// Remember on this device keeps the token across tabs; Forget clears it and the prompt returns.
func tokenIsRememberedOnlyWhenAsked(t *testing.T, f *dashFleet) {
	b := browsertest.Start(t, f.origin)
	p := b.Open(desktop)
	p.Visit("/")
	p.WaitVisible("the token prompt", "form#token-form")
	sent := len(p.Requests())
	p.Do("a wrong token", typeAndEnter("#token-input", "not-the-token"))
	p.WaitRequest("the wrong token is tried", sent, "/ui/fleet")
	p.WaitVisible("asked again after a wrong token", "form#token-form")
	if p.Count("table#fleet") != 0 {
		t.Error("a wrong token shows the fleet")
	}
	signIn(t, p, "/teams", dashReadToken, true, "table#teams")
	if got := browsertest.Eval[string](p, `localStorage.getItem("upgradescope.token")`); got != dashReadToken {
		t.Errorf("remembered token in localStorage: %q", got)
	}
	second := b.Open(desktop)
	second.Goto("/teams", "table#teams")
	second.WaitVisible("the forget button", "button#token-forget")
	second.Do("forget", chromedp.Click(chromedp.CSS("button#token-forget")))
	second.WaitVisible("forgetting asks again", "form#token-form")
	if got := browsertest.Eval[string](second, `String(sessionStorage.getItem("upgradescope.token")) + "|" + String(localStorage.getItem("upgradescope.token"))`); got != "null|null" {
		t.Errorf("storage after forget: %q, want nothing kept", got)
	}
}

// Behind an Ingress at /upgradescope/: every page, asset and fragment the browser asks for is
// under the prefix, links keep it, and a reload of a deep view works.
func TestDashboardWorksUnderAPathPrefix(t *testing.T) {
	const prefix = "/upgradescope"
	browsertest.Paths(t)
	f := startDashFleet(t, prefix)
	if code := statusOf(f.origin, "/"); code != 404 {
		t.Errorf("GET / outside the prefix answers %d, want 404", code)
	}
	for _, vp := range viewports {
		t.Run(vp.Name, func(t *testing.T) {
			p := browsertest.Start(t, f.origin).Open(vp)
			signIn(t, p, prefix+"/", dashReadToken, false, "table#fleet")
			p.Follow("open prod-eu-1", chromedp.Click(chromedp.CSS(`tr[data-cluster="prod-eu-1"] a[href]`)), "h1")
			if got := p.Path(); !strings.HasPrefix(got, f.clusterURLs["prod-eu-1"]) || !strings.HasPrefix(got, prefix+"/clusters/") {
				t.Errorf("the cluster's address is %s, want it under %s", got, prefix)
			}
			p.Reload("h1")
			if h1 := p.Text("main#view h1"); !strings.Contains(h1, "prod-eu-1") {
				t.Errorf("after a reload under the prefix the heading reads %q", h1)
			}
			for _, page := range []struct{ link, ready string }{{"teams", "table#teams"}, {"knowledge", "input#k-q"}, {"", "table#fleet"}} {
				link := fmt.Sprintf(`nav a[href=%q]`, prefix+"/"+page.link)
				p.Follow("nav to "+page.link, chromedp.Click(chromedp.CSS(link)), page.ready)
				if got := p.Path(); got != prefix+"/"+page.link {
					t.Errorf("nav link %s led to %s", link, got)
				}
			}
			p.Accessible("fleet under a prefix")
			for _, u := range p.Requests() {
				if !strings.HasPrefix(u, f.origin+prefix+"/") {
					t.Errorf("the browser asked for %s, outside %s", u, prefix)
				}
			}
		})
	}
}

// A fleet of more than a page: 100 rows a page, the next and previous links and the page in
// the address, kept through a reload.
func TestDashboardPagesALargeFleet(t *testing.T) {
	browsertest.Paths(t)
	f := startBulkDashFleet(t, "", 100) // 105 clusters
	p := browsertest.Start(t, f.origin).Open(desktop)
	signIn(t, p, "/?target=1.37", dashReadToken, false, "table#fleet")
	if n, info := len(fleetRows(p)), p.Text("#page-info"); n != 100 || !strings.Contains(info, "1–100 of 105") {
		t.Errorf("the first page shows %d rows and %q, want 100 and 1–100 of 105", n, info)
	}
	if p.Count("a#prev-page") != 0 {
		t.Error("the first page links to a previous one")
	}
	p.Follow("next page", chromedp.Click(chromedp.CSS("a#next-page")), "table#fleet")
	if q := query(t, p); q.Get("page") != "2" || q.Get("target") != "1.37" {
		t.Errorf("the second page's address is %s, want page=2 and the target kept", p.Path())
	}
	p.Reload("table#fleet")
	if n, info := len(fleetRows(p)), p.Text("#page-info"); n != 5 || !strings.Contains(info, "101–105 of 105") || p.Count("a#next-page") != 0 {
		t.Errorf("after a reload the second page shows %d rows and %q, want the last 5 and no next link", n, info)
	}
	p.Accessible("second page")
	p.Follow("previous page", chromedp.Click(chromedp.CSS("a#prev-page")), "table#fleet")
	if got := fleetRows(p); len(got) != 100 || got[0] != "bulk-000" {
		t.Errorf("back on the first page: %d rows starting %v", len(got), got[:min(len(got), 1)])
	}
}

// The teams page rolls each team up to its worst verdict and says why a team with no blocker
// of its own is blocked; the knowledge page searches the add-on registry and the API
// lifecycle table.
func teamsRollUpAndKnowledgeIsSearchable(t *testing.T, f *dashFleet) {
	for _, vp := range viewports {
		t.Run(vp.Name, func(t *testing.T) {
			p := browsertest.Start(t, f.origin).Open(vp)
			signIn(t, p, "/teams?target=1.37", dashReadToken, false, "table#teams")
			for team, verdict := range map[string]string{"payments": "blocked", "checkout": "blocked", "platform": "blocked", "data": "blocked"} {
				row := fmt.Sprintf(`table#teams tr[data-team=%q]`, team)
				if got := p.Attrs(row, "data-verdict"); !slices.Equal(got, []string{verdict}) {
					t.Errorf("team %s: data-verdict %v, want %s", team, got, verdict)
				}
				if text := p.Text(row); !strings.Contains(text, verdict) {
					t.Errorf("team %s's row reads %q, want the word %s", team, text, verdict)
				}
			}
			// data owns no blocker: prod-eu-1's PodSecurityPolicy, which no team owns, blocks it
			if why := p.Text(`table#teams tr[data-team="data"] td[data-label="Why"]`); !strings.Contains(why, "prod-eu-1: blocked by 1 blocker no team owns") {
				t.Errorf("data's why reads %q, want prod-eu-1's blocker no team owns", why)
			}
			if vp.Mobile {
				if wide := p.Overflow(); len(wide) > 0 {
					t.Errorf("on a phone the teams page scrolls sideways; too wide: %v", wide)
				}
			}
			p.Accessible("teams")
			if vp.Mobile { // a team a card: the picture shows data's why
				p.Do("scroll to data", chromedp.Evaluate[chromedp.Void](`document.querySelector('tr[data-team="data"]').scrollIntoView({block: "start"})`))
			}
			p.Publish("teams")

			p.Follow("nav to knowledge", chromedp.Click(chromedp.CSS(`nav a[href="/knowledge"]`)), "input#k-q")
			addons, apis := p.Count("table#addons tr[data-addon]"), p.Count("table#apis tr[data-api]")
			if addons == 0 || apis == 0 {
				t.Fatalf("the knowledge page lists %d add-ons and %d APIs", addons, apis)
			}
			p.Accessible("knowledge")
			p.Publish("knowledge")
			p.Follow("search ingress", typeAndEnter("input#k-q", "ingress"), "input#k-q")
			if q := query(t, p).Get("q"); q != "ingress" {
				t.Errorf("the knowledge search is not in the address: %s", p.Path())
			}
			foundAPIs := p.Attrs("table#apis tr[data-api]", "data-api")
			if !slices.Contains(foundAPIs, "extensions/v1beta1/Ingress") || len(foundAPIs) >= apis {
				t.Errorf("searching ingress lists APIs %v of %d; want extensions/v1beta1/Ingress among fewer", foundAPIs, apis)
			}
			for _, row := range p.Texts("table#addons tr[data-addon]") {
				if !strings.Contains(strings.ToLower(row), "ingress") {
					t.Errorf("searching ingress lists an add-on row without it: %q", row)
				}
			}
			p.Accessible("knowledge search")
			if vp.Mobile {
				if wide := p.Overflow(); len(wide) > 0 {
					t.Errorf("on a phone the knowledge page scrolls sideways; too wide: %v", wide)
				}
			}
		})
	}
}

// docs/dashboard.md shows the pictures the tests publish, and only those: each image it links
// is in docs/dashboard, and each picture there is linked.
func TestDashboardDocsShowEveryPublishedScreenshot(t *testing.T) {
	doc, err := os.ReadFile("../../docs/dashboard.md")
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, m := range regexp.MustCompile(`\]\((dashboard/[^)]+\.png)\)`).FindAllStringSubmatch(string(doc), -1) {
		linked[m[1]] = true
		if _, err := os.Stat("../../docs/" + m[1]); err != nil {
			t.Errorf("docs/dashboard.md shows %s: %v", m[1], err)
		}
	}
	files, err := filepath.Glob("../../docs/dashboard/*.png")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := "dashboard/" + filepath.Base(f); !linked[name] {
			t.Errorf("docs/%s is not shown in docs/dashboard.md", name)
		}
	}
	if len(linked) == 0 {
		t.Error("docs/dashboard.md shows no screenshot")
	}
}
