package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// The store keeps a push as it came (the agent's gzip envelope, or, for an uncompressed
// push, the envelope compressed), and earlier servers kept the inventory alone: a what-if,
// which reads the stored inventory back, works on all three.
func TestAStoredInventoryIsReadBackHoweverItWasStored(t *testing.T) {
	doc := teamsInventory(t)
	inv, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	gzipped := envelope(t, "prod", doc)
	plain, err := push.Inflate(bytes.NewReader(gzipped), "gzip", push.MaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		store func(ts *testServer)
	}{
		{"a gzip push, kept as sent", func(ts *testServer) {
			if r := ts.push("shared", gzipped); r.status != 202 {
				t.Fatalf("push: %d %s", r.status, r.body)
			}
		}},
		{"an uncompressed push, kept compressed", func(ts *testServer) {
			if r := ts.do("POST", push.Path, "shared", plain, http.Header{"Content-Type": {"application/json"}}); r.status != 202 {
				t.Fatalf("push: %d %s", r.status, r.body)
			}
		}},
		{"the inventory alone, as earlier servers stored it", func(ts *testServer) {
			in := store.Ingest{ClusterName: "prod", ClusterUID: doc.ClusterID, Hash: "h", CollectedAt: doc.CollectedAt,
				ServerVersion: doc.ServerVersion, Inventory: gzipBytes(t, inv)}
			if _, err := ts.store.Ingest(t.Context(), in); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
			tc.store(ts)
			r := ts.get(fmt.Sprintf("/api/v1/clusters/%d/report?target=1.35", ts.idOf("prod")), "")
			if r.status != 200 {
				t.Fatalf("what-if: %d %s", r.status, r.body)
			}
			got := r.json(t)
			if got["source"] != "what-if" || got["report"].(map[string]any)["clusterId"] != doc.ClusterID {
				t.Errorf("what-if = source %v cluster %v, want a what-if of %s", got["source"], got["report"].(map[string]any)["clusterId"], doc.ClusterID)
			}
		})
	}
}

// An envelope naming its inventory twice is judged by the last copy (push.DecodeJSON), and
// is read back by that copy alone: decoded into one Document the copies would merge, so a
// first copy nobody validated would break the cluster's reads or add to its inventory.
func TestAnEnvelopeWithTwoInventoriesIsReadBackAsItWasJudged(t *testing.T) {
	doc := teamsInventory(t)
	inv, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, first string }{
		{"a first copy that breaks the schema", `"inventory":{"apiUsage":[{"count":"3"}]}`},
		{"a first copy adding a capability", `"inventory":{"capabilities":{"injected":{"available":true}}}`},
		{"a first copy under another case", `"Inventory":{"capabilities":{"injected":{"available":true}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
			body := `{"schemaVersion":1,"clusterName":"prod",` + tc.first + `,"inventory":` + string(inv) + `}`
			if r := ts.push("shared", gzipBytes(t, []byte(body))); r.status != 202 {
				t.Fatalf("push: %d %s", r.status, r.body)
			}
			r := ts.get(fmt.Sprintf("/api/v1/clusters/%d", ts.idOf("prod")), "")
			if r.status != 200 {
				t.Fatalf("cluster: %d %s", r.status, r.body)
			}
			if strings.Contains(string(r.body), "injected") {
				t.Errorf("the cluster shows the unvalidated first copy: %s", r.body)
			}
			if w := ts.get(fmt.Sprintf("/api/v1/clusters/%d/report?target=1.35", ts.idOf("prod")), ""); w.status != 200 {
				t.Errorf("what-if: %d %s", w.status, w.body)
			}
		})
	}
}
