package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/upgradescope/upgradescope/push"
	"github.com/upgradescope/upgradescope/server"
	"github.com/upgradescope/upgradescope/server/store"
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
