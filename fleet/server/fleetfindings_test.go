package server_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
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

// Issue 34: where every cluster stands at one target, and each finding key once across the
// fleet, read from the stored reports.

// hostileTitle is a title a spreadsheet would run as a formula.
const hostileTitle = "=HYPERLINK(\"https://evil.example\")"

// standingFleet is a server over one cluster in each standing at 1.35, two not evaluated:
//
//	a-ready      v1.34.2  ready at 1.35
//	b-blocked    v1.34.1  blocked: removed-api X (team-a, 3 objects), addon Y (no team, 1), warning Z (team-b, 2)
//	c-blocked    v1.33.4  blocked: removed-api X (team-b, 5 objects); at 1.34 too
//	d-unknown    v1.34.0  unknown: warning Z (team-a, 1)
//	e-there      v1.35.2  already runs 1.35
//	f-none       v1.34.3  nothing stored
//	g-noversion  ""       no version reported, nothing stored
func standingFleet(t *testing.T) *testServer {
	t.Helper()
	ts := newServer(t, func(c *server.Config) { c.Targets = []string{"1.35"} })
	x := func(team string, n int) report.Finding {
		return finding("removed-api/extensions/v1beta1/Ingress", "removed-api", report.SeverityBlocker, fmt.Sprintf("Ingress removed (%d objects)", n), team, n)
	}
	y := finding("addon-eol/ingress-nginx", "addon-eol", report.SeverityBlocker, hostileTitle, "", 1)
	z := func(team string, n int) report.Finding {
		return finding("deprecated-flag/kubelet/x", "kubelet", report.SeverityWarning, "a kubelet flag is deprecated", team, n)
	}
	key := bundlesKey(t)
	for i, c := range []struct {
		name, version string
		evals         map[string][]report.Finding
		verdict       string
	}{
		{"a-ready", "v1.34.2", map[string][]report.Finding{"1.35": nil}, "ready"},
		{"b-blocked", "v1.34.1", map[string][]report.Finding{"1.35": {x("team-a", 3), y, z("team-b", 2)}}, "blocked"},
		{"c-blocked", "v1.33.4", map[string][]report.Finding{"1.35": {x("team-b", 5)}, "1.34": {x("team-b", 5)}}, "blocked"},
		{"d-unknown", "v1.34.0", map[string][]report.Finding{"1.35": {z("team-a", 1)}}, "unknown"},
		{"e-there", "v1.35.2", nil, ""},
		{"f-none", "v1.34.3", nil, ""},
		{"g-noversion", "", nil, ""},
	} {
		in := store.Ingest{ClusterName: c.name, ClusterUID: fmt.Sprint("uid-", i), Hash: fmt.Sprint(i), ServerVersion: c.version, Inventory: []byte("x")}
		for target, findings := range c.evals {
			in.Evaluations = append(in.Evaluations, storedEvaluation(t, target, c.verdict, key, findings))
		}
		if _, err := ts.store.Ingest(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

func finding(key, category, severity, title, team string, objects int) report.Finding {
	f := report.Finding{Key: key, Category: category, Severity: severity, Title: title, ObjectsOmitted: objects}
	if team != "" {
		f.Teams = []string{team}
	}
	return f
}

// storedEvaluation is an evaluation at target whose stored report holds findings; each
// team owning one has the verdict and its own blockers counted.
func storedEvaluation(t testing.TB, target, verdict, key string, findings []report.Finding) store.Evaluation {
	tr := report.TargetResult{Target: target, Verdict: verdict, Score: 100, Findings: findings}
	teams := map[string]store.TeamCell{}
	for _, f := range findings {
		blocker := f.Severity == report.SeverityBlocker
		if blocker {
			tr.Blockers++
		} else {
			tr.Warnings++
		}
		for _, team := range f.Teams {
			cell := teams[team]
			cell.Verdict = verdict
			if blocker {
				cell.Blockers++
			}
			teams[team] = cell
		}
	}
	data, err := json.Marshal(report.Report{SchemaVersion: 1, Targets: []report.TargetResult{tr}})
	if err != nil {
		t.Fatal(err)
	}
	return store.Evaluation{Target: target, Verdict: verdict, Score: 100 - 10*tr.Blockers, Blockers: tr.Blockers, Warnings: tr.Warnings,
		EvaluatedAt: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), BundlesKey: key, Report: gzipBytes(t, data), Teams: teams}
}

func TestEveryClusterIsCountedInExactlyOneStandingAtATarget(t *testing.T) {
	ts := standingFleet(t)
	want := api.FleetCounts{Target: "1.35", Clusters: 7, Ready: 1, Blocked: 2, Unknown: 1, AlreadyThere: 1, NotEvaluated: 2}
	var fleet api.Fleet
	if err := json.Unmarshal(ts.get("/api/v1/fleet?target=1.35", "").body, &fleet); err != nil || fleet.Counts != want {
		t.Errorf("GET /api/v1/fleet?target=1.35 counts %+v (%v), want %+v", fleet.Counts, err, want)
	}
	// Each row says where it is counted: the rows' standings are the counts, one by one.
	rows := map[string]string{}
	for _, r := range fleet.Clusters {
		rows[r.Name] = r.Standing.Status + "@" + r.Standing.Target
	}
	wantRows := map[string]string{"a-ready": "ready@1.35", "b-blocked": "blocked@1.35", "c-blocked": "blocked@1.35",
		"d-unknown": "unknown@1.35", "e-there": "already-there@1.35", "f-none": "not-evaluated@1.35", "g-noversion": "not-evaluated@1.35"}
	if !maps.Equal(rows, wantRows) {
		t.Errorf("row standings %v, want %v", rows, wantRows)
	}
	body := string(ts.get("/ui/fleet?target=1.35", "").body)
	sum := 0
	for key, n := range map[string]int{"ready": 1, "blocked": 2, "unknown": 1, "already-there": 1, "none": 2} {
		got := count(t, body, key)
		if got != fmt.Sprint(n) {
			t.Errorf("the fleet page counts %s %s at 1.35, want %d", key, got, n)
		}
		sum += n
	}
	if !strings.Contains(body, fmt.Sprintf(`data-total="%d">%d clusters, each counted once`, sum, sum)) || sum != 7 {
		t.Errorf("the fleet page does not say the five counts sum to its 7 clusters")
	}
	// At each cluster's next minor nobody is already there; the version-less cluster is not evaluated.
	var next struct{ Counts api.FleetCounts }
	_ = json.Unmarshal(ts.get("/api/v1/fleet", "").body, &next)
	if c := next.Counts; c.Clusters != 7 || c.AlreadyThere != 0 || c.Ready+c.Blocked+c.Unknown+c.AlreadyThere+c.NotEvaluated != 7 {
		t.Errorf("counts at each next minor %+v: want all 7 counted, none already there", c)
	}
}

func TestTheFleetPageShowsEachClustersTopBlockerAndItsOwners(t *testing.T) {
	ts := standingFleet(t)
	body := string(ts.get("/ui/fleet?target=1.35", "").body)
	for _, tc := range []struct{ cluster, want string }{
		// X names 3 objects in b-blocked, Y one: the most objects rank first among blockers.
		{"b-blocked", `data-key="removed-api/extensions/v1beta1/Ingress">Ingress removed (3 objects)</a>`},
		{"b-blocked", `<span class="team">team-a</span>, <span class="team muted">no team</span>`},
		{"c-blocked", `<span class="team">team-b</span>`},
		{"e-there", `already there`},
		{"g-noversion", `not evaluated`},
	} {
		row := regexp.MustCompile(`<tr data-cluster="` + tc.cluster + `"[^\n]*`).FindString(body)
		if !strings.Contains(row, tc.want) {
			t.Errorf("%s's row lacks %s:\n%s", tc.cluster, tc.want, row)
		}
	}
	if !strings.Contains(body, `<a id="findings-link" href="/findings?target=1.35">`) {
		t.Error("the fleet page does not link the fleet's findings at its target")
	}
}

// fleetFindingsAt reads GET /api/v1/fleet/findings with query.
func fleetFindingsAt(t *testing.T, ts *testServer, query, token string) api.FleetFindings {
	t.Helper()
	r := ts.get("/api/v1/fleet/findings?"+query, token)
	var out api.FleetFindings
	if err := json.Unmarshal(r.body, &out); r.status != 200 || err != nil {
		t.Fatalf("?%s: %d %s", query, r.status, r.body)
	}
	return out
}

// summary is a finding as "key: clusters blocked, objects, [cluster/severity/objects…], teams".
func summaryOf(f api.FleetFinding) string {
	var cs []string
	for _, c := range f.Clusters {
		cs = append(cs, fmt.Sprintf("%s/%s/%d%v", c.Name, c.Severity, c.Objects, c.Teams))
	}
	return fmt.Sprintf("%s: %d blocked, %d objects, %s, teams %v", f.Key, f.ClustersBlocked, f.Objects, strings.Join(cs, " "), f.Teams)
}

func TestTheFleetsFindingsListEachKeyOnceMostClustersBlockedFirst(t *testing.T) {
	ts := standingFleet(t)
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"every finding at 1.35", "target=1.35", []string{
			"removed-api/extensions/v1beta1/Ingress: 2 blocked, 8 objects, b-blocked/blocker/3[team-a] c-blocked/blocker/5[team-b], teams [team-a team-b]",
			"addon-eol/ingress-nginx: 1 blocked, 1 objects, b-blocked/blocker/1[], teams []",
			"deprecated-flag/kubelet/x: 0 blocked, 3 objects, b-blocked/warning/2[team-b] d-unknown/warning/1[team-a], teams [team-a team-b]",
		}},
		{"a team keeps its findings and its clusters", "target=1.35&team=team-b", []string{
			"removed-api/extensions/v1beta1/Ingress: 1 blocked, 5 objects, c-blocked/blocker/5[team-b], teams [team-b]",
			"deprecated-flag/kubelet/x: 0 blocked, 2 objects, b-blocked/warning/2[team-b], teams [team-b]",
		}},
		{"no team keeps what no team owns", "target=1.35&team=(unattributed)", []string{
			"addon-eol/ingress-nginx: 1 blocked, 1 objects, b-blocked/blocker/1[], teams []",
		}},
		{"a category", "target=1.35&category=addon-eol", []string{
			"addon-eol/ingress-nginx: 1 blocked, 1 objects, b-blocked/blocker/1[], teams []",
		}},
		{"warnings only", "target=1.35&severity=warning", []string{
			"deprecated-flag/kubelet/x: 0 blocked, 3 objects, b-blocked/warning/2[team-b] d-unknown/warning/1[team-a], teams [team-a team-b]",
		}},
		{"each cluster's next minor: c-blocked at 1.34", "", []string{
			"removed-api/extensions/v1beta1/Ingress: 2 blocked, 8 objects, b-blocked/blocker/3[team-a] c-blocked/blocker/5[team-b], teams [team-a team-b]",
			"addon-eol/ingress-nginx: 1 blocked, 1 objects, b-blocked/blocker/1[], teams []",
			"deprecated-flag/kubelet/x: 0 blocked, 3 objects, b-blocked/warning/2[team-b] d-unknown/warning/1[team-a], teams [team-a team-b]",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fleetFindingsAt(t, ts, tc.query, "")
			var lines []string
			for _, f := range got.Findings {
				lines = append(lines, summaryOf(f))
			}
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("?%s:\n%s\nwant\n%s", tc.query, strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
			if c := got.Counts; c.Clusters != 7 || c.Ready+c.Blocked+c.Unknown+c.AlreadyThere+c.NotEvaluated != 7 {
				t.Errorf("?%s: counts %+v do not sum to the 7 clusters", tc.query, c)
			}
		})
	}
	if f := fleetFindingsAt(t, ts, "target=1.35", "").Findings[0]; f.Title != "Ingress removed" || f.Severity != "blocker" || f.Category != "removed-api" {
		t.Errorf("the first finding reads %q, %s, %s; want b-blocked's title (first by name) without its count, blocker, removed-api", f.Title, f.Severity, f.Category)
	}
}

// The findings name the bundles they were judged with in the same answer, so a reader
// does not pair them with another moment's GET /api/v1/fleet.
func TestTheFleetsFindingsNameTheBundlesTheServerJudgesWith(t *testing.T) {
	ts := standingFleet(t)
	var fleet api.Fleet
	if r := ts.get("/api/v1/fleet", ""); r.status != 200 || json.Unmarshal(r.body, &fleet) != nil {
		t.Fatalf("GET /api/v1/fleet: %d %s", r.status, r.body)
	}
	got := fleetFindingsAt(t, ts, "target=1.35", "").Bundles
	if len(got) == 0 || !slices.Equal(got, fleet.Bundles) {
		t.Errorf("the findings' bundles %v, the fleet's %v", got, fleet.Bundles)
	}
}

func TestTheFleetsFindingsAsCSVDefuseFormulas(t *testing.T) {
	ts := standingFleet(t)
	for _, r := range []response{
		ts.get("/api/v1/fleet/findings?target=1.35&format=csv", ""),
		ts.do("GET", "/api/v1/fleet/findings?target=1.35", "", nil, http.Header{"Accept": {"text/csv"}}),
	} {
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/csv") ||
			r.header.Get("Content-Disposition") != `attachment; filename="upgradescope-fleet-findings-1.35.csv"` {
			t.Fatalf("CSV: %d %v", r.status, r.header)
		}
		rows, err := csv.NewReader(strings.NewReader(string(r.body))).ReadAll()
		if err != nil {
			t.Fatalf("the CSV does not parse: %v", err)
		}
		if len(rows) != 1+5 || strings.Join(rows[0], ",") != "key,title,category,severity,clusters_blocked,objects_total,cluster,cluster_version,target,cluster_severity,cluster_objects,teams" {
			t.Fatalf("CSV has %d rows, header %v; want the header and one row per finding and cluster (5)", len(rows), rows[0])
		}
		if got := strings.Join(rows[1], ","); got != "removed-api/extensions/v1beta1/Ingress,Ingress removed,removed-api,blocker,2,8,b-blocked,v1.34.1,1.35,blocker,3,team-a" {
			t.Errorf("the first row reads %s", got)
		}
		if rows[3][1] != "'"+hostileTitle {
			t.Errorf("a title starting with = is written %q, want it prefixed with '", rows[3][1])
		}
	}
	if r := ts.get("/api/v1/fleet/findings?format=xml", ""); r.status != 422 || !strings.Contains(string(r.body), "format") {
		t.Errorf("format=xml: %d %s", r.status, r.body)
	}
}

func TestTheFleetsFindingsRefuseABadQueryNamingTheParameter(t *testing.T) {
	ts := standingFleet(t)
	for query, want := range map[string]string{"target=1.x": "target", "target=1.35.2": "target", "severity=info": "severity",
		"team=" + strings.Repeat("t", 300): "team"} {
		r := ts.get("/api/v1/fleet/findings?"+query, "")
		if r.status != 422 || !strings.HasPrefix(r.json(t)["error"].(string), want) {
			t.Errorf("?%s: %d %s", query, r.status, r.body)
		}
	}
}

func TestTheFindingsPageListsTheFleetsBlockersAndLinksTheirCSV(t *testing.T) {
	ts := standingFleet(t)
	body := string(ts.get("/ui/findings?target=1.35", "").body)
	keys := regexp.MustCompile(`<tr data-key="([^"]*)"`).FindAllStringSubmatch(body, -1)
	if len(keys) != 2 || keys[0][1] != "removed-api/extensions/v1beta1/Ingress" || keys[1][1] != "addon-eol/ingress-nginx" {
		t.Errorf("the findings page lists %v, want the two blockers, most clusters blocked first", keys)
	}
	for _, want := range []string{
		`<a id="findings-csv" data-export="csv" href="/api/v1/fleet/findings?format=csv&amp;severity=blocker&amp;target=1.35">`,
		`<a class="cluster" data-cluster="c-blocked" href="/clusters/3?finding=removed-api%2Fextensions%2Fv1beta1%2FIngress&amp;target=1.35">`,
		`<option value="team-b">team-b</option>`, `<option value="addon-eol">addon-eol</option>`,
		`=HYPERLINK(&#34;https://evil.example&#34;)`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the findings page lacks %s", want)
		}
	}
	if all := string(ts.get("/ui/findings?target=1.35&severity=all", "").body); !strings.Contains(all, `<tr data-key="deprecated-flag/kubelet/x" data-severity="warning">`) {
		t.Error("severity=all does not list the warning")
	}
}

// A team-scoped token's findings are its share's: its teams' objects and no team's, never
// another team's (TestEveryReadOfATeamScopedTokenIsTheSameWhetherOrNotOtherTeamsHaveObjects
// holds the endpoint to the same bytes with and without the other team's objects).
func TestATeamTokensFleetFindingsHoldItsShareOnly(t *testing.T) {
	s := newShareServer(t, true)
	fleet, payments := fleetFindingsAt(t, s.testServer, "target=1.34", s.fleet), fleetFindingsAt(t, s.testServer, "target=1.34", s.payments)
	teamsOf := func(ff api.FleetFindings) (teams []string, clusters int) {
		seen := map[string]bool{}
		for _, f := range ff.Findings {
			for _, team := range f.Teams {
				if !seen[team] {
					seen[team] = true
					teams = append(teams, team)
				}
			}
		}
		return teams, ff.Counts.Clusters
	}
	if teams, n := teamsOf(fleet); !strings.Contains(fmt.Sprint(teams), "data") || n != 2 {
		t.Errorf("the fleet-wide reader's findings name teams %v over %d clusters; want data's among them, both clusters", teams, n)
	}
	teams, n := teamsOf(payments)
	if strings.Contains(fmt.Sprint(teams), "data") || n != 1 || len(payments.Findings) == 0 {
		t.Errorf("payments' findings name teams %v over %d clusters (%d findings); want its own and no team's on prod alone", teams, n, len(payments.Findings))
	}
	if body := s.get("/api/v1/fleet/findings?target=1.34&team=data", s.payments).body; strings.Contains(string(body), `"clusterId"`) {
		t.Errorf("payments filtering on team data reads clusters: %s", body)
	}
}

// A summary is kept by evaluation id: a new evaluation at a cell is read, the old one
// forgotten, so the page follows the store.
func TestTheTopBlockerFollowsANewEvaluation(t *testing.T) {
	ts := standingFleet(t)
	if body := string(ts.get("/ui/fleet?target=1.35", "").body); !strings.Contains(body, "Ingress removed (3 objects)") {
		t.Fatal("b-blocked's top blocker is not shown before the new evaluation")
	}
	in := store.Ingest{ClusterName: "b-blocked", ClusterUID: "uid-1", Hash: "new", ServerVersion: "v1.34.1", Inventory: []byte("x"),
		Evaluations: []store.Evaluation{storedEvaluation(t, "1.35", "blocked", bundlesKey(t),
			[]report.Finding{finding("removed-api/batch/v1beta1/CronJob", "removed-api", report.SeverityBlocker, "CronJob removed", "team-c", 9)})}}
	if _, err := ts.store.Ingest(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`<tr data-cluster="b-blocked"[^\n]*`).FindString(string(ts.get("/ui/fleet?target=1.35", "").body))
	if !strings.Contains(row, ">CronJob removed</a>") || !strings.Contains(row, `<span class="team">team-c</span>`) || strings.Contains(row, "Ingress") {
		t.Errorf("after a new evaluation b-blocked reads:\n%s\nwant its new top blocker and owner", row)
	}
}
