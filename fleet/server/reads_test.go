package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/inventory"
)

// otherCluster is a second cluster at 1.33 whose only namespace belongs to team platform.
func otherCluster(t *testing.T, uid string) *inventory.Document {
	t.Helper()
	doc := teamsInventory(t)
	doc.ClusterID, doc.ServerVersion = uid, "v1.33.2"
	doc.APIUsage = doc.APIUsage[:1]
	doc.APIUsage[0].Namespaces = map[string]int{"ops": 1}
	doc.APIUsage[0].Objects[0].Namespace = "ops"
	doc.Namespaces = []inventory.Namespace{{Name: "ops", Team: "platform"}}
	return doc
}

// pushed starts a server with the shared ingest token "shared" and pushes prod (1.32,
// teams payments and data) and ops (1.33, team platform).
func pushed(t *testing.T, edit func(*server.Config)) *testServer {
	t.Helper()
	ts := newServer(t, func(c *server.Config) {
		c.IngestToken = "shared"
		if edit != nil {
			edit(c)
		}
	})
	for name, doc := range map[string]*inventory.Document{"prod": teamsInventory(t), "ops": otherCluster(t, "ops-uid")} {
		if r := ts.push("shared", envelope(t, name, doc)); r.status != 202 {
			t.Fatalf("push %s: %d %s", name, r.status, r.body)
		}
	}
	return ts
}

// idOf answers the id an open read API gives cluster name.
func (ts *testServer) idOf(name string) int { return ts.idAs("", name) }

// idAs answers the id cluster name has in the list token reads.
func (ts *testServer) idAs(token, name string) int {
	ts.t.Helper()
	for _, c := range ts.get("/api/v1/clusters", token).json(ts.t)["clusters"].([]any) {
		if c := c.(map[string]any); c["name"] == name {
			return int(c["id"].(float64))
		}
	}
	ts.t.Fatalf("cluster %s not listed", name)
	return 0
}

func TestPerClusterReadsServeTheStoredEvaluationElseAWhatIf(t *testing.T) {
	ts := pushed(t, nil)
	prod := ts.idOf("prod")
	for _, tc := range []struct {
		name, query, source, target string
	}{
		{"the default target is the next minor, stored at ingest", "", "stored", "1.33"},
		{"a stored target is served as stored", "?target=1.33", "stored", "1.33"},
		{"a target never stored is a what-if", "?target=1.35", "what-if", "1.35"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ts.get(fmt.Sprintf("/api/v1/clusters/%d/report%s", prod, tc.query), "").json(t)
			rep := got["report"].(map[string]any)
			targets := rep["targets"].([]any)
			if got["source"] != tc.source || got["target"] != tc.target || len(targets) != 1 ||
				targets[0].(map[string]any)["target"] != tc.target {
				t.Errorf("report%s: source %v target %v with %d targets, want %s at %s alone", tc.query, got["source"], got["target"], len(targets), tc.source, tc.target)
			}
		})
	}
	hist := ts.get(fmt.Sprintf("/api/v1/clusters/%d/history?target=1.35", prod), "").json(t)["history"].([]any)
	if len(hist) != 0 {
		t.Errorf("a what-if was stored: history at 1.35 has %d points", len(hist))
	}
	for _, tc := range []struct{ name, path, says string }{
		{"a malformed target", "/report?target=banana", "target"},
		{"an unknown severity", "/findings?severity=fatal", "severity"},
		{"a zero history limit", "/history?limit=0", "limit"},
		{"a history limit past 1000", "/history?limit=1001", "limit"},
	} {
		t.Run(tc.name+" is unprocessable", func(t *testing.T) {
			r := ts.get(fmt.Sprintf("/api/v1/clusters/%d%s", prod, tc.path), "")
			if r.status != 422 || !strings.Contains(string(r.body), tc.says) {
				t.Errorf("%s: %d %s, want 422 naming %s", tc.path, r.status, r.body, tc.says)
			}
		})
	}
	for _, tc := range []struct{ name, path string }{
		{"an unknown id is not found", "/api/v1/clusters/999"},
		{"an unknown id's report is not found", "/api/v1/clusters/999/report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := ts.get(tc.path, ""); r.status != 404 || !strings.Contains(string(r.body), "cluster not found") {
				t.Errorf("%s: %d %s", tc.path, r.status, r.body)
			}
		})
	}
	if r := ts.get("/api/v1/clusters/abc", ""); r.status != 400 {
		t.Errorf("a non-integer id: %d %s, want 400", r.status, r.body)
	}
}

func TestFindingsAndTeamsOfACluster(t *testing.T) {
	ts := pushed(t, nil)
	prod := ts.idOf("prod")
	findings := func(query string) []string {
		var keys []string
		for _, f := range ts.get(fmt.Sprintf("/api/v1/clusters/%d/findings?target=1.33%s", prod, query), "").json(t)["findings"].([]any) {
			keys = append(keys, f.(map[string]any)["key"].(string))
		}
		return keys
	}
	if got := findings("&severity=blocker"); len(got) != 2 {
		t.Errorf("blockers: %v, want the Ingress and the PodSecurityPolicy", got)
	}
	if got := findings("&category=deprecated-api"); len(got) != 1 || got[0] != "deprecated-api/core/v1/Endpoints" {
		t.Errorf("deprecated-api findings: %v", got)
	}
	if got := findings("&category=no-such-category"); len(got) != 0 {
		t.Errorf("an unknown category matched %v", got)
	}
	teams := ts.get(fmt.Sprintf("/api/v1/clusters/%d/teams?target=1.33", prod), "").json(t)["teams"].(map[string]any)
	for _, team := range []string{"payments", "data", "(unattributed)"} {
		if teams[team] == nil {
			t.Errorf("teams %v lack %s", teams, team)
		}
	}
}

func TestHistoryIsOldestFirstAndLimitKeepsTheNewest(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	doc := teamsInventory(t)
	for i := range 3 {
		doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: fmt.Sprintf("extra-%d", i)})
		if r := ts.push("shared", envelope(t, "prod", doc)); r.status != 202 {
			t.Fatalf("push %d: %d %s", i, r.status, r.body)
		}
	}
	hist := ts.get(fmt.Sprintf("/api/v1/clusters/%d/history?target=1.33&limit=2", ts.idOf("prod")), "").json(t)["history"].([]any)
	if len(hist) != 2 {
		t.Fatalf("history limit=2 gave %d points", len(hist))
	}
	first, second := hist[0].(map[string]any)["snapshotId"].(float64), hist[1].(map[string]any)["snapshotId"].(float64)
	if first != 2 || second != 3 {
		t.Errorf("history snapshots %v, %v; want 2 then 3: the newest two, oldest first", first, second)
	}
}

func TestTheFleetServesStoredEvaluationsOnly(t *testing.T) {
	ts := pushed(t, func(c *server.Config) { c.Targets = []string{"1.34"} })
	fleet := ts.get("/api/v1/fleet", "").json(t)
	if got := fmt.Sprint(fleet["targets"]); got != "[1.33 1.34]" {
		t.Errorf("default columns %s, want [1.33 1.34]: each cluster's next minor and --targets", got)
	}
	rows := fleet["clusters"].([]any)
	if len(rows) != 2 || rows[0].(map[string]any)["name"] != "ops" {
		t.Fatalf("fleet rows %v, want ops then prod", rows)
	}
	ops, prod := rows[0].(map[string]any), rows[1].(map[string]any)
	if ops["cells"].(map[string]any)["1.33"] != nil || fmt.Sprint(ops["notApplicable"]) != "[1.33]" {
		t.Errorf("ops runs 1.33: cell %v, notApplicable %v; want null and [1.33]", ops["cells"].(map[string]any)["1.33"], ops["notApplicable"])
	}
	cell := prod["cells"].(map[string]any)["1.33"].(map[string]any)
	if cell["verdict"] != "blocked" || cell["outdated"] != false {
		t.Errorf("prod at 1.33: %v, want blocked and current", cell)
	}
	asked := ts.get("/api/v1/fleet?targets=1.36", "").json(t)
	if c := asked["clusters"].([]any)[1].(map[string]any)["cells"].(map[string]any); c["1.36"] != nil {
		t.Errorf("a target never stored has cell %v, want null: the fleet never evaluates", c["1.36"])
	}
	many := make([]string, 17)
	for i := range many {
		many[i] = fmt.Sprintf("1.%d", 40+i)
	}
	for _, q := range []string{"1.33,banana", strings.Join(many, ",")} {
		if r := ts.get("/api/v1/fleet?targets="+q, ""); r.status != 422 {
			t.Errorf("fleet?targets=%s: %d, want 422", q, r.status)
		}
	}
}

func TestFleetTeamsRollUpEachTeamsWorstVerdict(t *testing.T) {
	ts := pushed(t, nil)
	for _, bad := range []string{"banana", "1.x"} {
		if r := ts.get("/api/v1/fleet/teams?target="+bad, ""); r.status != 422 {
			t.Errorf("fleet/teams?target=%s: %d, want 422", bad, r.status)
		}
	}
	got := ts.get("/api/v1/fleet/teams?target=1.33", "").json(t)
	teams := got["teams"].(map[string]any)
	payments := teams["payments"].(map[string]any)
	if payments["verdict"] != "blocked" || fmt.Sprint(payments["clusters"]) != "[prod]" {
		t.Errorf("payments at 1.33: %v", payments)
	}
	if fmt.Sprint(got["missing"]) != "[]" || teams["platform"] != nil {
		t.Errorf("missing %v, platform %v: ops runs 1.33, so it is neither missing nor rolled up there", got["missing"], teams["platform"])
	}
	later := ts.get("/api/v1/fleet/teams?target=1.35", "").json(t)
	if fmt.Sprint(later["missing"]) != "[ops prod]" {
		t.Errorf("missing at 1.35 %v, want [ops prod]: neither was evaluated there", later["missing"])
	}
}

// Without a target each cluster is rolled up at its next minor, as fleet/findings and the
// dashboard's pages read it, not refused.
func TestFleetTeamsWithoutATargetReadEachClusterAtItsNextMinor(t *testing.T) {
	ts := pushed(t, nil)
	r := ts.get("/api/v1/fleet/teams", "")
	if r.status != 200 {
		t.Fatalf("fleet/teams without a target: %d %s, want 200", r.status, r.body)
	}
	got := r.json(t)
	findings := ts.get("/api/v1/fleet/findings", "").json(t)
	if got["target"] != "" || findings["target"] != "" {
		t.Errorf("target %q (findings %q), want \"\" for each cluster's next minor", got["target"], findings["target"])
	}
	// prod (1.32) and ops (1.33) are judged at their own next minors, 1.33 and 1.34.
	for _, tc := range []struct{ team, target string }{{"payments", "1.33"}, {"platform", "1.34"}} {
		at := ts.get("/api/v1/fleet/teams?target="+tc.target, "").json(t)["teams"].(map[string]any)[tc.team]
		if mine := got["teams"].(map[string]any)[tc.team]; at == nil || fmt.Sprint(mine) != fmt.Sprint(at) {
			t.Errorf("%s without a target: %v, want its rollup at %s %v", tc.team, mine, tc.target, at)
		}
	}
}

func TestATeamScopedTokenSeesOnlyItsTeamsClustersAndFindings(t *testing.T) {
	ts := pushed(t, nil)
	tok := ts.mintRead("payments")
	prod, ops := ts.idAs(tok, "prod"), ts.idAs(ts.mintRead("*"), "ops")
	if names := clusterNames(ts.get("/api/v1/clusters", tok).json(t)); names != "[prod]" {
		t.Errorf("payments lists %s, want [prod]", names)
	}
	outOfScope := ts.get(fmt.Sprintf("/api/v1/clusters/%d", ops), tok)
	unknown := ts.get("/api/v1/clusters/999", tok)
	if outOfScope.status != 404 || string(outOfScope.body) != string(unknown.body) {
		t.Errorf("an out-of-scope cluster answered %d %s; an unknown one %d %s: they must be the same", outOfScope.status, outOfScope.body, unknown.status, unknown.body)
	}
	for _, f := range ts.get(fmt.Sprintf("/api/v1/clusters/%d/findings?target=1.33", prod), tok).json(t)["findings"].([]any) {
		if teams := fmt.Sprint(f.(map[string]any)["teams"]); teams != "[payments]" && teams != "<nil>" {
			t.Errorf("payments sees a finding of %s; want its own or no team's", teams)
		}
	}
	teams := ts.get(fmt.Sprintf("/api/v1/clusters/%d/teams?target=1.33", prod), tok).json(t)["teams"].(map[string]any)
	if len(teams) != 1 || teams["payments"] == nil {
		t.Errorf("payments sees teams %v", teams)
	}
	rep := ts.get(fmt.Sprintf("/api/v1/clusters/%d/report?target=1.33", prod), tok).json(t)["report"].(map[string]any)
	target := rep["targets"].([]any)[0].(map[string]any)
	if target["verdict"] != "blocked" || target["blockers"].(float64) != 2 {
		t.Errorf("a scoped report's verdict %v with %v blockers, want its share's: blocked by its Ingress and the PodSecurityPolicy no team owns", target["verdict"], target["blockers"])
	}
	if rows := ts.get("/api/v1/fleet", tok).json(t)["clusters"].([]any); len(rows) != 1 {
		t.Errorf("payments' fleet has %d rows, want 1", len(rows))
	}
	if got := ts.get("/api/v1/fleet/teams?target=1.33", tok).json(t)["teams"].(map[string]any); len(got) != 1 {
		t.Errorf("payments' team rollup shows %v", got)
	}
}

func clusterNames(list map[string]any) string {
	var names []string
	for _, c := range list["clusters"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	return fmt.Sprint(names)
}

func TestAClusterThatStopsPushingTurnsStale(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	ts := newServer(t, func(c *server.Config) {
		c.IngestToken = "shared"
		c.Now = func() time.Time { return time.Unix(0, now.Load()) }
	})
	if r := ts.push("shared", envelope(t, "prod", teamsInventory(t))); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	stale := func() any {
		return ts.get("/api/v1/clusters", "").json(t)["clusters"].([]any)[0].(map[string]any)["stale"]
	}
	if stale() != false {
		t.Errorf("a cluster that just pushed is stale")
	}
	now.Add(int64(3 * time.Hour))
	if stale() != true {
		t.Errorf("a cluster silent for 3h is not stale (default --stale-after 2h)")
	}
}

func TestEvaluationsOfOtherBundlesAreOutdated(t *testing.T) {
	ts := pushed(t, nil)
	custom, err := engine.New(t.Context(), engine.WithPolicy("../../examples/policies"))
	if err != nil {
		t.Fatal(err)
	}
	later := newServerOn(t, ts.store, func(c *server.Config) { c.Engine = custom })
	prod := later.idOf("prod")
	latest := later.get("/api/v1/clusters", "").json(t)["clusters"].([]any)
	for _, c := range latest {
		if c := c.(map[string]any); c["name"] == "prod" && c["latest"].(map[string]any)["outdated"] != true {
			t.Errorf("prod's evaluation by other bundles is not outdated: %v", c["latest"])
		}
	}
	if got := later.get(fmt.Sprintf("/api/v1/clusters/%d/report?target=1.33", prod), "").json(t); got["outdated"] != true {
		t.Errorf("the stored report by other bundles says outdated %v", got["outdated"])
	}
}

func TestMetricsReportIngestsAndTheFleet(t *testing.T) {
	ts := pushed(t, nil)
	body := string(ts.get("/metrics", "").body)
	for _, want := range []string{
		`upgradescope_ingest_total{result="accepted"} 2`,
		`upgradescope_cluster_blockers{cluster="prod",target="1.33"} 2`,
		`upgradescope_cluster_verdict{cluster="prod",target="1.33",verdict="blocked"} 1`,
		`upgradescope_cluster_stale{cluster="ops"} 0`,
		`upgradescope_http_requests_total{code="202",route="snapshots"} 2`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestRetentionKeepsTheLatestSnapshotAndEveryFleetCell(t *testing.T) {
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	ts := newServer(t, func(c *server.Config) {
		c.IngestToken = "shared"
		c.Now = func() time.Time { return time.Unix(0, now.Load()) }
	})
	doc := teamsInventory(t)
	for i := range 3 {
		doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: fmt.Sprintf("extra-%d", i)})
		if r := ts.push("shared", envelope(t, "prod", doc)); r.status != 202 {
			t.Fatalf("push %d: %d %s", i, r.status, r.body)
		}
	}
	history := func() int {
		return len(ts.get(fmt.Sprintf("/api/v1/clusters/%d/history?target=1.33", ts.idOf("prod")), "").json(t)["history"].([]any))
	}
	now.Add(int64(100 * 24 * time.Hour))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { ts.srv.RunRetention(ctx, 90*24*time.Hour); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for history() != 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if n := history(); n != 1 {
		t.Errorf("after a 90-day retention pass 100 days on, history holds %d points, want 1: the latest", n)
	}
	cell := ts.get("/api/v1/fleet", "").json(t)["clusters"].([]any)[0].(map[string]any)["cells"].(map[string]any)["1.33"]
	if cell == nil {
		t.Errorf("retention took the fleet cell")
	}
}

func TestATeamWithoutFindingsStillSeesItsClusterAsReady(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	doc := otherCluster(t, "ops-uid")
	doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: "pay", Team: "payments"})
	if r := ts.push("shared", envelope(t, "ops", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	tok := ts.mintRead("payments")
	if names := clusterNames(ts.get("/api/v1/clusters", tok).json(t)); names != "[ops]" {
		t.Fatalf("payments owns a namespace of ops and lists %s", names)
	}
	rollup := ts.get("/api/v1/fleet/teams?target=1.34", tok).json(t)["teams"].(map[string]any)
	if p, _ := rollup["payments"].(map[string]any); p == nil || p["verdict"] != "ready" || p["worstScore"].(float64) != 100 {
		t.Errorf("payments, without findings of its own, rolls up as %v; want ready at 100", rollup["payments"])
	}
}

func TestATeamScopedReaderIsNotToldOtherTeamsObjects(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	doc := teamsInventory(t)
	// The Ingress finding spans shop (payments) and vault, a namespace of team security.
	doc.APIUsage[0].Count = 2
	doc.APIUsage[0].Namespaces = map[string]int{"shop": 1, "vault": 1}
	doc.APIUsage[0].Objects = append(doc.APIUsage[0].Objects, inventory.ObjectRef{Namespace: "vault", Name: "secret-ingress"})
	doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: "vault", Team: "security"})
	doc.Capabilities[inventory.CapHelm] = inventory.Capability{Available: false, Reason: "data/secret-release: forbidden", Skipped: []string{"data/secret-release"}}
	if r := ts.push("shared", envelope(t, "prod", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	tok := ts.mintRead("payments")
	id := ts.idAs(tok, "prod")
	for _, path := range []string{
		fmt.Sprintf("/api/v1/clusters/%d", id),
		fmt.Sprintf("/api/v1/clusters/%d/report?target=1.33", id),
		fmt.Sprintf("/api/v1/clusters/%d/report?target=1.35", id), // a what-if
		fmt.Sprintf("/api/v1/clusters/%d/findings?target=1.33", id),
	} {
		body := string(ts.get(path, tok).body)
		for _, secret := range []string{"vault", "secret-ingress", "secret-release"} {
			if strings.Contains(body, secret) {
				t.Errorf("payments reads %q in %s", secret, path)
			}
		}
		if !strings.Contains(path, "findings") && !strings.Contains(body, "helm") {
			t.Errorf("%s does not say helm was not assessed", path)
		}
	}
	whole := string(ts.get(fmt.Sprintf("/api/v1/clusters/%d/findings?target=1.33", id), ts.mintRead("*")).body)
	if !strings.Contains(whole, "secret-ingress") {
		t.Errorf("a fleet-wide reader does not see the object in vault")
	}
}

func TestADuplicateOfASnapshotWhoseEvaluationFailedIsEvaluated(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	broken := newServerOn(t, ts.store, func(c *server.Config) { c.IngestToken, c.Engine = "shared", spinningEngine(t) })
	doc := teamsInventory(t)
	if r := broken.push("shared", envelope(t, "prod", doc)); r.status != 202 {
		t.Fatalf("push to the failing server: %d %s", r.status, r.body)
	}
	r := ts.push("shared", envelope(t, "prod", doc))
	if r.status != 200 || r.json(t)["duplicate"] != true {
		t.Fatalf("the same inventory again: %d %s, want 200 duplicate", r.status, r.body)
	}
	c := ts.get("/api/v1/clusters", "").json(t)["clusters"].([]any)[0].(map[string]any)
	latest, _ := c["latest"].(map[string]any)
	if latest == nil || latest["snapshotId"] != c["latestSnapshotId"] || latest["outdated"] != false {
		t.Errorf("after the duplicate the latest snapshot has evaluation %v; want it evaluated and current", c["latest"])
	}
}

func TestAClusterIsJudgedFromItsEmulatedMinor(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	doc := teamsInventory(t)
	doc.ServerVersion, doc.EmulatedVersion = "v1.33.1", "1.32"
	r := ts.push("shared", envelope(t, "prod", doc))
	if fmt.Sprint(r.json(t)["evaluated"]) != "[1.33]" {
		t.Errorf("evaluated %v, want [1.33]: the cluster behaves as 1.32", r.json(t)["evaluated"])
	}
	c := ts.get("/api/v1/clusters", "").json(t)["clusters"].([]any)[0].(map[string]any)
	if c["defaultTarget"] != "1.33" || c["latest"] == nil {
		t.Errorf("defaultTarget %v latest %v, want 1.33 with its stored evaluation", c["defaultTarget"], c["latest"])
	}
}

func TestTargetsAreWrittenOneWayAndOnlyAfterTheRunningMinor(t *testing.T) {
	ts := pushed(t, func(c *server.Config) { c.Targets = []string{"1.034"} })
	prod := ts.idOf("prod")
	if got := fmt.Sprint(ts.get("/api/v1/fleet", "").json(t)["targets"]); got != "[1.33 1.34]" {
		t.Errorf("--targets 1.034 gives columns %s, want [1.33 1.34]", got)
	}
	for _, q := range []string{"01.33", "1.32", "1.20"} {
		if r := ts.get(fmt.Sprintf("/api/v1/clusters/%d/report?target=%s", prod, q), ""); r.status != 422 {
			t.Errorf("report?target=%s on a 1.32 cluster: %d, want 422", q, r.status)
		}
	}
}

func TestOperationalPathsAnswerAWrongMethodWith405(t *testing.T) {
	ts := newServer(t, nil)
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		if r := ts.do("POST", path, "", nil, nil); r.status != 405 || r.header.Get("Allow") != "GET" {
			t.Errorf("POST %s: %d Allow %q, want 405 Allow GET", path, r.status, r.header.Get("Allow"))
		}
	}
}

// spinningEngine is the built-in bundles and a custom pack that never ends, bounded at 300 ms.
func spinningEngine(t *testing.T) *engine.Engine {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "spin")
	spin := "package upgradescope.custom.spin\n\nfindings contains {\"key\": \"x/y\", \"category\": \"x\", \"severity\": \"info\", \"target\": t, \"title\": \"t\"} if {\n" +
		"\tsome t in input.targets\n\tsome i in numbers.range(1, 100000)\n\tsome j in numbers.range(1, 100000)\n\ti == j + 1000000\n}\n"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p.rego"), []byte(spin), 0o600); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(t.Context(), engine.WithPolicy(dir), engine.WithLimits(engine.Limits{Timeout: 300 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	return eng
}
