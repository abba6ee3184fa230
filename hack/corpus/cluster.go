package corpus

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// clusterAddonImages are 30 add-on images a large cluster runs, most of them known to the
// registry.
var clusterAddonImages = []string{
	"registry.k8s.io/ingress-nginx/controller:v1.11.3", "quay.io/jetstack/cert-manager-controller:v1.15.1",
	"quay.io/cilium/cilium:v1.16.3", "docker.io/calico/node:v3.28.2", "docker.io/istio/pilot:1.23.2",
	"quay.io/argoproj/argocd:v2.12.4", "ghcr.io/fluxcd/helm-controller:v1.1.0", "ghcr.io/kyverno/kyverno:v1.12.6",
	"docker.io/openpolicyagent/gatekeeper:v3.17.1", "public.ecr.aws/karpenter/controller:1.0.6",
	"registry.k8s.io/metrics-server/metrics-server:v0.7.2", "registry.k8s.io/coredns/coredns:v1.11.3",
	"registry.k8s.io/external-dns/external-dns:v0.15.0", "docker.io/velero/velero:v1.14.1",
	"docker.io/library/traefik:v3.1.6", "ghcr.io/kedacore/keda:2.15.1",
	"registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0",
	"quay.io/prometheus-operator/prometheus-operator:v0.77.1", "docker.io/kubernetesui/dashboard:v2.7.0",
	"docker.io/grafana/promtail:3.0.0", "docker.io/grafana/agent:v0.43.3", "docker.io/weaveworks/weave-kube:2.8.1",
	"docker.io/fluent/fluent-bit:3.1.9", "registry.k8s.io/etcd:3.5.15-0",
	"docker.io/rancher/nginx-ingress-controller:v1.10.4-hardened3",
	"mcr.microsoft.com/oss/kubernetes/ingress/nginx-ingress-controller:v1.11.2",
	"quay.io/prometheus/prometheus:v2.54.1", "docker.io/bitnami/redis:7.4.1",
	"docker.io/library/postgres:16.4", "quay.io/jetstack/cert-manager-webhook:v1.15.1",
}

// LargeCluster is the inventory of a large live cluster: 2,000 nodes on four kubelet minors,
// 1,000 Helm releases (4% whose kubeVersion stops below 1.35, 2% whose stored manifest holds
// a removed API, 40 of them ingress-nginx), 200 namespaces owned by 25 teams, 30 add-on
// images and 600 application images, 250 CRDs, some API usage, and a pre-flight section at
// the worst shape its bounds allow (preflight.go).
func LargeCluster() *inventory.Document {
	doc := &inventory.Document{
		SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceCluster,
		ClusterID: "3b0e7c1a-0000-4000-8000-000000000001", ServerVersion: "v1.33.5-eks-4096722",
		CollectedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		Capabilities: map[string]inventory.Capability{
			inventory.CapAPIUsage: {Available: true}, inventory.CapVersions: {Available: true},
			inventory.CapHelm: {Available: true}, inventory.CapAddons: {Available: true},
			inventory.CapDisruptionBudgets: {Available: true}, inventory.CapPods: {Available: true},
			inventory.CapWebhooks: {Available: true}, inventory.CapEndpoints: {Available: true},
			inventory.CapAPIServices: {Available: true}, inventory.CapNodeState: {Available: true},
			inventory.CapComponentFlags: {Available: true},
			inventory.CapCRDs:           {Available: true}, inventory.CapDeprecatedCalls: {Available: true},
		},
	}
	for i := range 200 {
		doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: fmt.Sprintf("ns-%03d", i), Team: fmt.Sprintf("team-%02d", i%25)})
	}
	doc.ControlPlane = []inventory.ControlPlaneComponent{
		{Component: "kube-apiserver", Version: "v1.33.5-eks-4096722"},
		{Component: "kube-controller-manager", Version: "v1.33.5-eks-4096722"},
		{Component: "kube-scheduler", Version: "v1.33.5-eks-4096722"},
	}
	// 2,000 nodes in four kubelet minors; kube-proxy runs the node's version.
	for minor := range 4 {
		kubelet := fmt.Sprintf("v1.%d.%d-eks-4096722", 30+minor, minor+2)
		names := make([]string, 0, inventory.MaxNodeNames)
		for i := range inventory.MaxNodeNames {
			names = append(names, fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", minor, i/256, i%256))
		}
		doc.Nodes = append(doc.Nodes, inventory.NodeGroup{
			KubeletVersion: kubelet, ContainerRuntime: "containerd://1.7.27", Count: 500, Names: names, NamesOmitted: 400,
		})
		doc.ControlPlane = append(doc.ControlPlane, inventory.ControlPlaneComponent{
			Component: "kube-proxy", Version: kubelet, KubeletVersion: kubelet, Count: 500, Nodes: names, NodesOmitted: 400,
		})
	}
	for i := range 1000 {
		ns := fmt.Sprintf("ns-%03d", i%200)
		r := inventory.HelmRelease{
			Name: fmt.Sprintf("release-%04d", i), Namespace: ns, Chart: fmt.Sprintf("app-%d", i%120),
			ChartVersion: fmt.Sprintf("1.%d.0", i%20), AppVersion: fmt.Sprintf("2.%d.1", i%15), Status: "deployed", Revision: 1 + i%9,
			KubeVersion: []string{"", ">=1.21.0-0", "^1.28.0-0", ">=1.25.0-0"}[i%4],
			ManifestAPIs: []inventory.APIUsage{
				{Group: "apps", Version: "v1", Kind: "Deployment", Count: 1, Namespaces: map[string]int{ns: 1}},
			},
		}
		// A few charts are stuck: 4% cap Kubernetes below 1.35, 2% of stored manifests
		// still hold an API removed long ago.
		if i%25 == 7 {
			r.KubeVersion = ">=1.24.0-0 <1.35.0-0"
		}
		if i%50 == 0 {
			r.ManifestAPIs = append(r.ManifestAPIs, inventory.APIUsage{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget", Count: 1, Namespaces: map[string]int{ns: 1}})
		}
		if i%25 == 0 {
			r.Chart, r.AppVersion = "ingress-nginx", "1.9.4"
		}
		doc.HelmReleases = append(doc.HelmReleases, r)
	}
	for i, img := range clusterAddonImages {
		repo, tag, digest := inventory.SplitImage(img)
		doc.WorkloadImages = append(doc.WorkloadImages, inventory.WorkloadImage{Repository: repo, Versions: []inventory.ImageVersion{
			{Tag: tag, Digest: digest, Namespaces: []string{fmt.Sprintf("ns-%03d", i*5)}},
		}})
	}
	// Application images no add-on matcher can claim keep only their namespaces, as the live
	// collector records them.
	for i := range 600 {
		doc.WorkloadImages = append(doc.WorkloadImages, inventory.WorkloadImage{
			Repository: fmt.Sprintf("123456789012.dkr.ecr.eu-west-1.amazonaws.com/team-%02d/service-%d", i%25, i),
			Versions:   []inventory.ImageVersion{{Tag: fmt.Sprintf("%d.%d.0", i%4, i%30), Namespaces: []string{fmt.Sprintf("ns-%03d", i%200)}}},
		})
	}
	sort.Slice(doc.WorkloadImages, func(i, j int) bool { return doc.WorkloadImages[i].Repository < doc.WorkloadImages[j].Repository })
	for i := range 250 {
		doc.CRDs = append(doc.CRDs, inventory.CRD{
			Group: fmt.Sprintf("group%d.example.com", i), Kind: fmt.Sprintf("Kind%d", i), Plural: fmt.Sprintf("kind%ds", i),
			Versions:       []inventory.CRDVersion{{Name: "v1", Served: true, Storage: true}, {Name: "v1beta1", Served: true, Deprecated: i%10 == 0}},
			StoredVersions: []string{"v1"},
		})
	}
	doc.APIUsage = []inventory.APIUsage{
		{Group: "", Version: "v1", Kind: "Endpoints", Count: 400, Namespaces: map[string]int{"ns-001": 200, "ns-002": 200}},
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3", Kind: "FlowSchema", Count: 3, Namespaces: map[string]int{"": 3}},
	}
	doc.DeprecatedCalls = []inventory.DeprecatedCall{
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3", Resource: "flowschemas", RemovedRelease: "1.32"},
		{Group: "", Version: "v1", Resource: "endpoints"},
	}
	observeProbes(doc, rand.New(rand.NewPCG(1, 2)), 5000, func(i int) string { return fmt.Sprintf("ns-%03d", i%200) })
	doc.Preflight = preflight(200, 2000)
	return doc
}
