package corpus

import (
	"fmt"

	"github.com/upgradescope/upgradescope/inventory"
)

// preflight is the pre-flight section of a large live cluster at the worst shape the
// section allows where real clusters reach it: every list the collector bounds at
// MaxPreflightItems full (1,000 PodDisruptionBudgets, each naming pods; 1,000 placements),
// drain lists at their MaxObjectRefs, 120 webhooks of 6 rules each (a cluster with
// Gatekeeper, Kyverno, cert-manager, Istio and a dozen operators), 40 aggregated APIs, 250
// CRDs converting through webhooks, 2,000 nodes with some not ready, cordoned and pressured,
// and the control plane's, kube-proxy's and 4 kubelet groups' flags. A few of each are in
// trouble, so every pre-flight family has findings to make.
func preflight(namespaces, nodes int) *inventory.Preflight {
	p := &inventory.Preflight{}
	ns := func(i int) string { return fmt.Sprintf("ns-%03d", i%namespaces) }
	for i := range inventory.MaxPreflightItems {
		b := inventory.DisruptionBudget{
			Object:     inventory.ObjectRef{Namespace: ns(i), Name: fmt.Sprintf("pdb-%04d", i)},
			APIVersion: "policy/v1", MinAvailable: "1",
			Status: &inventory.BudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3},
			Pods:   []string{fmt.Sprintf("app-%04d-0", i), fmt.Sprintf("app-%04d-1", i), fmt.Sprintf("app-%04d-2", i)},
		}
		if i%50 == 0 {
			b.MinAvailable, b.MaxUnavailable = "", "0"
			b.Status.DisruptionsAllowed = 0
		}
		p.DisruptionBudgets = append(p.DisruptionBudgets, b)
		rule := []string{"anti-affinity", "topology-spread"}[i%2]
		p.Placements = append(p.Placements, inventory.Placement{
			Object: inventory.ObjectRef{Kind: "Deployment", Namespace: ns(i), Name: fmt.Sprintf("app-%04d", i)}, Replicas: 3, Rule: rule,
		})
	}
	p.DisruptionBudgetsOmitted, p.PlacementsOmitted = 200, 150
	p.Drain = &inventory.DrainPods{Examined: 40000, Unreplicated: podList("bare", 640, ns), LocalStorage: podList("cache", 5200, ns)}
	for i := range 120 {
		w := webhook(i, ns)
		p.Webhooks = append(p.Webhooks, w)
	}
	for i := range 40 {
		p.APIServices = append(p.APIServices, apiService(i))
	}
	for i := range 250 {
		zero, one, found := 0, 1, true
		ready := &one
		if i%100 == 3 {
			ready = &zero
		}
		p.Conversions = append(p.Conversions, inventory.Conversion{
			CRD:   inventory.ObjectRef{Kind: "CustomResourceDefinition", Name: fmt.Sprintf("kind%ds.group%d.example.com", i, i)},
			Group: fmt.Sprintf("group%d.example.com", i), Kind: fmt.Sprintf("Kind%d", i),
			Service: &inventory.ServiceRef{Namespace: ns(i), Name: fmt.Sprintf("conversion-%d", i), Port: 443, Found: &found, ReadyEndpoints: ready},
		})
	}
	p.NodeState = nodeState(nodes)
	p.Components = components()
	return p
}

func podList(prefix string, count int, ns func(int) string) inventory.PodList {
	l := inventory.PodList{Count: count, ObjectsOmitted: count - inventory.MaxObjectRefs}
	for i := range inventory.MaxObjectRefs {
		l.Objects = append(l.Objects, inventory.ObjectRef{Kind: "Pod", Namespace: ns(i), Name: fmt.Sprintf("%s-%04d", prefix, i)})
	}
	return l
}

func webhook(i int, ns func(int) string) inventory.Webhook {
	one, found := 1, true
	ready := &one
	if i%40 == 5 {
		zero := 0
		ready = &zero
	}
	w := inventory.Webhook{
		Configuration: inventory.ObjectRef{Kind: []string{"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"}[i%2], Name: fmt.Sprintf("operator-%d", i/3)},
		APIVersion:    "admissionregistration.k8s.io/v1", Name: fmt.Sprintf("hook-%d.operator-%d.example.com", i, i/3),
		FailurePolicy: []string{"Fail", "Ignore", ""}[i%3], CoversKubeSystem: i%10 == 0, ObjectSelectorEmpty: true,
		Service:        &inventory.ServiceRef{Namespace: ns(i), Name: fmt.Sprintf("operator-%d-webhook", i/3), Port: 443, Found: &found, ReadyEndpoints: ready},
		TimeoutSeconds: 10,
	}
	for r := range 6 {
		rule := inventory.WebhookRule{
			Operations: []string{"CREATE", "UPDATE"}, APIGroups: []string{"apps"}, APIVersions: []string{"v1"},
			Resources: []string{fmt.Sprintf("resource%d", r)}, Scope: "Namespaced",
		}
		if i%30 == 7 && r == 0 {
			rule.APIGroups, rule.APIVersions, rule.Resources = []string{"policy"}, []string{"v1beta1"}, []string{"podsecuritypolicies"}
		}
		if i%10 == 0 && r == 1 {
			rule.APIGroups, rule.APIVersions, rule.Resources = []string{"*"}, []string{"*"}, []string{"*"}
		}
		w.Rules = append(w.Rules, rule)
	}
	return w
}

func apiService(i int) inventory.APIService {
	one, found := 1, true
	a := inventory.APIService{
		Object: inventory.ObjectRef{Kind: "APIService", Name: fmt.Sprintf("v1beta1.api%d.example.com", i)},
		Group:  fmt.Sprintf("api%d.example.com", i), Version: "v1beta1", Available: "True", Reason: "Passed",
		Service: &inventory.ServiceRef{Namespace: "kube-system", Name: fmt.Sprintf("api-%d", i), Port: 443, Found: &found, ReadyEndpoints: &one},
	}
	if i%20 == 9 {
		a.Available, a.Reason, a.Message = "False", "MissingEndpoints", "endpoints for service/api-9 in \"kube-system\" have no addresses with port name \"https\""
	}
	return a
}

func nodeState(nodes int) *inventory.NodeState {
	names := func(prefix string, count int) inventory.NameList {
		l := inventory.NameList{Count: count}
		for i := range min(count, inventory.MaxPreflightNames) {
			l.Names = append(l.Names, fmt.Sprintf("%s-%04d.ec2.internal", prefix, i))
		}
		l.NamesOmitted = count - len(l.Names)
		return l
	}
	s := &inventory.NodeState{
		Examined: nodes, Schedulable: nodes - 30, NotReady: names("ip-10-9-0", 12), Cordoned: names("ip-10-8-0", 20),
		Pressure: []inventory.NodeCondition{{Condition: "DiskPressure", Nodes: names("ip-10-7-0", 4)}, {Condition: "MemoryPressure", Nodes: names("ip-10-6-0", 2)}},
	}
	for minor := range 4 {
		for _, os := range []string{"Amazon Linux 2023.6.20241121", "Bottlerocket OS 1.26.2 (aws-k8s-1.31)", "Ubuntu 22.04.5 LTS"} {
			s.Systems = append(s.Systems, inventory.NodeSystem{
				OSImage: os, KernelVersion: "6.1.115-126.197.amzn2023.x86_64", ContainerRuntime: "containerd://1.7.27",
				KubeletVersion: fmt.Sprintf("v1.%d.%d-eks-4096722", 30+minor, minor+2), Nodes: names(fmt.Sprintf("ip-10-%d-1", minor), nodes/12),
			})
		}
	}
	return s
}

func components() []inventory.Component {
	gates := []inventory.FeatureGate{{Name: "InPlacePodVerticalScaling", Value: true}, {Name: "SidecarContainers", Value: true}}
	var out []inventory.Component
	for _, c := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		out = append(out, inventory.Component{
			Component: c, Source: "static-pod", Object: inventory.ObjectRef{Kind: "Pod", Namespace: "kube-system", Name: c + "-ip-10-0-0-1.ec2.internal"},
			FeatureGates: gates, Flags: []inventory.Flag{{Name: "--v", Value: "2"}, {Name: "--profiling", Value: "false"}},
		})
	}
	out = append(out, inventory.Component{
		Component: "kube-proxy", Source: "daemonset", Object: inventory.ObjectRef{Kind: "DaemonSet", Namespace: "kube-system", Name: "kube-proxy"},
		ProxyMode: "ipvs", Flags: []inventory.Flag{{Name: "--config", Value: "/var/lib/kube-proxy-config/config"}},
	})
	for minor := range 4 {
		fail := true
		out = append(out, inventory.Component{
			Component: "kubelet", Source: "kubelet-configz", Object: inventory.ObjectRef{Kind: "Node", Name: fmt.Sprintf("ip-10-%d-1-0000.ec2.internal", minor)},
			FeatureGates: gates, FailCgroupV1: &fail, Nodes: []string{fmt.Sprintf("ip-10-%d-1-0000.ec2.internal", minor)}, NodesOmitted: 499,
		})
	}
	return out
}
