package server_test

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/report"
)

// securityHeaders are the headers every dashboard answer carries.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "no-referrer",
	"X-Frame-Options":         "DENY",
}

func checkSecurityHeaders(t *testing.T, path string, h http.Header) {
	t.Helper()
	for k, want := range securityHeaders {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %s is %q, want %q", path, k, got, want)
		}
	}
}

var assetRef = regexp.MustCompile(`(?:src|href)="([^"]*/assets/app\.[0-9a-f]{12}\.(?:js|css))"`)

func TestDashboardPagesAnswerTheShellWithoutCredentials(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.ReadToken = "reader" })
	for _, path := range []string{"/", "/clusters/7", "/teams", "/knowledge"} {
		r := ts.get(path, "")
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s", path, r.status, r.header.Get("Content-Type"))
		}
		if cc := r.header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("%s: Cache-Control %q, want no-cache", path, cc)
		}
		checkSecurityHeaders(t, path, r.header)
		body := string(r.body)
		for _, want := range []string{`<main id="view">`, `<nav`, `id="token-form"`, `id="token-input" name="token" type="password"`,
			`id="token-remember"`, `id="token-submit"`, `id="token-forget"`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: the shell lacks %s", path, want)
			}
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, " style=") {
			t.Errorf("%s: the shell has an inline script or style, which the CSP forbids", path)
		}
		if refs := assetRef.FindAllStringSubmatch(body, -1); len(refs) != 2 {
			t.Errorf("%s: the shell links %d fingerprinted assets, want app.js and app.css", path, len(refs))
		}
	}
}

var navLink = regexp.MustCompile(`<li><a href="([^"]*)" data-page="([^"]*)">([^<]*)</a></li>`)

func TestTheNavLinksEachPageOnceByItsName(t *testing.T) {
	ts := newServer(t, nil)
	var got []string
	for _, m := range navLink.FindAllStringSubmatch(string(ts.get("/", "").body), -1) {
		got = append(got, m[3]+" "+m[1])
	}
	if want := "Fleet /,Findings /findings,Teams /teams,Knowledge /knowledge"; strings.Join(got, ",") != want {
		t.Errorf("the nav links %q, want %q", strings.Join(got, ","), want)
	}
}

func TestDashboardAssetsAreFingerprintedAndCachedImmutably(t *testing.T) {
	ts := newServer(t, nil)
	shell := string(ts.get("/", "").body)
	for _, ref := range assetRef.FindAllStringSubmatch(shell, -1) {
		r := ts.get(ref[1], "")
		if r.status != 200 || len(r.body) == 0 {
			t.Fatalf("%s: %d", ref[1], r.status)
		}
		if cc := r.header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", ref[1], cc)
		}
		checkSecurityHeaders(t, ref[1], r.header)
		if !strings.Contains(r.header.Get("Content-Type"), map[bool]string{true: "javascript", false: "css"}[strings.HasSuffix(ref[1], ".js")]) {
			t.Errorf("%s: Content-Type %q", ref[1], r.header.Get("Content-Type"))
		}
	}
	if r := ts.get("/assets/app.000000000000.js", ""); r.status != 404 {
		t.Errorf("an asset name of another build answers %d, want 404", r.status)
	}
	if web.ScriptName() == web.StyleName() || !strings.HasPrefix(web.ScriptName(), "app.") {
		t.Errorf("asset names %q and %q", web.ScriptName(), web.StyleName())
	}
}

func TestDashboardFragmentsNeedTheReadAPIsCredential(t *testing.T) {
	ts := pushed(t, func(c *server.Config) { c.ReadToken = "reader" })
	prod := ts.idAs("reader", "prod")
	for _, path := range []string{"/ui/fleet", fmt.Sprintf("/ui/clusters/%d", prod), "/ui/teams", "/ui/knowledge"} {
		r := ts.get(path, "")
		if r.status != 401 || !strings.Contains(r.json(t)["error"].(string), "read credential") {
			t.Errorf("%s without a token: %d %s", path, r.status, r.body)
		}
		checkSecurityHeaders(t, path, r.header)
		if r := ts.get(path, "wrong"); r.status != 401 {
			t.Errorf("%s with an unknown token: %d", path, r.status)
		}
		r = ts.get(path, "reader")
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("%s with the read token: %d %s", path, r.status, r.body)
		}
		if cc := r.header.Get("Cache-Control"); cc != "private, no-store" {
			t.Errorf("%s: Cache-Control %q, want private, no-store", path, cc)
		}
		checkSecurityHeaders(t, path, r.header)
		if n := strings.Count(string(r.body), "<h1"); n != 1 {
			t.Errorf("%s: %d h1 headings, want one", path, n)
		}
		if strings.Contains(string(r.body), "team-banner") {
			t.Errorf("%s: a fleet-wide token is shown a team banner", path)
		}
	}
}

func TestATeamTokenSeesABannerAndOnlyItsClusters(t *testing.T) {
	ts := pushed(t, nil)
	ops := ts.idOf("ops")
	tok := ts.mintRead("payments", "data")
	r := ts.get("/ui/fleet", tok)
	body := string(r.body)
	if r.status != 200 || !strings.HasPrefix(body, `<div id="team-banner"`) {
		t.Fatalf("a team-scoped fleet fragment does not start with the banner: %d %.200s", r.status, body)
	}
	banner := body[:strings.Index(body, "</div>")]
	for _, team := range []string{"payments", "data"} {
		if !strings.Contains(banner, team) {
			t.Errorf("the banner does not name %s: %s", team, banner)
		}
	}
	if !strings.Contains(body, `data-cluster="prod"`) || strings.Contains(body, `data-cluster="ops"`) {
		t.Errorf("payments' fleet rows: %s", rowsOf(body))
	}
	if r := ts.get(fmt.Sprintf("/ui/clusters/%d", ops), tok); r.status != 404 {
		t.Errorf("another team's cluster answers %d, want the API's 404", r.status)
	}
}

var rowRE = regexp.MustCompile(`<tr data-cluster="([^"]*)"`)

// rowsOf is the cluster names of a fleet fragment's rows, in order.
func rowsOf(body string) []string {
	var out []string
	for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// seeded is a server on a store seeded with clusters named by verdict: each dashCluster
// is stored with one evaluation at each of targets.
type dashCluster struct {
	name, verdict string
	score         int
	agentRules    string // the rules revision its agent reports, "" for none
}

func seedDashboard(t testing.TB, st store.Store, clusters []dashCluster, targets []string, key string) {
	t.Helper()
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	rep := gzipBytes(t, []byte(`{"schemaVersion":1,"targets":[]}`))
	for i, c := range clusters {
		in := store.Ingest{ClusterName: c.name, ClusterUID: fmt.Sprintf("uid-%d", i), Hash: fmt.Sprint(i),
			ServerVersion: "v1.33.4", Inventory: []byte("x")}
		if c.verdict == "" && targets == nil {
			in.ServerVersion = "" // a cluster whose version was never reported
		}
		if c.agentRules != "" {
			in.AgentBundles = []store.Bundle{{Name: "rules", Revision: c.agentRules}}
		}
		for _, tg := range targets {
			if c.verdict == "" {
				continue
			}
			in.Evaluations = append(in.Evaluations, store.Evaluation{Target: tg, Verdict: c.verdict, Score: c.score,
				EvaluatedAt: at, BundlesKey: key, Report: rep,
				Teams: map[string]store.TeamCell{"team-" + c.verdict: {Verdict: c.verdict, Score: c.score}}})
		}
		if _, err := st.Ingest(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
}

// bundlesKey is the key the shared engine's evaluations are stored with.
func bundlesKey(t testing.TB) string {
	eng, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, b := range eng.Bundles() {
		parts = append(parts, b.Name+"@"+b.Revision)
	}
	return strings.Join(sortStrings(parts), ",")
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

// seededFleet is a server over 250 clusters cluster-000…cluster-249 at v1.33.4, judged at
// 1.34 and 1.35: ready (score 100), blocked (score i%50) and unknown (80) in turn, and every
// fourth with no stored evaluation; cluster-007's agent runs an older rules bundle.
func seededFleet(t *testing.T, edit func(*server.Config)) *testServer {
	t.Helper()
	ts := newServer(t, func(c *server.Config) {
		c.Targets = []string{"1.35"}
		if edit != nil {
			edit(c)
		}
	})
	var clusters []dashCluster
	for i := range 250 {
		c := dashCluster{name: fmt.Sprintf("cluster-%03d", i)}
		switch i % 4 {
		case 0:
			c.verdict, c.score = "ready", 100
		case 1:
			c.verdict, c.score = "blocked", i%50
		case 2:
			c.verdict, c.score = "unknown", 80
		}
		if i == 7 {
			c.agentRules = "1999-01-01.1"
		}
		clusters = append(clusters, c)
	}
	seedDashboard(t, ts.store, clusters, []string{"1.34", "1.35"}, bundlesKey(t))
	return ts
}

// count is the number a summary element [data-count=key] shows.
func count(t *testing.T, body, key string) string {
	t.Helper()
	m := regexp.MustCompile(`data-count="` + key + `"[^>]*>([0-9,]+) `).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no [data-count=%s] in the summary", key)
	}
	return m[1]
}

func TestTheFleetFragmentCountsFiltersSortsAndPages(t *testing.T) {
	ts := seededFleet(t, nil)
	body := string(ts.get("/ui/fleet", "").body)
	for key, want := range map[string]string{"ready": "63", "blocked": "63", "unknown": "62", "already-there": "0", "none": "62", "stale": "0"} {
		if got := count(t, body, key); got != want {
			t.Errorf("summary %s = %s, want %s", key, got, want)
		}
	}
	rows := rowsOf(body)
	if len(rows) != web.PageSize || rows[0] != "cluster-000" || rows[99] != "cluster-099" {
		t.Errorf("page 1 lists %d rows, %v…", len(rows), rows[:min(3, len(rows))])
	}
	if !strings.Contains(body, `<span id="page-info">1–100 of 250</span>`) || !strings.Contains(body, `id="next-page" href="/?page=2"`) || strings.Contains(body, `id="prev-page"`) {
		t.Errorf("page 1's pager: %s", body[strings.Index(body, `<nav class="pager"`):])
	}
	for _, want := range []string{`<select id="target" name="target">`, `<input id="q" name="q" type="search"`, `<select id="verdict-filter" name="verdict">`,
		`<a data-sort="blockers" href="/?sort=blockers">`, `<a id="view-link" href="/?view=matrix">`, `<th scope="col" class="top">Top blocker</th>`,
		`<caption class="muted">Each cluster at its next minor: where it stands`} {
		if !strings.Contains(body, want) {
			t.Errorf("the fleet fragment lacks %s", want)
		}
	}
	matrix := string(ts.get("/ui/fleet?view=matrix", "").body)
	for _, want := range []string{`data-target="1.34" data-verdict="ready">`, `data-target="1.35" data-verdict="none">`, `<a data-sort="score" href="/?sort=score&amp;view=matrix">`} {
		if !strings.Contains(matrix, want) {
			t.Errorf("the per-minor matrix lacks %s", want)
		}
	}
	// cluster-002 is unknown with a score of 80: no cell or column shows the number
	unknownRow := regexp.MustCompile(`<tr data-cluster="cluster-002".*</tr>`).FindString(matrix)
	if strings.Contains(unknownRow, "80") || !strings.Contains(unknownRow, `data-verdict="unknown"><span class="v v-unknown">unknown</span></td>`) ||
		!strings.Contains(unknownRow, "n/a (not assessed)") {
		t.Errorf("an unknown cluster's matrix row shows a score or no not-assessed score: %s", unknownRow)
	}

	cases := []struct {
		name, query string
		rows        []string // the first rows, in order
		total       string
	}{
		{"the last page holds the rest", "page=3", []string{"cluster-200", "cluster-201"}, "201–250 of 250"},
		{"a search keeps the names containing it, in any case", "q=CLUSTER-01", []string{"cluster-010", "cluster-011"}, "1–10 of 10"},
		{"a verdict filter keeps that verdict", "verdict=blocked", []string{"cluster-001", "cluster-005"}, "1–63 of 63"},
		{"none keeps clusters without a stored evaluation", "verdict=none", []string{"cluster-003", "cluster-007"}, "1–62 of 62"},
		{"name descending", "sort=-name", []string{"cluster-249", "cluster-248"}, "1–100 of 250"},
		{"score ascending puts the worst first", "sort=score&verdict=blocked", []string{"cluster-001", "cluster-101"}, "1–63 of 63"},
		{"score descending puts the best first, unscored (unknown too) last", "sort=-score&q=cluster-00", []string{"cluster-000", "cluster-004", "cluster-008", "cluster-009", "cluster-005", "cluster-001", "cluster-002", "cluster-003", "cluster-006", "cluster-007"}, "1–10 of 10"},
		{"score ascending sorts an unknown verdict's score with no score, never as its number", "sort=score&q=cluster-00", []string{"cluster-001", "cluster-005", "cluster-009", "cluster-000", "cluster-004", "cluster-008", "cluster-002", "cluster-003", "cluster-006", "cluster-007"}, "1–10 of 10"},
		{"verdict puts blocked first, then unknown, none and ready", "sort=verdict&q=cluster-00", []string{"cluster-001", "cluster-005", "cluster-009", "cluster-002", "cluster-006", "cluster-003", "cluster-007", "cluster-000", "cluster-004", "cluster-008"}, "1–10 of 10"},
		{"a target column selects the verdicts read", "target=1.35&verdict=ready&q=cluster-00", []string{"cluster-000", "cluster-004", "cluster-008"}, "1–3 of 3"},
		{"a page past the last is empty and says which is the last", "page=9", nil, "Page 9 is past the last page, page 3 (250 clusters)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := string(ts.get("/ui/fleet?"+tc.query, "").body)
			got := rowsOf(body)
			if len(got) < len(tc.rows) || strings.Join(got[:len(tc.rows)], ",") != strings.Join(tc.rows, ",") {
				t.Errorf("?%s lists %v, want %v first", tc.query, got[:min(len(got), 10)], tc.rows)
			}
			if !strings.Contains(body, `<span id="page-info">`+tc.total+`</span>`) {
				t.Errorf("?%s: page info is not %q", tc.query, tc.total)
			}
			if past := tc.rows == nil; past != strings.Contains(body, `<a id="last-page" href="/?page=3">Go to the last page</a>`) ||
				past && strings.Contains(body, `id="prev-page"`) {
				t.Errorf("?%s: a page past the last links the last page (and no previous one), and only it does:\n%s", tc.query, body[strings.Index(body, `<nav class="pager"`):])
			}
		})
	}
}

// The fragments read through the store's existing queries (Clusters, Fleet, ClusterCells,
// History, LatestEvaluation): the same fleet reads the same on both backends.
func TestTheFleetAndClusterFragmentsReadTheSameOnBothStores(t *testing.T) {
	stores(t, func(t *testing.T, open func() store.Store) {
		ts := newServerOn(t, open(), func(c *server.Config) { c.Targets, c.IngestToken = []string{"1.35"}, "shared" })
		seedDashboard(t, ts.store, []dashCluster{{"b-ready", "ready", 100, ""}, {"a-blocked", "blocked", 25, "old"}, {"c-none", "", 0, ""}},
			[]string{"1.34", "1.35"}, bundlesKey(t))
		if r := ts.push("shared", envelope(t, "prod", teamsInventory(t))); r.status != 202 {
			t.Fatalf("push: %d %s", r.status, r.body)
		}
		body := string(ts.get("/ui/fleet?sort=score", "").body)
		if got := strings.Join(rowsOf(body), " "); got != "a-blocked prod b-ready c-none" {
			t.Errorf("by score: %s", got)
		}
		for key, want := range map[string]string{"ready": "1", "blocked": "2", "none": "1"} {
			if got := count(t, body, key); got != want {
				t.Errorf("%s: %s, want %s", key, got, want)
			}
		}
		cluster := string(ts.get(fmt.Sprintf("/ui/clusters/%d?severity=blocker", ts.idOf("prod")), "").body)
		if got := len(findingKeys(cluster)); got != 2 || !strings.Contains(cluster, `<svg class="chart"`) {
			t.Errorf("prod's blockers: %d, chart drawn: %v", got, strings.Contains(cluster, "<svg"))
		}
	})
}

var countLink = regexp.MustCompile(`<a data-count="([a-z-]+)" class="[^"]*" href="([^"]*)">([0-9,]+) `)

func TestEachSummaryCountIsTheNumberOfRowsItsLinkLists(t *testing.T) {
	ts := seededFleet(t, nil)
	for _, query := range []string{"", "q=cluster-00", "q=CLUSTER-1&target=1.35", "q=nothing-matches"} {
		body := string(ts.get("/ui/fleet?"+query, "").body)
		links := countLink.FindAllStringSubmatch(body, -1)
		if len(links) != 6 {
			t.Fatalf("?%s: %d summary links, want the five standings and stale", query, len(links))
		}
		for _, m := range links {
			linked := string(ts.get("/ui/fleet"+strings.TrimPrefix(html.UnescapeString(m[2]), "/"), "").body)
			info := regexp.MustCompile(`<span id="page-info">(?:[0-9,]+–[0-9,]+ of )?([0-9,]+)`).FindStringSubmatch(linked)
			if info == nil || info[1] != m[3] {
				t.Errorf("?%s: %s counts %s, its link %s lists %v", query, m[1], m[3], m[2], info[1:])
			}
		}
		if q := regexp.MustCompile(`q=([^&]*)`).FindStringSubmatch(query); q != nil && !strings.Contains(body, `matching “`+q[1]+`”`) {
			t.Errorf("?%s: the summary heading does not say it counts the clusters matching %s", query, q[1])
		}
	}
}

func TestTheFleetFragmentKeepsTheQueryInItsLinks(t *testing.T) {
	ts := seededFleet(t, nil)
	body := string(ts.get("/ui/fleet?q=cluster-1&verdict=blocked&sort=-score&page=1", "").body)
	for _, want := range []string{
		`<a data-sort="name" href="/?q=cluster-1&amp;verdict=blocked">`,
		`<a data-sort="blockers" href="/?q=cluster-1&amp;sort=blockers&amp;verdict=blocked">`,
		`<select id="sort" name="sort">`,
		`<option value="-score" selected>`,
		`<option value="blocked" selected>`,
		`<input id="q" name="q" type="search" value="cluster-1"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the fragment lacks %s", want)
		}
	}
	if !strings.Contains(string(ts.get("/ui/fleet?page=2", "").body), `id="prev-page" href="/"`) {
		t.Errorf("page 2 does not link back to page 1")
	}
}

func TestTheFleetFragmentFlagsStaleClustersAndBundlesBehind(t *testing.T) {
	ts := seededFleet(t, func(c *server.Config) { c.Now = func() time.Time { return time.Now().Add(3 * time.Hour) } })
	body := string(ts.get("/ui/fleet", "").body)
	if got := count(t, body, "stale"); got != "250" {
		t.Errorf("250 clusters silent for 3h: stale = %s", got)
	}
	if rows := rowsOf(string(ts.get("/ui/fleet?verdict=stale", "").body)); len(rows) != 100 {
		t.Errorf("verdict=stale lists %d rows on page 1, want 100", len(rows))
	}
	behind := regexp.MustCompile(`<tr data-cluster="([^"]*)"[^>]* data-behind=`).FindAllStringSubmatch(body, -1)
	if len(behind) != 1 || behind[0][1] != "cluster-007" {
		t.Errorf("rows marked behind: %v, want cluster-007 only", behind)
	}
}

func TestTheFleetFragmentRefusesABadQueryNamingTheParameter(t *testing.T) {
	ts := seededFleet(t, nil)
	for query, want := range map[string]string{
		"verdict=green": "verdict", "sort=size": "sort", "page=0": "page", "page=x": "page", "target=1.x": "target", "target=1.35.2": "target",
	} {
		r := ts.get("/ui/fleet?"+query, "")
		if r.status != 422 || !strings.HasPrefix(r.json(t)["error"].(string), want) {
			t.Errorf("?%s: %d %s", query, r.status, r.body)
		}
		checkSecurityHeaders(t, "/ui/fleet?"+query, r.header)
	}
}

func TestHostileNamesAndFindingTextRenderAsText(t *testing.T) {
	ts := newServer(t, nil)
	hostile := `<script>alert(1)</script>"'&`
	rep := report.Report{SchemaVersion: 1, Targets: []report.TargetResult{{Target: "1.34", Verdict: "blocked", Score: 75, Blockers: 1,
		Findings: []report.Finding{{Key: "api/" + hostile, Category: hostile, Severity: "blocker", Target: "1.34", Title: hostile,
			Detail: hostile, Remediation: hostile, Citations: []string{"javascript:alert(1)", "https://example.com/?a=<b>"},
			Teams: []string{hostile}}},
		NotAssessed: []report.Gap{{Capability: hostile, Required: true, Reason: hostile}},
		Teams:       map[string]report.TeamResult{hostile: {Verdict: "blocked", Score: 75, Blockers: 1}}}}}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	in := store.Ingest{ClusterName: hostile, ClusterUID: "uid", Hash: "h", ServerVersion: "v1.33.4", Inventory: []byte("x"),
		AgentBundles: []store.Bundle{{Name: hostile, Revision: hostile}},
		Evaluations: []store.Evaluation{{Target: "1.34", Verdict: "blocked", Score: 75, Blockers: 1, EvaluatedAt: time.Now(),
			BundlesKey: bundlesKey(t), Report: gzipBytes(t, data), Teams: map[string]store.TeamCell{hostile: {Verdict: "blocked"}}}}}
	res, err := ts.store.Ingest(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/ui/fleet", fmt.Sprintf("/ui/clusters/%d", res.ClusterID), "/ui/teams",
		fmt.Sprintf("/ui/clusters/%d?finding=%s&q=%s", res.ClusterID, "api%2F%3Cscript%3E", "%3Cscript%3E")} {
		r := ts.get(path, "")
		body := string(r.body)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, body)
		}
		if strings.Contains(body, "<script") || strings.Contains(body, `"'&<`) {
			t.Errorf("%s: the hostile text is not escaped", path)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;&#34;&#39;&amp;") {
			t.Errorf("%s: the hostile text is not shown as text", path)
		}
		if strings.Contains(body, `href="javascript:`) {
			t.Errorf("%s: a javascript: citation became a link", path)
		}
	}
}
