package server_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
)

// scenario reads testdata/<name>/inventory.json; probes says whether its probes are
// observed (found nothing), as the scenario's args.json asks, or left out, as an agent
// older than the server's knowledge base leaves them.
func scenario(t *testing.T, name string, probes bool) *inventory.Document {
	t.Helper()
	doc, err := inventory.ReadFile(filepath.Join("..", "..", "testdata", name, "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	if probes {
		eng, err := sharedEngine()
		if err != nil {
			t.Fatal(err)
		}
		probetest.FoundNothing(doc, eng.Observe().Probes)
	}
	return doc
}

// oldAgentCluster is a clean cluster at 1.36 whose agent collected none of the knowledge
// base's probes: unknown at 1.37, with a gap per probe and no finding that blocks.
func oldAgentCluster(t *testing.T, ts *testServer) int {
	t.Helper()
	doc := scenario(t, "clean-is-ready", false)
	doc.ServerVersion, doc.ClusterID = "v1.36.1", "old-agent-uid"
	if r := ts.push("shared", envelope(t, "old-agent", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	return ts.idOf("old-agent")
}

func TestAnUnknownClusterPageOpensWithItsCauseGroupedIntoOneFixAndNoReadyScore(t *testing.T) {
	ts := pushed(t, nil)
	body := string(ts.get(fmt.Sprintf("/ui/clusters/%d", oldAgentCluster(t, ts)), "").body)
	gaps, findings := strings.Index(body, `<section id="gaps"`), strings.Index(body, `<section id="findings"`)
	if gaps < 0 || findings < 0 || gaps > findings {
		t.Fatalf("the cause (at %d) does not come before the findings (at %d)", gaps, findings)
	}
	if !strings.Contains(body, `<h2 id="gaps-h">Why the verdict is unknown</h2>`) {
		t.Errorf("the cause section is not titled as the cause")
	}
	probeLines := regexp.MustCompile(`<li data-capability="probes/kb" data-gaps="(\d+)">`).FindAllStringSubmatch(body, -1)
	if len(probeLines) != 1 {
		t.Fatalf("%d lines for the probes of kb, want one: %s", len(probeLines), body[gaps:findings])
	}
	if n := strings.Count(body[gaps:findings], `<li data-capability="probes/`); n != 1 {
		t.Errorf("%d probe lines, want the one group", n)
	}
	if probeLines[0][1] == "1" || len(probeLines[0][1]) < 2 {
		t.Errorf("the group holds %s probes, want every kb probe", probeLines[0][1])
	}
	for _, want := range []string{
		"This inventory was collected without the probes of kb ",
		": the agent (upgradescope test, kb kb-test) predates them. Fix: upgrade the agent to a release whose kb is ",
		`score <span class="na" title="the score counts only what was assessed">n/a (not assessed)</span>`,
		"required inputs were not assessed, from 1 cause.",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the unknown cluster page lacks %q", want)
		}
	}
	if regexp.MustCompile(`unknown</span> score \d`).MatchString(body) || regexp.MustCompile(`unknown</span> \d+</a>`).MatchString(body) {
		t.Errorf("an unknown verdict is shown with a score as if it were judged")
	}
}

func TestADecidedClusterPageKeepsItsGapsAfterTheFindings(t *testing.T) {
	ts := pushed(t, nil)
	body := string(ts.get(fmt.Sprintf("/ui/clusters/%d", ts.idOf("prod")), "").body)
	if gaps, findings := strings.Index(body, `<section id="gaps"`), strings.Index(body, `<section id="findings"`); gaps < findings {
		t.Errorf("a blocked cluster's gaps (at %d) come before its findings (at %d)", gaps, findings)
	}
	if !strings.Contains(body, `<p id="verdict-line">At Kubernetes 1.33: <span class="v v-blocked">blocked</span> score 50 `) {
		t.Errorf("a blocked cluster's verdict line lost its score")
	}
}

func TestTheTeamsPageSaysWhyATeamWithoutBlockersIsBlocked(t *testing.T) {
	ts := pushed(t, nil)
	// shared: payments' Ingress blocks it, data owns only an info, and nothing is unowned
	doc := teamsInventory(t)
	doc.ClusterID = "shared-uid"
	doc.APIUsage = doc.APIUsage[:2]
	if r := ts.push("shared", envelope(t, "shared", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	body := string(ts.get("/ui/teams", "").body)
	row := regexp.MustCompile(`(?s)<tr data-team="data" data-verdict="blocked">.*?</tr>`).FindString(body)
	if row == "" {
		t.Fatalf("data is not blocked on the teams page: %s", body)
	}
	for _, want := range []string{
		`<td data-label="Own blockers">0</td>`,
		`<li data-why="unowned" data-cluster="prod">`, "blocked by 1 blocker no team owns",
		`<li data-why="others" data-cluster="shared">`, "the cluster is blocked by <strong>payments</strong> (1 blocker), none of them data's",
	} {
		if !strings.Contains(row, want) {
			t.Errorf("data's row lacks %q: %s", want, row)
		}
	}
	payments := regexp.MustCompile(`(?s)<tr data-team="payments" .*?</tr>`).FindString(body)
	if !strings.Contains(payments, `<li data-why="own" data-cluster="prod">`) || !strings.Contains(payments, "1 blocker of its own") {
		t.Errorf("payments' row does not name its own blockers: %s", payments)
	}
}

// The knowledge page and the addons rule judge an add-on on the server's clock: on the
// days around aks-app-routing-nginx's end of life (2026-11-30) the page's support state is
// what the rule reports for a cluster running it, pushed to the same server.
func TestTheKnowledgePageJudgesEndOfLifeByDateAsTheRuleDoes(t *testing.T) {
	for _, tc := range []struct {
		day, state, finding string
	}{
		{"2026-11-29", "ending", "eol-approaching/aks-app-routing-nginx"},
		{"2026-11-30", "ended", "eol-addon/aks-app-routing-nginx"},
		{"2026-12-01", "ended", "eol-addon/aks-app-routing-nginx"},
	} {
		t.Run(tc.day, func(t *testing.T) {
			day, err := time.Parse(time.DateOnly, tc.day)
			if err != nil {
				t.Fatal(err)
			}
			ts := newServer(t, func(c *server.Config) {
				c.IngestToken = "shared"
				c.Now = func() time.Time { return day.Add(12 * time.Hour) }
			})
			if r := ts.push("shared", envelope(t, "aks", scenario(t, "addon-eol-approaching", true))); r.status != 202 {
				t.Fatalf("push: %d %s", r.status, r.body)
			}
			findings := string(ts.get(fmt.Sprintf("/api/v1/clusters/%d/findings?target=1.33", ts.idOf("aks")), "").body)
			if !strings.Contains(findings, `"key":"`+tc.finding+`"`) {
				t.Fatalf("on %s the rule does not report %s: %s", tc.day, tc.finding, findings)
			}
			page := string(ts.get("/ui/knowledge?q=aks-app-routing", "").body)
			if want := `<tr data-addon="aks-app-routing-nginx" data-support="` + tc.state + `">`; !strings.Contains(page, want) {
				t.Errorf("on %s the knowledge page lacks %s: %s", tc.day, want, page)
			}
			if tc.state == "ended" && strings.Contains(page, "supported<br>") {
				t.Errorf("on %s the page still calls the add-on supported", tc.day)
			}
		})
	}
}

// rke2-ingress-nginx's only interval is open at both ends it can be: every version
// (from "0.0.0"), up to Kubernetes 1.36 with no lower bound.
func TestTheKnowledgePageReadsAnOpenRangeAsOpen(t *testing.T) {
	ts := pushed(t, nil)
	row := regexp.MustCompile(`(?s)<tr data-addon="rke2-ingress-nginx".*?</tr>`).FindString(string(ts.get("/ui/knowledge?q=rke2-ingress", "").body))
	if !strings.Contains(row, `<li data-compat="">any version; Kubernetes up to 1.36`) {
		t.Errorf("rke2-ingress-nginx's interval does not read as any version up to 1.36: %s", row)
	}
	for _, bad := range []string{"0.0.0", "before –", "––", "– "} {
		if strings.Contains(row, bad) {
			t.Errorf("rke2-ingress-nginx's row shows %q: %s", bad, row)
		}
	}
}

func TestTheClusterPageLinksTheExportsOfAStoredEvaluation(t *testing.T) {
	ts := pushed(t, nil)
	prod := ts.idOf("prod")
	body := string(ts.get(fmt.Sprintf("/ui/clusters/%d", prod), "").body)
	links := regexp.MustCompile(`<a class="button" data-export="([a-z]+)" href="([^"]+)" download>`).FindAllStringSubmatch(body, -1)
	if len(links) < 2 {
		t.Fatalf("%d export links, want one per format: %s", len(links), body)
	}
	for _, l := range links {
		path := strings.ReplaceAll(l[2], "&amp;", "&")
		if r := ts.get(path, ""); r.status != 200 || !strings.Contains(r.header.Get("Content-Disposition"), "."+l[1]) {
			t.Errorf("the %s link %s answers %d %q", l[1], path, r.status, r.header.Get("Content-Disposition"))
		}
	}
	whatIf := string(ts.get(fmt.Sprintf("/ui/clusters/%d?target=1.35", prod), "").body)
	if strings.Contains(whatIf, `data-export=`) {
		t.Errorf("a what-if report links exports, which never what-if")
	}
}

// A team-scoped reader's page is its share judged now (a what-if of the stored
// evaluation's snapshot), and so is its export: the page offers it and says so.
func TestATeamScopedClusterPageSaysItsExportIsItsShareJudgedWhenDownloaded(t *testing.T) {
	ts := pushed(t, func(c *server.Config) { c.ReadToken = "fleet-read" })
	tok := ts.mintRead("data")
	id := ts.idAs(tok, "prod")
	page := string(ts.get(fmt.Sprintf("/ui/clusters/%d", id), tok).body)
	if !strings.Contains(page, "what-if evaluation of") {
		t.Fatalf("the scoped page does not say it is judged now: %s", page)
	}
	exports := regexp.MustCompile(`(?s)<p id="exports" class="exports" data-scoped="">Download your teams' share of this cluster, judged from the stored evaluation's snapshot when you download it, as this page is \(the file's evaluatedAt is that time\):(.*?)</p>`).FindStringSubmatch(page)
	if exports == nil {
		t.Fatalf("the scoped page's exports do not say what they hold: %s", page)
	}
	links := regexp.MustCompile(`data-export="([a-z]+)" href="([^"]+)"`).FindAllStringSubmatch(exports[1], -1)
	if len(links) < 2 {
		t.Fatalf("%d export links on the scoped page", len(links))
	}
	for _, l := range links {
		if r := ts.get(strings.ReplaceAll(l[2], "&amp;", "&"), tok); r.status != 200 {
			t.Errorf("the scoped %s export answers %d: %s", l[1], r.status, r.body)
		}
	}
	if fleet := string(ts.get(fmt.Sprintf("/ui/clusters/%d", ts.idAs("fleet-read", "prod")), "fleet-read").body); !strings.Contains(fleet, `<p id="exports" class="exports">Download this evaluation:`) {
		t.Errorf("a fleet reader's page lost its plain export line")
	}
}
