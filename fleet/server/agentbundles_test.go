package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server"
)

// Every push records the bundles its agent evaluates with; the clusters list, the fleet and
// /metrics show them, flagging a revision other than the server's own.
func TestTheFleetShowsEachClustersBundleRevisionsAndWhichAreBehind(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	eng, _ := sharedEngine()
	var kb string
	for _, b := range eng.Bundles() {
		if b.Name == "kb" {
			kb = b.Revision
		}
	}
	send := func(bundles []push.Bundle) {
		body, err := push.Encode(push.Envelope{SchemaVersion: push.SchemaVersion, ClusterName: "prod", AgentVersion: "test",
			KBVersion: "kb-test", Bundles: bundles, Inventory: teamsInventory(t)})
		if err != nil {
			t.Fatal(err)
		}
		if r := ts.push("shared", body); r.status != 202 && r.status != 200 {
			t.Fatalf("push: %d %s", r.status, r.body)
		}
	}
	send([]push.Bundle{{Name: "kb", Revision: "2020-01-01.1"}, {Name: "acme", Revision: "a1"}})
	var list struct {
		Clusters []struct {
			Bundles []struct {
				Name, Revision string
				Behind         bool
			}
		}
	}
	if err := json.Unmarshal(ts.get("/api/v1/clusters", "").body, &list); err != nil || len(list.Clusters) != 1 {
		t.Fatalf("clusters: %v", err)
	}
	got := list.Clusters[0].Bundles
	if len(got) != 2 || got[0].Name != "kb" || !got[0].Behind || got[1].Name != "acme" || got[1].Behind {
		t.Errorf("bundles %+v: the old kb is behind the server's, a pack the server lacks is not", got)
	}
	metrics := string(ts.get("/metrics", "").body)
	if !strings.Contains(metrics, `upgradescope_bundle_clusters{behind="true",bundle="kb",revision="2020-01-01.1"} 1`) {
		t.Errorf("metrics lack the behind kb:\n%s", metrics)
	}
	// The agent picks up the server's kb: the same inventory again (a duplicate) records it.
	send([]push.Bundle{{Name: "kb", Revision: kb}})
	fleet := string(ts.get("/api/v1/fleet", "").body)
	if !strings.Contains(fleet, `"bundles":[{"name":"kb","revision":"`+kb+`","behind":false}]`) {
		t.Errorf("the fleet should show the cluster current at kb %s:\n%s", kb, fleet)
	}
}
