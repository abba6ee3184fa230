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
	if want := "db@ status=false; web@app.yaml status=true"; strings.Join(budgets, "; ") != want {
		t.Errorf("budgets %v, want %s: the manifests' web replaces the live one, keeping its live status", budgets, want)
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

func TestOverlayKeepsWhatOnlyTheClusterShowsOfAnObjectTheManifestsRewrite(t *testing.T) {
	zero, two := 0, 2
	live := func(kind, name string) ObjectRef { return ObjectRef{Kind: kind, Namespace: "kube-system", Name: name} }
	written := func(kind, name string) ObjectRef {
		return ObjectRef{Kind: kind, Namespace: "kube-system", Name: name, File: "ms.yaml", Line: 1}
	}
	cluster := &Preflight{
		APIServices: []APIService{{Object: live("APIService", "v1beta1.metrics.k8s.io"), Group: "metrics.k8s.io", Version: "v1beta1",
			Service:   &ServiceRef{Namespace: "kube-system", Name: "metrics-server", Port: 443, ReadyEndpoints: &zero},
			Available: "False", Reason: "FailedDiscoveryCheck", Message: "failing or missing response"}},
		DisruptionBudgets: []DisruptionBudget{{Object: live("PodDisruptionBudget", "coredns"), MinAvailable: "1",
			Status: &BudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 1, DesiredHealthy: 1, ExpectedPods: 1},
			Pods:   []string{"coredns-a"}, PodsOmitted: 3}},
		Webhooks: []Webhook{{Configuration: live("ValidatingWebhookConfiguration", "policy"), Name: "p.example.com", CoversKubeSystem: true,
			Service: &ServiceRef{Namespace: "sec", Name: "policy", Port: 443, ReadyEndpoints: &two}}},
		Components: []Component{{Component: "kube-proxy", Source: "daemonset", Object: live("DaemonSet", "kube-proxy"), Nodes: []string{"n1", "n2"}, NodesOmitted: 1}},
	}
	manifests := &Preflight{
		APIServices: []APIService{
			{Object: written("APIService", "v1beta1.metrics.k8s.io"), Group: "metrics.k8s.io", Version: "v1beta1",
				Service: &ServiceRef{Namespace: "kube-system", Name: "metrics-server", Port: 443}},
			{Object: written("APIService", "v1.new.example.com"), Group: "new.example.com", Version: "v1"},
		},
		DisruptionBudgets: []DisruptionBudget{
			{Object: written("PodDisruptionBudget", "coredns"), MinAvailable: "1"},
			{Object: written("PodDisruptionBudget", "new"), MaxUnavailable: "1"},
		},
		Webhooks:   []Webhook{{Configuration: written("ValidatingWebhookConfiguration", "policy"), Name: "p.example.com", Service: &ServiceRef{Namespace: "sec", Name: "policy", Port: 443}}},
		Components: []Component{{Component: "kube-proxy", Source: "daemonset", Object: written("DaemonSet", "kube-proxy"), ProxyMode: "nftables"}},
	}
	got, _ := overlayPreflight(cluster, manifests)
	for _, tc := range []struct {
		name, got, want string
	}{
		{"an APIService the cluster finds unavailable stays so", fmt.Sprintf("%s %s %s %s", got.APIServices[1].Object.File, got.APIServices[1].Available, got.APIServices[1].Reason, got.APIServices[1].Message),
			"ms.yaml False FailedDiscoveryCheck failing or missing response"},
		{"a new APIService has no condition", got.APIServices[0].Object.Name + " " + got.APIServices[0].Available, "v1.new.example.com "},
		{"a budget keeps its live status and pods", fmt.Sprintf("%s %+v %v %d", got.DisruptionBudgets[0].Object.File, *got.DisruptionBudgets[0].Status, got.DisruptionBudgets[0].Pods, got.DisruptionBudgets[0].PodsOmitted),
			"ms.yaml {DisruptionsAllowed:0 CurrentHealthy:1 DesiredHealthy:1 ExpectedPods:1} [coredns-a] 3"},
		{"a new budget has no status", fmt.Sprint(got.DisruptionBudgets[1].Object.Name, " ", got.DisruptionBudgets[1].Status == nil), "new true"},
		{"a webhook covering kube-system by its live labels still does", fmt.Sprint(got.Webhooks[0].Configuration.File, " ", got.Webhooks[0].CoversKubeSystem, " ", *got.Webhooks[0].Service.ReadyEndpoints), "ms.yaml true 2"},
		{"a component keeps its live nodes", fmt.Sprint(got.Components[0].ProxyMode, " ", got.Components[0].Nodes, " ", got.Components[0].NodesOmitted), "nftables [n1 n2] 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

func TestOverlayMakesACapabilityPartialWhenItCutsItsList(t *testing.T) {
	budget := func(name string, allowed int, file string) DisruptionBudget {
		b := DisruptionBudget{Object: ObjectRef{Kind: "PodDisruptionBudget", Namespace: "a", Name: name, File: file}, MaxUnavailable: "1"}
		if file == "" {
			b.Status = &BudgetStatus{DisruptionsAllowed: allowed}
		}
		return b
	}
	allowing := func() []DisruptionBudget {
		var out []DisruptionBudget
		for i := range MaxPreflightItems {
			out = append(out, budget(fmt.Sprintf("b%04d", i), 1, ""))
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		capability string
		cluster    *Preflight
		manifests  *Preflight
		partial    bool
		reason     string
		kept       string
	}{
		{"a manifest budget with maxUnavailable 0 is kept over live ones that allow a disruption", CapDisruptionBudgets,
			&Preflight{DisruptionBudgets: allowing()},
			&Preflight{DisruptionBudgets: []DisruptionBudget{{Object: ObjectRef{Kind: "PodDisruptionBudget", Namespace: "zz", Name: "blocks", File: "p.yaml"}, MaxUnavailable: "0"}}},
			false, "1 PodDisruptionBudget(s) past the 1000 an inventory lists, all allowing a disruption", "blocks"},
		{"budgets that may block cut past the bound are partial", CapDisruptionBudgets,
			&Preflight{DisruptionBudgets: func() []DisruptionBudget {
				out := allowing()
				for i := range out {
					out[i].Status.DisruptionsAllowed = 0
				}
				return out
			}()},
			&Preflight{DisruptionBudgets: []DisruptionBudget{{Object: ObjectRef{Kind: "PodDisruptionBudget", Namespace: "zz", Name: "blocks", File: "p.yaml"}, MaxUnavailable: "0"}}},
			true, "1 PodDisruptionBudget(s), 1 of them that may block a drain, past the 1000", ""},
		{"webhooks cut past the bound are partial", CapWebhooks,
			&Preflight{Webhooks: func() []Webhook {
				var out []Webhook
				for i := range MaxPreflightItems {
					out = append(out, Webhook{Configuration: ObjectRef{Kind: "MutatingWebhookConfiguration", Name: fmt.Sprintf("c%04d", i)}, Name: "w"})
				}
				return out
			}()},
			&Preflight{Webhooks: []Webhook{{Configuration: ObjectRef{Kind: "MutatingWebhookConfiguration", Name: "new", File: "w.yaml"}, Name: "w"}}},
			true, "1 webhook(s) past the 1000 an inventory lists", ""},
		{"APIServices cut past the bound are partial", CapAPIServices,
			&Preflight{APIServices: func() []APIService {
				var out []APIService
				for i := range MaxPreflightItems {
					out = append(out, APIService{Object: ObjectRef{Kind: "APIService", Name: fmt.Sprintf("v1.g%04d", i)}})
				}
				return out
			}()},
			&Preflight{APIServices: []APIService{{Object: ObjectRef{Kind: "APIService", Name: "v1.new", File: "a.yaml"}}}},
			true, "1 APIService(s) past the 1000 an inventory lists", ""},
		{"lists within the bound leave the capability whole", CapWebhooks,
			&Preflight{}, &Preflight{Webhooks: []Webhook{{Configuration: ObjectRef{Kind: "MutatingWebhookConfiguration", Name: "new", File: "w.yaml"}, Name: "w"}}},
			false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			caps := map[string]Capability{}
			for _, c := range []string{CapDisruptionBudgets, CapWebhooks, CapAPIServices} {
				caps[c] = Capability{Available: true}
			}
			doc := Overlay(&Document{Source: "cluster", Preflight: tc.cluster, Capabilities: caps},
				&Document{Source: "files", Preflight: tc.manifests, Capabilities: map[string]Capability{CapDisruptionBudgets: {Available: true}, CapWebhooks: {Available: true}}})
			got := doc.Capabilities[tc.capability]
			if !got.Available || got.Partial != tc.partial || got.Reason != tc.reason && !strings.HasPrefix(got.Reason, tc.reason) || tc.reason == "" && got.Reason != "" {
				t.Errorf("%s = %+v, want partial %v, reason %q", tc.capability, got, tc.partial, tc.reason)
			}
			if tc.kept != "" && !slicesContainsBudget(doc.Preflight.DisruptionBudgets, tc.kept) {
				t.Errorf("budget %s was cut, want it kept", tc.kept)
			}
		})
	}
}

func slicesContainsBudget(budgets []DisruptionBudget, name string) bool {
	for _, b := range budgets {
		if b.Object.Name == name {
			return true
		}
	}
	return false
}
