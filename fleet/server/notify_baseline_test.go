package server_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
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

// A blocked pass that could not assess helm carries its baseline's helm blocker: the
// blocker seen again once helm is back is not new. Every pass is blocked by a removed
// Ingress besides, so the pass without helm stays blocked (a ready one announces
// became-ready, whatever it could not assess).
func TestABlockedPassThatCouldNotAssessACapabilityCarriesTheBaselinesBlockers(t *testing.T) {
	hook, _ := notify.NewWebhook("http://127.0.0.1:9/never-called", "")
	for _, tc := range []struct {
		name   string
		last   func(*inventory.Document)
		queued int
	}{
		{"the blocker seen again once helm is back is not new", func(*inventory.Document) {}, 0},
		{"the release and the Ingress gone once helm is back is became-ready",
			func(d *inventory.Document) { d.HelmReleases, d.APIUsage = nil, d.APIUsage[:0] }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newServer(t, func(c *server.Config) {
				c.IngestToken = "shared"
				c.Sinks = []notify.Sink{hook}
			})
			withIngress := func() *inventory.Document {
				doc := helmInventory(t)
				doc.APIUsage = teamsInventory(t).APIUsage[:1] // extensions/v1beta1 Ingress: removed
				return doc
			}
			blind := withIngress()
			blind.Capabilities["helm"] = inventory.Capability{Available: false, Reason: "forbidden"}
			blind.HelmReleases = nil
			last := withIngress()
			tc.last(last)
			for i, doc := range []*inventory.Document{withIngress(), withIngress(), blind, last} {
				doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: "step-" + string(rune('a'+i))})
				if r := ts.push("shared", envelope(t, "prod", doc)); r.status != http.StatusAccepted {
					t.Fatalf("push %d: %d %s", i, r.status, r.body)
				}
				if i == 2 {
					if q, _ := ts.store.QueuedDeliveries(t.Context()); len(q) != 0 {
						t.Fatalf("queued %v after the blocked pass without helm, want nothing", q)
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

// A pass whose verdict is ready is ready, whatever optional capability it could not assess:
// the dashboard shows the stored verdict, and the notification follows it. A blocked
// cluster that turns ready with helm forbidden sends became-ready once, and a second such
// pass sends nothing more.
func TestAReadyPassWithAnOptionalCapabilityNotAssessedSendsBecameReadyOnce(t *testing.T) {
	sink := newHookSink(t)
	hook, err := notify.NewWebhook(sink.URL+"/hook", "secret")
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, func(c *server.Config) {
		c.IngestToken = "shared"
		c.Sinks = []notify.Sink{hook}
	})
	withoutHelm := func() *inventory.Document {
		doc := readyInventory(t)
		doc.Capabilities[inventory.CapHelm] = inventory.Capability{Available: false, Reason: "secrets: forbidden"}
		return doc
	}
	for i, doc := range []*inventory.Document{teamsInventory(t), withoutHelm(), withoutHelm()} {
		doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: "step-" + string(rune('a'+i))})
		if r := ts.push("shared", envelope(t, "prod", doc)); r.status != http.StatusAccepted {
			t.Fatalf("push %d: %d %s", i, r.status, r.body)
		}
	}
	id := ts.idOf("prod")
	cell := ts.get(fmt.Sprintf("/api/v1/clusters/%d", id), "").json(t)["evaluations"].([]any)[0].(map[string]any)
	if cell["verdict"] != "ready" {
		t.Fatalf("the stored verdict is %v, want ready", cell["verdict"])
	}
	page := string(ts.get(fmt.Sprintf("/ui/clusters/%d", id), "").body)
	if !strings.Contains(page, `data-target="1.33" data-verdict="ready"`) {
		t.Errorf("the dashboard does not show 1.33 ready")
	}
	if q, err := ts.store.QueuedDeliveries(t.Context()); err != nil || q["webhook"] != 1 {
		t.Fatalf("queued %v, %v; want one message", q, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); ts.srv.RunNotifications(ctx) }()
	defer func() { cancel(); <-done }()
	bodies, sigs := sink.wait(t, 1)
	var b notify.Body
	if err := json.Unmarshal(bodies[0], &b); err != nil {
		t.Fatal(err)
	}
	if len(b.Changes) != 1 || b.Changes[0].Kind != notify.KindBecameReady || b.Targets[0].Verdict != "ready" {
		t.Errorf("delivered %s, want became-ready at a ready 1.33", bodies[0])
	}
	mac := hmac.New(sha256.New, []byte("secret"))
	mac.Write(bodies[0])
	if sigs[0] != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		t.Errorf("signature %q does not verify", sigs[0])
	}
}
