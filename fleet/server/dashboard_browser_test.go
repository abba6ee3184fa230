package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/internal/testenv/browsertest"
)

// The pages issue 34 asked to explain, in Debian's headless Chromium against the real server
// on a SQLite store: an unknown cluster opens with its cause, the teams page says why a team
// with no blocker of its own is blocked and fits a phone, the knowledge page judges end of
// life by the server's date, and the exports download with the read token. Every view is
// checked with axe-core; screenshots are kept as artifacts (browsertest).

const explainReadToken = "explain-read-token-0123456789abcdef"

// explainViewports are a wide desktop window and a phone held upright.
var explainViewports = []browsertest.Viewport{{Name: "desktop-1440", Width: 1440, Height: 900}, browsertest.Phone}

// explainFleet is pushed(t) behind a read token, with old-agent (unknown: its agent
// collected none of the kb's probes), shared (blocked by payments' blocker alone) and
// only-unowned (blocked by a PodSecurityPolicy alone: no finding names a team).
func explainFleet(t *testing.T) (*testServer, map[string]int) {
	t.Helper()
	ts := pushed(t, func(c *server.Config) { c.ReadToken = explainReadToken })
	doc := teamsInventory(t)
	doc.ClusterID, doc.APIUsage = "shared-uid", doc.APIUsage[:2]
	if r := ts.push("shared", envelope(t, "shared", doc)); r.status != 202 {
		t.Fatalf("push shared: %d %s", r.status, r.body)
	}
	unowned := teamsInventory(t)
	unowned.ClusterID, unowned.APIUsage = "only-unowned-uid", unowned.APIUsage[2:]
	if r := ts.push("shared", envelope(t, "only-unowned", unowned)); r.status != 202 {
		t.Fatalf("push only-unowned: %d %s", r.status, r.body)
	}
	old := scenario(t, "clean-is-ready", false)
	old.ServerVersion, old.ClusterID = "v1.36.1", "old-agent-uid"
	if r := ts.push("shared", envelope(t, "old-agent", old)); r.status != 202 {
		t.Fatalf("push old-agent: %d %s", r.status, r.body)
	}
	ids := map[string]int{}
	for _, name := range []string{"prod", "shared", "old-agent", "only-unowned"} {
		ids[name] = ts.idAs(explainReadToken, name)
	}
	return ts, ids
}

// openWithToken loads path, answers the token prompt and waits for ready.
func openWithToken(t *testing.T, p *browsertest.Page, path, ready string) {
	t.Helper()
	p.Visit(path)
	p.WaitVisible("the token prompt", "form#token-form")
	p.Do("type the token", chromedp.SendKeys(chromedp.CSS("#token-input"), explainReadToken))
	p.Follow("submit the token", chromedp.Click(chromedp.CSS("button#token-submit")), ready)
}

// fitsTheWindow fails when the page scrolls sideways: the document is no wider than the
// window.
func fitsTheWindow(t *testing.T, p *browsertest.Page, page string) {
	t.Helper()
	if !browsertest.Eval[bool](p, `document.documentElement.scrollWidth <= window.innerWidth`) {
		t.Errorf("the %s page scrolls sideways: scrollWidth %v > innerWidth %v; too wide: %v", page,
			browsertest.Eval[float64](p, `document.documentElement.scrollWidth`), browsertest.Eval[float64](p, `window.innerWidth`), p.Overflow())
	}
}

func TestExplainedPagesInABrowser(t *testing.T) {
	browsertest.Paths(t) // skips (or fails under UPGRADESCOPE_REQUIRE_BROWSER) before the fleet is built
	ts, ids := explainFleet(t)
	for _, vp := range explainViewports {
		t.Run(vp.Name, func(t *testing.T) {
			p := browsertest.Start(t, ts.URL).Open(vp)
			unknownClusterOpensWithItsCause(t, p, ids["old-agent"], vp)
			exportsDownloadWithTheToken(t, p, ids["prod"])
			teamsSayWhy(t, p, vp)
			clusterTeamsBlockedByWhatNoTeamOwns(t, p, ids["only-unowned"], vp)
			knowledgeJudgesByDate(t, p, vp)
		})
	}
}

func unknownClusterOpensWithItsCause(t *testing.T, p *browsertest.Page, id int, vp browsertest.Viewport) {
	openWithToken(t, p, fmt.Sprintf("/clusters/%d", id), "section#gaps")
	if !browsertest.Eval[bool](p, `!!(document.querySelector("section#gaps").compareDocumentPosition(document.querySelector("section#findings")) & Node.DOCUMENT_POSITION_FOLLOWING)`) {
		t.Errorf("the unknown cluster's cause is not above its findings")
	}
	if n := p.Count(`section#gaps li[data-capability^="probes/"]`); n != 1 {
		t.Errorf("%d lines of probe gaps, want them grouped into one", n)
	}
	if text := p.Text(`section#gaps li[data-capability="probes/kb"]`); !strings.Contains(text, "Fix: upgrade the agent") {
		t.Errorf("the grouped gap names no fix: %q", text)
	}
	if !browsertest.Eval[bool](p, `document.querySelector("section#gaps").getBoundingClientRect().top < window.innerHeight`) {
		t.Errorf("the cause is not on the first screen")
	}
	if line := p.Text("#verdict-line"); !strings.Contains(line, "n/a (not assessed)") || strings.Contains(line, "score 100") {
		t.Errorf("the unknown verdict line reads %q, want the score not assessed", line)
	}
	p.Accessible("unknown cluster")
	p.Shot("unknown cluster " + vp.Name)
	fitsTheWindow(t, p, "unknown cluster")
}

func exportsDownloadWithTheToken(t *testing.T, p *browsertest.Page, id int) {
	p.Goto(fmt.Sprintf("/clusters/%d", id), "p#exports") // the token stays in the tab's sessionStorage
	for _, format := range p.Attrs("p#exports a[data-export]", "data-export") {
		from := len(p.Requests())
		p.Do("download "+format, chromedp.Click(chromedp.CSS(`a[data-export="`+format+`"]`)))
		p.WaitRequest("download "+format, from, "/export?format="+format)
		p.WaitUntil("download "+format, `document.querySelector("#export-status").textContent.indexOf("Downloaded upgradescope-prod-1.33.`+format+`") === 0`,
			"the export fetched with the token and handed over as a file")
		if status := p.Text("#export-status"); strings.Contains(status, "(0 bytes)") {
			t.Errorf("the %s export is empty: %q", format, status)
		}
	}
	if n := p.Count("p#exports a[data-export]"); n < 2 {
		t.Errorf("%d export links, want csv and html at least", n)
	}
	p.Accessible("cluster with exports")
}

func teamsSayWhy(t *testing.T, p *browsertest.Page, vp browsertest.Viewport) {
	p.Follow("nav to teams", chromedp.Click(chromedp.CSS(`nav a[data-page="teams"]`)), "table#teams")
	row := `table#teams tr[data-team="data"]`
	if v := p.Attrs(row, "data-verdict"); len(v) != 1 || v[0] != "blocked" {
		t.Fatalf("data's verdict %v, want blocked", v)
	}
	why := p.Text(row + ` td[data-label="Why"]`)
	for _, want := range []string{"prod: blocked by 1 blocker no team owns", "shared: the cluster is blocked by payments (1 blocker), none of them data's"} {
		if !strings.Contains(why, want) {
			t.Errorf("data's why reads %q, want %q", why, want)
		}
	}
	unattributed := `table#teams tr[data-team="(unattributed)"]`
	if got := p.Attrs(unattributed+` li[data-why]`, "data-cluster"); strings.Join(got, ",") != "only-unowned,prod" {
		t.Errorf("(unattributed)'s clusters are %v, want the two with a blocker no team owns", got)
	}
	if text := p.Text(unattributed); strings.Contains(text, "(unattributed)'s") || strings.Contains(text, "shared") {
		t.Errorf("(unattributed)'s row names another team's blockers: %q", text)
	}
	p.Accessible("teams")
	p.Shot("teams " + vp.Name)
	fitsTheWindow(t, p, "teams")
}

// clusterTeamsBlockedByWhatNoTeamOwns opens a cluster where no finding names a team: its
// Teams table still lists its teams, blocked by the blocker no team owns, and says why.
func clusterTeamsBlockedByWhatNoTeamOwns(t *testing.T, p *browsertest.Page, id int, vp browsertest.Viewport) {
	p.Goto(fmt.Sprintf("/clusters/%d", id), "section#cluster-teams")
	if got := p.Attrs(`#teams-table tr[data-team]`, "data-verdict"); strings.Join(got, ",") != "blocked,blocked" {
		t.Errorf("only-unowned's teams read %v, want data and payments blocked", got)
	}
	if text := p.Text("#teams-unowned"); !strings.Contains(text, "No finding names a team. 1 blocker no team owns") {
		t.Errorf("only-unowned's teams line reads %q", text)
	}
	p.Accessible("cluster teams")
	p.Shot("cluster teams " + vp.Name)
	fitsTheWindow(t, p, "cluster teams")
}

func knowledgeJudgesByDate(t *testing.T, p *browsertest.Page, vp browsertest.Viewport) {
	p.Follow("nav to knowledge", chromedp.Click(chromedp.CSS(`nav a[data-page="knowledge"]`)), "input#k-q")
	// the server's clock reads 2026-11-30: aks-app-routing-nginx's end of life is that day
	row := `table#addons tr[data-addon="aks-app-routing-nginx"]`
	if s := p.Attrs(row, "data-support"); len(s) != 1 || s[0] != "ended" {
		t.Errorf("aks-app-routing-nginx on its end-of-life day: support %v, want ended", s)
	}
	if text := p.Text(row); !strings.Contains(text, "end of life since 2026-11-30") || strings.Contains(text, "supported") {
		t.Errorf("aks-app-routing-nginx reads %q on its end-of-life day", text)
	}
	if text := p.Text(`table#addons tr[data-addon="rke2-ingress-nginx"] li[data-compat]`); !strings.HasPrefix(text, "any version; Kubernetes up to 1.36") {
		t.Errorf("rke2-ingress-nginx's open interval reads %q", text)
	}
	p.Accessible("knowledge")
	p.Shot("knowledge " + vp.Name)
	fitsTheWindow(t, p, "knowledge")
}
