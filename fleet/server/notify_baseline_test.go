package server_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/notify"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
)

// helmInventory is testdata/helm-kubeversion-too-new: a 1.32 cluster whose release "shop"
// wants 1.34, a blocker at 1.33.
func helmInventory(t *testing.T) *inventory.Document {
	t.Helper()
	doc, err := inventory.ReadFile(filepath.Join("..", "..", "testdata", "helm-kubeversion-too-new", "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	probetest.FoundNothing(doc, eng.Observe().Probes)
	return doc
}

func TestAPassThatCouldNotAssessACapabilityCarriesTheBaselinesBlockers(t *testing.T) {
	hook, _ := notify.NewWebhook("http://127.0.0.1:9/never-called", "")
	for _, tc := range []struct {
		name   string
		last   func(*inventory.Document)
		queued int
	}{
		{"the blocker seen again once helm is back is not new", func(*inventory.Document) {}, 0},
		{"the release gone once helm is back is became-ready",
			func(d *inventory.Document) { d.HelmReleases = nil }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t, func(c *server.Config) {
				c.IngestToken = "shared"
				c.Sinks = []notify.Sink{hook}
			})
			blind := helmInventory(t)
			blind.Capabilities["helm"] = inventory.Capability{Available: false, Reason: "forbidden"}
			blind.HelmReleases = nil
			last := helmInventory(t)
			tc.last(last)
			for i, doc := range []*inventory.Document{helmInventory(t), helmInventory(t), blind, last} {
				doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: "step-" + string(rune('a'+i))})
				if r := ts.push("shared", envelope(t, "prod", doc)); r.status != http.StatusAccepted {
					t.Fatalf("push %d: %d %s", i, r.status, r.body)
				}
				if i == 2 {
					if q, _ := ts.store.QueuedDeliveries(t.Context()); len(q) != 0 {
						t.Fatalf("queued %v after the pass without helm, want nothing", q)
					}
				}
			}
			q, err := ts.store.QueuedDeliveries(t.Context())
			if err != nil || q["webhook"] != tc.queued {
				t.Errorf("queued %v, %v; want %d message(s)", q, err, tc.queued)
			}
			if tc.queued == 0 {
				return
			}
			ds, err := ts.store.ClaimDeliveries(t.Context(), time.Now().Add(time.Second), time.Minute, 10, []string{"webhook"})
			if err != nil || len(ds) != 1 {
				t.Fatalf("ClaimDeliveries = %d, %v", len(ds), err)
			}
			var b notify.Body
			if err := json.Unmarshal(ds[0].Body, &b); err != nil {
				t.Fatal(err)
			}
			if len(b.Changes) != 1 || b.Changes[0].Kind != notify.KindBecameReady {
				t.Errorf("changes %+v, want became-ready", b.Changes)
			}
		})
	}
}

func TestATargetAddedBackIsSilentOnItsFirstEvaluation(t *testing.T) {
	hook, _ := notify.NewWebhook("http://127.0.0.1:9/never-called", "")
	withHook := func(targets ...string) func(*server.Config) {
		return func(c *server.Config) {
			c.IngestToken, c.Targets = "shared", targets
			c.Sinks = []notify.Sink{hook}
		}
	}
	a := newServer(t, withHook("1.33"))
	b := newServerOn(t, a.store, withHook())
	older := teamsInventory(t)
	older.ServerVersion = "v1.31.9"
	for i, step := range []struct {
		ts  *testServer
		doc *inventory.Document
	}{
		{a, readyInventory(t)}, // ready at 1.33: the cluster's first pass, silent
		{b, older},             // judged at 1.32 only: 1.33 leaves the pass
		{a, teamsInventory(t)}, // 1.33 is back, blocked; its last decided evaluation is push 0's
	} {
		if r := step.ts.push("shared", envelope(t, "prod", step.doc)); r.status != http.StatusAccepted {
			t.Fatalf("push %d: %d %s", i, r.status, r.body)
		}
	}
	if q, err := a.store.QueuedDeliveries(t.Context()); err != nil || len(q) != 0 {
		t.Errorf("queued %v, %v; want nothing: 1.33 is silent on its return", q, err)
	}
}
