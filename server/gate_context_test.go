package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/server"
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
	cases := []struct {
		name, manifest            string
		status                    int
		verdict, clusterVerdict   string
		sources                   map[string]string
		blockers, clusterBlockers int
	}{
		{"re-applying the object the cluster already has passes", ingress("shop", "a"), 200, "ready", "blocked",
			map[string]string{"removed-api/extensions/v1beta1/Ingress": "cluster"}, 0, 1},
		{"a new object at a removed API fails", ingress("shop", "a") + "---\n" + ingress("shop", "b"), 422, "blocked", "blocked",
			map[string]string{"removed-api/extensions/v1beta1/Ingress": "manifest"}, 1, 1},
		{"moving to the served API passes and leaves the cluster ready",
			"apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: a, namespace: shop}\nspec: {}\n", 200, "ready", "ready",
			map[string]string{}, 0, 0},
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

// The manifests' API usage replaces the cluster's: the live PodSecurityPolicy is not judged
// beside manifests that do not write it, while what the cluster's evidence already named keeps
// its file and line from the manifests.
func TestAGateAgainstAClusterJudgesTheManifestsCopyOfAnObject(t *testing.T) {
	ts := contextServer(t)
	_, rep := ts.gateAgainst("", "cluster=teams", ingress("shop", "a"))
	f := rep.Targets[0].Findings
	if slices.ContainsFunc(f, func(f struct {
		Key, Severity, Source string
		Objects               []struct{ Namespace, Name, File string }
	}) bool {
		return strings.Contains(f.Key, "PodSecurityPolicy")
	}) {
		t.Errorf("the live PodSecurityPolicy is judged beside manifests that replace the cluster's usage: %+v", f)
	}
	if len(f) == 0 || len(f[0].Objects) != 1 || f[0].Objects[0].File != "manifests.yaml" {
		t.Errorf("the Ingress finding should name the manifest's copy: %+v", f)
	}
}

// A team-scoped token judges its teams' share and what no team owns: a change breaking only
// another team's namespace passes, and a cluster outside its teams is not found.
func TestAScopedGateAgainstAClusterJudgesTheTeamsShare(t *testing.T) {
	ts := contextServer(t)
	breakShop := ingress("shop", "a") + "---\n" + ingress("shop", "b")
	if r, _ := ts.gateAgainst(ts.mintRead("data"), "cluster=teams", breakShop); r.status != 200 {
		t.Errorf("team data gating a change that breaks payments: %d %s", r.status, r.body)
	}
	if r, _ := ts.gateAgainst(ts.mintRead("payments"), "cluster=teams", breakShop); r.status != 422 {
		t.Errorf("team payments gating a change that breaks payments: %d %s", r.status, r.body)
	}
	psp := "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: other}\nspec: {}\n"
	if r, _ := ts.gateAgainst(ts.mintRead("data"), "cluster=teams", psp); r.status != 422 {
		t.Errorf("an unattributed blocker counts for every team: %d %s", r.status, r.body)
	}
	if r, _ := ts.gateAgainst(ts.mintRead("nobody"), "cluster=teams", breakShop); r.status != 404 {
		t.Errorf("a cluster outside the token's teams: %d %s, want the 404 of an unknown cluster", r.status, r.body)
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
