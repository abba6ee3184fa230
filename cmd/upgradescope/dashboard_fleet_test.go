package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
)

// The fleet the dashboard's browser tests look at: a real serve whose clusters came in through
// ingest, as agents push them.

const (
	dashReadToken   = "dashboard-read-token-0123456789abcdef"
	dashIngestToken = "dashboard-ingest-token-0123456789abcdef"
	// hostileObject is an object name a cluster may hold (the inventory allows any string):
	// the page must show it as text, never run it.
	hostileObject = `<img src=x onerror="window.__pwned=1">"'&amp;`
	// longCluster is the longest kind of name a fleet has: a phone must wrap or scroll it
	// inside the table, never widen the page.
	longCluster = "payments-api-production-eu-west-1a.k8s.internal.platform.example.com"
)

// dashCluster is one cluster the fixture pushes.
type dashCluster struct {
	name     string
	scenario string            // testdata/<scenario>/inventory.json
	teams    map[string]string // namespace → team, replacing the scenario's namespaces; nil keeps them
	hostile  bool              // the blocking Ingress's name is hostileObject
}

// dashClusters: blocked, ready and unknown clusters, two teams' clusters a payments token
// tells apart, a hostile object name and a long cluster name.
var dashClusters = []dashCluster{
	{name: "prod-eu-1", scenario: "teams", hostile: true}, // 1.32: blocked at 1.33 (payments' Ingress, a PodSecurityPolicy)
	{name: "checkout-us-1", scenario: "teams", teams: map[string]string{"shop": "checkout", "data": "checkout"}},
	{name: "clean-1", scenario: "clean-is-ready", teams: map[string]string{"web": "payments"}},
	{name: "unknown-1", scenario: "missing-capability-is-unknown", teams: map[string]string{"ops": "platform"}},
	{name: longCluster, scenario: "removed-api-blocker", teams: map[string]string{"edge": "platform"}},
}

// dashFleet is the running server and what a test needs to reach it.
type dashFleet struct {
	serve       *serveProc
	origin      string // scheme://host:port: serve prints its URL with the prefix
	prefix      string // --path-prefix, "" for none
	payments    string // a read token scoped to the payments team
	clusterIDs  map[string]int64
	clusterURLs map[string]string // name → P/clusters/{id}
}

// startDashFleet runs serve (with args added, e.g. --path-prefix) on a fresh database, mints a
// payments-scoped read token, pushes dashClusters and waits until each has an evaluation.
func startDashFleet(t *testing.T, prefix string, args ...string) *dashFleet {
	t.Helper()
	return startBulkDashFleet(t, prefix, 0, args...)
}

// startBulkDashFleet is startDashFleet with bulk more ready clusters, bulk-000 and on, for paging.
func startBulkDashFleet(t *testing.T, prefix string, bulk int, args ...string) *dashFleet {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "fleet.db")
	r := runCLI(t, "tokens", "create", "--read", "--teams", "payments", "--db", db)
	if r.code != 0 {
		t.Fatalf("tokens create --read --teams payments: exit %d: %s", r.code, r.stderr)
	}
	serveArgs := []string{"--db", db, "--read-token-file", writeSecret(t, dir, "read", dashReadToken),
		"--ingest-token-file", writeSecret(t, dir, "ingest", dashIngestToken), "--target", "1.37"}
	if prefix != "" {
		serveArgs = append(serveArgs, "--path-prefix", prefix)
	}
	p := startServe(t, append(serveArgs, args...)...)
	f := &dashFleet{serve: p, origin: strings.TrimSuffix(p.url, prefix), prefix: prefix,
		payments: strings.TrimSpace(r.stdout), clusterIDs: map[string]int64{}, clusterURLs: map[string]string{}}
	eng, err := engine.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range dashClusters {
		doc := probetest.Scenario(t, "../..", c.scenario, eng.Observe().Probes)
		doc.ClusterID = fmt.Sprintf("9f1c2d3e-0000-4000-8000-%012d", i+1)
		if c.teams != nil {
			doc.Namespaces = nil
			for ns, team := range c.teams {
				doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: ns, Team: team})
			}
		}
		if c.hostile {
			renameIngress(t, doc, hostileObject)
		}
		pushDocument(t, f.api(), dashIngestToken, c.name, doc)
	}
	for i := range bulk {
		doc := probetest.Scenario(t, "../..", "clean-is-ready", eng.Observe().Probes)
		doc.ClusterID = fmt.Sprintf("9f1c2d3e-0000-4000-9000-%012d", i+1)
		pushDocument(t, f.api(), dashIngestToken, fmt.Sprintf("bulk-%03d", i), doc)
	}
	f.waitForEvaluations(t, len(dashClusters)+bulk)
	return f
}

// renameIngress gives the scenario's one extensions/v1beta1 Ingress the name name.
func renameIngress(t *testing.T, doc *inventory.Document, name string) {
	t.Helper()
	for i, u := range doc.APIUsage {
		if u.Kind == "Ingress" && len(u.Objects) > 0 {
			doc.APIUsage[i].Objects[0].Name = name
			return
		}
	}
	t.Fatal("the scenario has no Ingress to rename")
}

// api is the server's base for the API: its URL and the path prefix.
func (f *dashFleet) api() string { return f.origin + f.prefix }

// waitForEvaluations polls the fleet until it holds clusters clusters, each judged, and keeps
// each cluster's id.
func (f *dashFleet) waitForEvaluations(t *testing.T, clusters int) {
	t.Helper()
	var fleet struct {
		Reevaluation struct {
			Pending int `json:"pending"`
		} `json:"reevaluation"`
		Clusters []struct {
			ID    int64                      `json:"clusterId"`
			Name  string                     `json:"name"`
			Cells map[string]json.RawMessage `json:"cells"`
		} `json:"clusters"`
	}
	// a cell stays null where the cluster is not planned at that target: done is each
	// cluster judged somewhere and nothing pending
	ok := pollUntil(60*time.Second, 100*time.Millisecond, func() bool {
		if getJSON(t, f.api(), "/api/v1/fleet", dashReadToken, &fleet) != 200 || len(fleet.Clusters) != clusters ||
			fleet.Reevaluation.Pending != 0 {
			return false
		}
		for _, c := range fleet.Clusters {
			judged := false
			for _, cell := range c.Cells {
				judged = judged || string(cell) != "null"
			}
			if !judged {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("the fleet did not hold an evaluation of each of %d clusters within 60 s: %d clusters, %d pending",
			clusters, len(fleet.Clusters), fleet.Reevaluation.Pending)
	}
	for _, c := range fleet.Clusters {
		f.clusterIDs[c.Name] = c.ID
		f.clusterURLs[c.Name] = fmt.Sprintf("%s/clusters/%d", f.prefix, c.ID)
	}
}
