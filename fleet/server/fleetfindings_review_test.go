package server_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/report"
)

// The fleet at 1.36 and its findings as the issue 34 review read them: titles without one
// cluster's count, each cluster's teams, a team blocked only by blockers no team owns, the
// page's severity and target taken by the API, owners of a ready cluster, an unknown
// cluster's cause.

// reviewFleet is a server over five clusters, evaluated at 1.36 (and checkout-prod at its
// next minor, 1.24), their team cells as report.JudgeTeam makes them:
//
//	checkout-prod  v1.23.5  1.24 ready; 1.36 blocked: PSP (no team), checkout's own blocker
//	obs-prod       v1.35.2  blocked: FlowSchema (no team); observability has namespaces, no blocker
//	pay-prod-eu    v1.35.1  blocked: CronJob (payments, 1 object)
//	pay-prod-us    v1.35.1  blocked: CronJob (payments, 3 objects); observability ready there
//	data-lake      v1.35.0  unknown: 60 probes of kb not collected (team data)
func reviewFleet(t *testing.T) *testServer {
	t.Helper()
	ts := newServer(t, func(c *server.Config) { c.Targets = []string{"1.36"} })
	cronJob := func(n int) report.Finding {
		f := finding("removed-api/batch/v1beta1/CronJob", "removed-api", report.SeverityBlocker,
			fmt.Sprintf("batch/v1beta1 CronJob removed in 1.25 (%s)", plural(n, "object")), "payments", n)
		return f
	}
	psp := finding("removed-api/policy/v1beta1/PodSecurityPolicy", "removed-api", report.SeverityBlocker, "policy/v1beta1 PodSecurityPolicy removed in 1.25 (2 objects)", "", 2)
	flow := finding("removed-api/flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema", "removed-api", report.SeverityBlocker,
		"flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema removed in 1.32 (1 object)", "", 1)
	own := finding("addon-eol/checkout-gateway", "addon-eol", report.SeverityBlocker, "checkout-gateway is end-of-life", "checkout", 1)
	var probes []report.Gap
	for i := range 60 {
		probes = append(probes, report.Gap{Capability: fmt.Sprintf("probes/kb/p%02d", i), Required: true, Reason: "not collected: the agent predates it"})
	}
	cell := func(verdict string, blockers int) store.TeamCell {
		return store.TeamCell{Verdict: verdict, Blockers: blockers}
	}
	type eval struct {
		target, verdict string
		findings        []report.Finding
		gaps            []report.Gap
		teams           map[string]store.TeamCell
	}
	for i, c := range []struct {
		name, version string
		evals         []eval
	}{
		{"checkout-prod", "v1.23.5", []eval{
			{"1.24", "ready", nil, nil, map[string]store.TeamCell{"checkout": cell("ready", 0), report.Unattributed: cell("ready", 0)}},
			{"1.36", "blocked", []report.Finding{psp, own}, nil, map[string]store.TeamCell{"checkout": cell("blocked", 1), report.Unattributed: cell("blocked", 1)}}}},
		{"obs-prod", "v1.35.2", []eval{{"1.36", "blocked", []report.Finding{flow}, nil, map[string]store.TeamCell{"observability": cell("blocked", 0)}}}},
		{"pay-prod-eu", "v1.35.1", []eval{{"1.36", "blocked", []report.Finding{cronJob(1)}, nil, map[string]store.TeamCell{"payments": cell("blocked", 1)}}}},
		{"pay-prod-us", "v1.35.1", []eval{{"1.36", "blocked", []report.Finding{cronJob(3)}, nil,
			map[string]store.TeamCell{"payments": cell("blocked", 1), "observability": cell("ready", 0)}}}},
		{"data-lake", "v1.35.0", []eval{{"1.36", "unknown", nil, probes, map[string]store.TeamCell{"data": cell("unknown", 0)}}}},
	} {
		in := store.Ingest{ClusterName: c.name, ClusterUID: fmt.Sprint("uid-", i), Hash: fmt.Sprint(i), ServerVersion: c.version, Inventory: []byte("x")}
		for _, e := range c.evals {
			in.Evaluations = append(in.Evaluations, reviewEvaluation(t, e.target, e.verdict, e.findings, e.gaps, e.teams))
		}
		if _, err := ts.store.Ingest(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// reviewEvaluation is an evaluation at target whose stored report holds findings and gaps,
// with the team cells given.
func reviewEvaluation(t *testing.T, target, verdict string, findings []report.Finding, gaps []report.Gap, teams map[string]store.TeamCell) store.Evaluation {
	t.Helper()
	tr := report.TargetResult{Target: target, Verdict: verdict, Score: 100, Findings: findings, NotAssessed: gaps}
	for _, f := range findings {
		if f.Severity == report.SeverityBlocker {
			tr.Blockers++
		}
	}
	data, err := json.Marshal(report.Report{SchemaVersion: 1, Targets: []report.TargetResult{tr}})
	if err != nil {
		t.Fatal(err)
	}
	return store.Evaluation{Target: target, Verdict: verdict, Score: 100 - 10*tr.Blockers, Blockers: tr.Blockers,
		EvaluatedAt: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), BundlesKey: bundlesKey(t), Report: gzipBytes(t, data), Teams: teams}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// rowOf is the fleet or findings table row whose attr is value.
func rowOf(body, attr, value string) string {
	return regexp.MustCompile(`<tr ` + attr + `="` + regexp.QuoteMeta(value) + `"[^\n]*`).FindString(body)
}

func TestAFleetFindingsTitleCarriesNoClustersCount(t *testing.T) {
	ts := reviewFleet(t)
	const want = "batch/v1beta1 CronJob removed in 1.25"
	ff := fleetFindingsAt(t, ts, "target=1.36", "")
	i := slices.IndexFunc(ff.Findings, func(f api.FleetFinding) bool { return f.Key == "removed-api/batch/v1beta1/CronJob" })
	if i < 0 || ff.Findings[i].Title != want || ff.Findings[i].Objects != 4 {
		t.Fatalf("the CronJob finding reads %+v; want title %q beside 4 objects", ff.Findings[i], want)
	}
	rows, err := csv.NewReader(strings.NewReader(string(ts.get("/api/v1/fleet/findings?target=1.36&format=csv", "").body))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		if r[0] == "removed-api/batch/v1beta1/CronJob" && (r[1] != want || r[5] != "4") {
			t.Errorf("the CSV's CronJob row reads title %q, objects %s; want %q, 4", r[1], r[5], want)
		}
	}
	page := string(ts.get("/ui/findings?target=1.36", "").body)
	if row := rowOf(page, "data-key", "removed-api/batch/v1beta1/CronJob"); !strings.Contains(row, `class="name">`+want+`<br>`) {
		t.Errorf("the findings page's CronJob row does not read %q:\n%s", want, row)
	}
	// A cluster's own row keeps its count: it is that cluster's.
	if row := rowOf(string(ts.get("/ui/fleet?target=1.36", "").body), "data-cluster", "pay-prod-us"); !strings.Contains(row, "removed in 1.25 (3 objects)</a>") {
		t.Errorf("pay-prod-us's top blocker does not keep its own count:\n%s", row)
	}
}

func TestTheFindingsPageNamesTheTeamsOfEachCluster(t *testing.T) {
	ts := reviewFleet(t)
	page := string(ts.get("/ui/findings?target=1.36", "").body)
	for key, want := range map[string][]string{
		"removed-api/batch/v1beta1/CronJob": {
			`data-cluster="pay-prod-eu" href="/clusters/3?finding=removed-api%2Fbatch%2Fv1beta1%2FCronJob&amp;target=1.36">pay-prod-eu</a> (<span class="team">payments</span>) <span class="muted">1 object, blocker</span>`,
			`>pay-prod-us</a> (<span class="team">payments</span>) <span class="muted">3 objects, blocker</span>`},
		"removed-api/policy/v1beta1/PodSecurityPolicy": {`>checkout-prod</a> (<span class="team muted">no team</span>) <span class="muted">2 objects, blocker</span>`},
	} {
		row := rowOf(page, "data-key", key)
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("%s's row lacks %s:\n%s", key, w, row)
			}
		}
	}
}

func TestATeamFilterSaysWhereBlockersNoTeamOwnsBlockTheTeam(t *testing.T) {
	ts := reviewFleet(t)
	page := string(ts.get("/ui/findings?target=1.36&team=observability", "").body)
	if rowOf(page, "data-key", "") != "" || strings.Contains(page, "<tr data-key=") {
		t.Errorf("observability owns no finding, yet the page lists some")
	}
	for _, want := range []string{
		`<option value="observability" selected>observability</option>`,
		`<p id="unowned-note" class="banner" role="status">observability is blocked on 1 cluster by blockers no team owns`,
		`<a href="/clusters/2?target=1.36">obs-prod</a>`,
		`<a id="unowned-link" href="/findings?severity=blocker&amp;target=1.36&amp;team=%28unattributed%29">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("team=observability: the page lacks %s", want)
		}
	}
	if strings.Contains(page, "pay-prod-us</a>") {
		t.Error("the note names pay-prod-us, where observability is ready: another team's blocker does not block it")
	}
	// The note's link lists what it promises: the blockers no team owns, obs-prod's among them.
	unowned := string(ts.get("/ui/findings?severity=blocker&target=1.36&team=%28unattributed%29", "").body)
	if rowOf(unowned, "data-key", "removed-api/flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema") == "" {
		t.Error("the note's link does not list obs-prod's FlowSchema blocker")
	}
	// Every team with namespaces in the fleet is offered, owning findings or not; no team last.
	options := regexp.MustCompile(`<option value="([^"]*)"`).FindAllStringSubmatch(regexp.MustCompile(`(?s)<select id="team".*?</select>`).FindString(page), -1)
	var got []string
	for _, o := range options {
		got = append(got, o[1])
	}
	if want := []string{"", "checkout", "data", "observability", "payments", report.Unattributed}; !slices.Equal(got, want) {
		t.Errorf("the team control offers %q, want %q", got, want)
	}
	if page := string(ts.get("/ui/findings?target=1.36&team=payments", "").body); strings.Contains(page, "unowned-note") {
		t.Error("payments, blocked by its own blocker only, is told of blockers no team owns")
	}
}

func TestTheFindingsAPITakesThePagesSeverity(t *testing.T) {
	ts := reviewFleet(t)
	keys := func(query string) []string {
		var out []string
		for _, f := range fleetFindingsAt(t, ts, query, "").Findings {
			out = append(out, f.Key)
		}
		return out
	}
	if all, absent := keys("target=1.36&severity=all"), keys("target=1.36"); !slices.Equal(all, absent) || len(all) != 4 {
		t.Errorf("severity=all lists %v, no severity %v; want the same four findings", all, absent)
	}
	// The page's form spells the blockers' option, so its address reads the same in the API.
	page := string(ts.get("/ui/findings?target=1.36", "").body)
	if !strings.Contains(page, `<option value="blocker" selected>blockers</option>`) {
		t.Error("the findings page's default severity is not the spelled-out blocker option")
	}
	for _, query := range []string{"target=1.36&team=&category=&severity=blocker", "target=1.36&team=payments&category=removed-api&severity=all"} {
		listed := regexp.MustCompile(`<tr data-key="([^"]*)"`).FindAllStringSubmatch(string(ts.get("/ui/findings?"+query, "").body), -1)
		var want []string
		for _, m := range listed {
			want = append(want, m[1])
		}
		if got := keys(query); !slices.Equal(got, want) {
			t.Errorf("?%s: the API lists %v, the page %v", query, got, want)
		}
	}
	if r := ts.get("/api/v1/fleet/findings?severity=info", ""); r.status != 422 || !strings.Contains(r.json(t)["error"].(string), "blocker, warning or all") {
		t.Errorf("severity=info: %d %s", r.status, r.body)
	}
}

func TestEveryPageTakesATargetTheFleetHasNoColumnFor(t *testing.T) {
	ts := reviewFleet(t)
	for _, path := range []string{"/ui/fleet", "/ui/findings", "/ui/teams", "/api/v1/fleet/findings", "/api/v1/fleet"} {
		r := ts.get(path+"?target=1.99", "")
		if r.status != 200 {
			t.Errorf("%s?target=1.99: %d %s; want the fleet at 1.99, not evaluated", path, r.status, r.body)
			continue
		}
		if strings.HasPrefix(path, "/api/") {
			var ans struct {
				Counts struct{ Clusters, NotEvaluated int }
			}
			if err := json.Unmarshal(r.body, &ans); err != nil || ans.Counts.Clusters != 5 || ans.Counts.NotEvaluated != 5 {
				t.Errorf("%s?target=1.99 counts %+v (%v), want 5 clusters not evaluated", path, ans.Counts, err)
			}
			continue
		}
		body := string(r.body)
		menu := regexp.MustCompile(`(?s)<select id="(?:teams-)?target".*?</select>`).FindString(body)
		if !strings.Contains(menu, `<option value="1.99" selected>Kubernetes 1.99</option>`) || strings.Contains(menu, `<option value="" selected>`) {
			t.Errorf("%s?target=1.99: the Judge at control does not show 1.99 chosen", path)
		}
		if path != "/ui/teams" && (!strings.Contains(body, `id="off-target"`) || count(t, body, "none") != "5") {
			t.Errorf("%s?target=1.99: no word that the fleet evaluates no cluster there, or the 5 not counted as not evaluated", path)
		}
	}
	for _, path := range []string{"/ui/fleet", "/ui/findings", "/ui/teams", "/api/v1/fleet/findings", "/api/v1/fleet"} {
		for _, bad := range []string{"1.x", "1.35.2"} {
			if r := ts.get(path+"?target="+url.QueryEscape(bad), ""); r.status != 422 || !strings.HasPrefix(r.json(t)["error"].(string), "target") {
				t.Errorf("%s?target=%s: %d %s; want 422 naming target", path, bad, r.status, r.body)
			}
		}
	}
	if body := string(ts.get("/ui/fleet?target=1.36", "").body); strings.Contains(body, `id="off-target"`) {
		t.Error("the fleet page says 1.36, one of its columns, is not a target it evaluates")
	}
}

func TestAReadyClustersOwnersAreTheTeamsWithNamespacesInIt(t *testing.T) {
	ts := reviewFleet(t)
	for _, tc := range []struct{ query, want string }{
		// At its next minor, 1.24, checkout-prod is ready: its teams, not "no team".
		{"", `<td data-label="Owning teams"><span class="team">checkout</span></td>`},
		// At 1.36 it is blocked by checkout's blocker and one no team owns: no team last.
		{"?target=1.36", `<td data-label="Owning teams"><span class="team">checkout</span>, <span class="team muted">no team</span></td>`},
	} {
		if row := rowOf(string(ts.get("/ui/fleet"+tc.query, "").body), "data-cluster", "checkout-prod"); !strings.Contains(row, tc.want) {
			t.Errorf("/ui/fleet%s: checkout-prod's row lacks %s:\n%s", tc.query, tc.want, row)
		}
	}
}

func TestAnUnknownRowSaysWhatWasNotAssessed(t *testing.T) {
	ts := reviewFleet(t)
	row := rowOf(string(ts.get("/ui/fleet?target=1.36", "").body), "data-cluster", "data-lake")
	if want := `<td class="top" data-label="Top blocker"><a class="cause" href="/clusters/5?target=1.36#gaps">not assessed: 60 probes of kb</a></td>`; !strings.Contains(row, want) {
		t.Errorf("data-lake's row lacks %s:\n%s", want, row)
	}
}
