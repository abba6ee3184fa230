package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
)

// gateReport is the part of a gate's JSON report the cluster-context tests read.
type gateReport struct {
	Targets []struct {
		Verdict  string
		Score    int
		Blockers int
		Findings []struct {
			Key, Severity, Source string
			Objects               []struct{ Namespace, Name, File string }
		}
		Cluster *struct {
			Name       string
			SnapshotID int64
			Verdict    string
			Blockers   int
		}
	}
}

func (g gateReport) sources() map[string]string {
	out := map[string]string{}
	for _, f := range g.Targets[0].Findings {
		out[f.Key] = f.Source
	}
	return out
}

// contextServer holds cluster "teams" (testdata/teams: 1.32, blocked at 1.33 by Ingress shop/a
// of team payments and the unattributed PodSecurityPolicy "restricted").
func contextServer(t *testing.T) *testServer {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	if r := ts.push("shared", envelope(t, "teams", teamsInventory(t))); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	return ts
}

func (ts *testServer) gateAgainst(token, query, manifest string) (response, gateReport) {
	ts.t.Helper()
	r := ts.do("POST", "/api/v1/gate?target=1.33&"+query, token, []byte(manifest), yamlBody)
	var rep gateReport
	if r.status == 200 || r.status == 422 {
		if err := json.Unmarshal(r.body, &rep); err != nil || len(rep.Targets) != 1 {
			ts.t.Fatalf("gate answer %d is not a one-target report: %v: %s", r.status, err, r.body)
		}
	}
	return r, rep
}

func ingress(ns, name string) string {
	return fmt.Sprintf("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: %s, namespace: %s}\nspec: {}\n", name, ns)
}

func TestAGateAgainstAClusterCountsOnlyWhatTheManifestsIntroduce(t *testing.T) {
	ts := contextServer(t)
	id := ts.idOf("teams")
	ingressKey, pspKey, endpointsKey := "removed-api/extensions/v1beta1/Ingress", "removed-api/policy/v1beta1/PodSecurityPolicy",
		"deprecated-api/core/v1/Endpoints"
	cases := []struct {
		name, manifest            string
		status                    int
		verdict, clusterVerdict   string
		sources                   map[string]string
		blockers, clusterBlockers int
	}{
		{"re-applying the object the cluster already has passes", ingress("shop", "a"), 200, "ready", "blocked",
			map[string]string{ingressKey: "cluster", pspKey: "cluster", endpointsKey: "cluster"}, 0, 2},
		{"a new object at a removed API fails", ingress("shop", "a") + "---\n" + ingress("shop", "b"), 422, "blocked", "blocked",
			map[string]string{ingressKey: "manifest", pspKey: "cluster", endpointsKey: "cluster"}, 1, 2},
		{"moving to the served API passes, the cluster still blocked by its live PodSecurityPolicy",
			"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: a, namespace: shop}\nspec: {}\n", 200, "ready", "blocked",
			map[string]string{pspKey: "cluster", endpointsKey: "cluster"}, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, ref := range []string{"teams", fmt.Sprint(id)} {
				r, rep := ts.gateAgainst("", "cluster="+ref, c.manifest)
				if r.status != c.status || r.header.Get("X-Upgradescope-Verdict") != c.verdict ||
					r.header.Get("X-Upgradescope-Cluster-Verdict") != c.clusterVerdict {
					t.Fatalf("cluster=%s: %d verdict %q cluster %q, want %d %q %q: %s", ref, r.status,
						r.header.Get("X-Upgradescope-Verdict"), r.header.Get("X-Upgradescope-Cluster-Verdict"),
						c.status, c.verdict, c.clusterVerdict, r.body)
				}
				tr := rep.Targets[0]
				if got := rep.sources(); fmt.Sprint(got) != fmt.Sprint(c.sources) {
					t.Errorf("cluster=%s: finding sources %v, want %v", ref, got, c.sources)
				}
				if tr.Blockers != c.blockers || tr.Cluster == nil || tr.Cluster.Name != "teams" ||
					tr.Cluster.Blockers != c.clusterBlockers || tr.Cluster.SnapshotID < 1 {
					t.Errorf("cluster=%s: blockers %d cluster %+v, want %d and %d for cluster teams", ref, tr.Blockers,
						tr.Cluster, c.blockers, c.clusterBlockers)
				}
			}
		})
	}
}

// An object the manifests write is judged as they write it: the finding names the manifest's
// copy with its file, not the live one.
func TestAGateAgainstAClusterJudgesTheManifestsCopyOfAnObject(t *testing.T) {
	ts := contextServer(t)
	_, rep := ts.gateAgainst("", "cluster=teams", ingress("shop", "a"))
	for _, f := range rep.Targets[0].Findings {
		if strings.Contains(f.Key, "Ingress") && (len(f.Objects) != 1 || f.Objects[0].File != "manifests.yaml") {
			t.Errorf("the Ingress finding should name the manifest's copy alone: %+v", f)
		}
	}
}

// Rules that read the live objects beside a Helm release's stored manifest still see them:
// a harmless body does not turn the release's blocker into one it introduced.
func TestAHarmlessBodyPassesAgainstAClusterWithHelmReleases(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	doc, err := inventory.ReadFile("../../testdata/helm-stored-object-flagged-live/inventory.json")
	if err != nil {
		t.Fatal(err)
	}
	eng, _ := sharedEngine()
	probetest.FoundNothing(doc, eng.Observe().Probes)
	if r := ts.push("shared", envelope(t, "helm", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: platform}\ndata: {a: b}\n"
	r, rep := ts.gateAgainst("", "cluster=helm", cm)
	if r.status != 200 || rep.Targets[0].Cluster == nil || rep.Targets[0].Cluster.Verdict != "blocked" {
		t.Errorf("a ConfigMap against a cluster blocked by its release: %d %s", r.status, r.body)
	}
	for key, source := range rep.sources() {
		if source != "cluster" {
			t.Errorf("%s is %s; a ConfigMap introduces nothing", key, source)
		}
	}
}

// A cluster's name may be all digits: a name is looked up before an id.
func TestAGateFindsAClusterByNameBeforeID(t *testing.T) {
	ts := contextServer(t)
	other := teamsInventory(t)
	other.ClusterID = "another-uid"
	other.APIUsage = []inventory.APIUsage{}
	if r := ts.push("shared", envelope(t, "1", other)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	if _, rep := ts.gateAgainst("", "cluster=1", ingress("shop", "a")); rep.Targets[0].Cluster.Name != "1" {
		t.Errorf("cluster=1 judged against %q, want the cluster named 1", rep.Targets[0].Cluster.Name)
	}
}

// A team-scoped token judges its teams' share and what no team owns: one in a namespace no
// team owns counts for every team (whatever the body says about it), and so does a change in
// another team's namespace, which is not in the share (telling it apart would tell the
// namespace is that team's); a cluster outside its teams is not found.
func TestAScopedGateAgainstAClusterJudgesTheTeamsShare(t *testing.T) {
	ts := contextServer(t)
	breakShop := ingress("shop", "a") + "---\n" + ingress("shop", "b")
	data := ts.mintRead("data")
	if r, rep := ts.gateAgainst(data, "cluster=teams", breakShop); r.status != 422 || strings.Contains(string(r.body), "payments") ||
		rep.Targets[0].Cluster.Verdict != "blocked" {
		t.Errorf("team data gating a change in payments' namespace: %d %s; want it counted, payments never named", r.status, r.body)
	}
	if r, _ := ts.gateAgainst(ts.mintRead("payments"), "cluster=teams", breakShop); r.status != 422 {
		t.Errorf("team payments gating a change that breaks payments: %d %s", r.status, r.body)
	}
	psp := "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: other}\nspec: {}\n"
	claimed := "apiVersion: v1\nkind: Namespace\nmetadata: {name: mine, labels: {team: payments}}\n---\n" + ingress("mine", "x")
	for name, body := range map[string]string{
		"an unattributed blocker":                            psp,
		"a blocker in a namespace the cluster does not have": ingress("newns", "x"),
		"one beside another team's object":                   ingress("shop", "a") + "---\n" + ingress("newns", "x"),
		"a namespace the body says another team owns":        claimed,
	} {
		r, rep := ts.gateAgainst(data, "cluster=teams", body)
		if r.status != 422 || len(rep.Targets[0].Findings) == 0 {
			t.Errorf("%s counts for every team and is shown: %d %s", name, r.status, r.body)
		}
	}
	if r, _ := ts.gateAgainst(ts.mintRead("nobody"), "cluster=teams", breakShop); r.status != 404 {
		t.Errorf("a cluster outside the token's teams: %d %s, want the 404 of an unknown cluster", r.status, r.body)
	}
}

// Without a cluster nothing is owned: a scoped token judges the whole body, and sees it.
func TestAScopedGateWithoutAClusterJudgesTheWholeBody(t *testing.T) {
	ts := contextServer(t)
	r, rep := ts.gateAgainst(ts.mintRead("data"), "", ingress("shop", "b"))
	if r.status != 422 || len(rep.Targets[0].Findings) == 0 || rep.Targets[0].Blockers != 1 {
		t.Errorf("%d %s: want the body's blocker counted and shown", r.status, r.body)
	}
}

func TestAGateAgainstAClusterRefusesWhatItCannotJudge(t *testing.T) {
	ts := contextServer(t)
	cases := []struct {
		name, query string
		status      int
		says        string
	}{
		{"an unknown name", "cluster=nope&target=1.33", 404, "cluster not found"},
		{"an unknown id", "cluster=99&target=1.33", 404, "cluster not found"},
		{"a target the cluster already runs", "cluster=teams&target=1.32", 422, "already runs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do("POST", "/api/v1/gate?"+c.query, "", []byte(ingress("shop", "b")), yamlBody)
			if r.status != c.status || !strings.Contains(string(r.body), c.says) {
				t.Errorf("%d %s, want %d saying %q", r.status, r.body, c.status, c.says)
			}
		})
	}
}
