package inventory

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func preflightFixtures() (cluster, manifests *Document) {
	cluster, manifests = overlayFixtures()
	ready, found := 0, true
	live := func(kind, ns, name string) ObjectRef { return ObjectRef{Kind: kind, Namespace: ns, Name: name} }
	written := func(kind, ns, name string, line int) ObjectRef {
		return ObjectRef{Kind: kind, Namespace: ns, Name: name, File: "app.yaml", Line: line}
	}
	for _, c := range preflightCapabilities {
		cluster.Capabilities[c] = Capability{Available: true}
		manifests.Capabilities[c] = Capability{Available: true}
	}
	cluster.Capabilities[CapEndpoints] = Capability{Available: true}
	manifests.Capabilities[CapEndpoints] = Capability{Available: false, Reason: "live only: manifests show no ready endpoints"}
	cluster.Preflight = &Preflight{
		DisruptionBudgets: []DisruptionBudget{
			{Object: live("PodDisruptionBudget", "shop", "web"), APIVersion: "policy/v1", MinAvailable: "2",
				Status: &BudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3}},
			{Object: live("PodDisruptionBudget", "shop", "db"), APIVersion: "policy/v1", MaxUnavailable: "1"},
		},
		Webhooks: []Webhook{
			{Configuration: live("ValidatingWebhookConfiguration", "", "policy"), Name: "old.policy.example.com", FailurePolicy: "Ignore",
				Service: &ServiceRef{Namespace: "sec", Name: "policy", Port: 443, Found: &found, ReadyEndpoints: &ready}},
			{Configuration: live("MutatingWebhookConfiguration", "", "inject"), Name: "inject.example.com"},
		},
		Drain: &DrainPods{Examined: 10,
			Unreplicated: PodList{Count: 2, Objects: []ObjectRef{live("Pod", "shop", "debug"), live("Pod", "shop", "tmp")}},
			LocalStorage: PodList{Count: 1, Objects: []ObjectRef{live("Pod", "shop", "web-1")}}},
		NodeState:  &NodeState{Examined: 3, Schedulable: 3},
		Components: []Component{{Component: "kube-proxy", Source: "daemonset", Object: live("DaemonSet", "kube-system", "kube-proxy"), ProxyMode: "ipvs"}},
	}
	manifests.Preflight = &Preflight{
		DisruptionBudgets: []DisruptionBudget{{Object: written("PodDisruptionBudget", "shop", "web", 40), APIVersion: "policy/v1", MaxUnavailable: "0",
			Workloads: []WorkloadReplicas{{Object: written("Deployment", "shop", "web", 9), Replicas: 3}}}},
		Webhooks: []Webhook{{Configuration: written("ValidatingWebhookConfiguration", "", "policy", 50), Name: "new.policy.example.com", FailurePolicy: "Fail",
			Service: &ServiceRef{Namespace: "sec", Name: "policy", Port: 443}}},
		Drain: &DrainPods{Examined: 2,
			Unreplicated: PodList{Count: 1, Objects: []ObjectRef{written("Pod", "shop", "debug", 60)}},
			LocalStorage: PodList{Count: 0}},
		Components: []Component{{Component: "kube-proxy", Source: "daemonset", Object: written("DaemonSet", "kube-system", "kube-proxy", 70), ProxyMode: "nftables"}},
	}
	return cluster, manifests
}

func TestOverlayJudgesThePreflightObjectsTheManifestsHoldAsTheyWriteThem(t *testing.T) {
	cluster, manifests := preflightFixtures()
	before, _ := json.Marshal(cluster)
	beforeM, _ := json.Marshal(manifests)
	got := Overlay(cluster, manifests).Preflight
	if after, _ := json.Marshal(cluster); string(after) != string(before) {
		t.Error("Overlay changed the cluster's inventory")
	}
	if after, _ := json.Marshal(manifests); string(after) != string(beforeM) {
		t.Error("Overlay changed the manifests' inventory")
	}
	var budgets []string
	for _, b := range got.DisruptionBudgets {
		budgets = append(budgets, fmt.Sprintf("%s@%s status=%v", b.Object.Name, b.Object.File, b.Status != nil))
	}
	if want := "db@ status=false; web@app.yaml status=false"; strings.Join(budgets, "; ") != want {
		t.Errorf("budgets %v, want %s: the manifests' web replaces the live one", budgets, want)
	}
	var hooks []string
	for _, w := range got.Webhooks {
		s := w.Name
		if w.Service != nil && w.Service.ReadyEndpoints != nil {
			s += fmt.Sprintf(" ready=%d", *w.Service.ReadyEndpoints)
		}
		hooks = append(hooks, s)
	}
	if want := "inject.example.com; new.policy.example.com ready=0"; strings.Join(hooks, "; ") != want {
		t.Errorf("webhooks %v, want %s: the configuration the manifests write replaces the live one's webhooks, whose service still has no endpoint", hooks, want)
	}
	wantDrain := &DrainPods{Examined: 12,
		Unreplicated: PodList{Count: 2, Objects: []ObjectRef{
			{Kind: "Pod", Namespace: "shop", Name: "debug", File: "app.yaml", Line: 60}, {Kind: "Pod", Namespace: "shop", Name: "tmp"}}},
		LocalStorage: PodList{Count: 1, Objects: []ObjectRef{{Kind: "Pod", Namespace: "shop", Name: "web-1"}}}}
	if !reflect.DeepEqual(got.Drain, wantDrain) {
		t.Errorf("drain %+v, want %+v", got.Drain, wantDrain)
	}
	if len(got.Components) != 1 || got.Components[0].ProxyMode != "nftables" {
		t.Errorf("components %+v, want the manifests' kube-proxy DaemonSet alone", got.Components)
	}
	if got.NodeState != cluster.Preflight.NodeState {
		t.Errorf("node state %+v, want the cluster's", got.NodeState)
	}
}

func TestOverlayKeepsTheClustersPreflightGapsAndLiveOnlyParts(t *testing.T) {
	cluster, manifests := preflightFixtures()
	cluster.Capabilities[CapWebhooks] = Capability{Available: false, Reason: "validatingwebhookconfigurations: forbidden"}
	delete(cluster.Capabilities, CapKubeletConfig)
	manifests.Capabilities[CapPods] = Capability{Available: true, Partial: true, Reason: "3 placement(s) past the 1000 an inventory lists"}
	caps := Overlay(cluster, manifests).Capabilities
	for name, want := range map[string]Capability{
		CapWebhooks:  {Available: false, Reason: "validatingwebhookconfigurations: forbidden"},
		CapPods:      {Available: true, Partial: true, Reason: "3 placement(s) past the 1000 an inventory lists"},
		CapEndpoints: {Available: true},
	} {
		if got := caps[name]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %+v, want %+v", name, got, want)
		}
	}
	if c, ok := caps[CapKubeletConfig]; ok {
		t.Errorf("kubelet-config = %+v, want it left out as the cluster's collector left it (not collected)", c)
	}
}

func TestOverlayGivesAClusterWithoutAPreflightSectionTheManifests(t *testing.T) {
	cluster, manifests := preflightFixtures()
	cluster.Preflight = nil
	if got := Overlay(cluster, manifests).Preflight; !reflect.DeepEqual(got.DisruptionBudgets, manifests.Preflight.DisruptionBudgets) ||
		got.Drain != manifests.Preflight.Drain {
		t.Errorf("preflight %+v, want the manifests'", got)
	}
	cluster, manifests = preflightFixtures()
	manifests.Preflight = nil
	if got := Overlay(cluster, manifests).Preflight; got != cluster.Preflight {
		t.Errorf("preflight %+v, want the cluster's", got)
	}
}

func TestOverlayKeepsTheMergedPreflightWithinItsBounds(t *testing.T) {
	cluster, manifests := preflightFixtures()
	cluster.Preflight.Webhooks = nil
	for i := range MaxPreflightItems {
		cluster.Preflight.Webhooks = append(cluster.Preflight.Webhooks, Webhook{
			Configuration: ObjectRef{Kind: "MutatingWebhookConfiguration", Name: fmt.Sprintf("c%04d", i)}, Name: "w"})
	}
	cluster.Preflight.WebhooksOmitted = 4
	got := Overlay(cluster, manifests).Preflight
	if len(got.Webhooks) != MaxPreflightItems || got.WebhooksOmitted != 5 {
		t.Errorf("%d webhooks, %d omitted; want %d and 5", len(got.Webhooks), got.WebhooksOmitted, MaxPreflightItems)
	}
}
