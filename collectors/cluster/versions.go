package cluster

import (
	"context"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"

	"github.com/upgradescope/upgradescope/inventory"
)

// controlPlaneComponents are recognised by their static-pod label or their name prefix.
var controlPlaneComponents = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd", "kube-proxy"}

// Versions records the server version (and its emulated minor), the cluster UID, node groups,
// control-plane components from kube-system pods and the provider. It fails only as a whole
// when the server version cannot be read; what else it misses it lists as skipped.
func (c *Collector) Versions(ctx context.Context, doc *inventory.Document) inventory.Capability {
	return c.versions(ctx, doc, nil)
}

// versions is Versions, handing what it lists to the pre-flight pass (pf): the nodes, and
// kube-system's labels and pods.
func (c *Collector) versions(ctx context.Context, doc *inventory.Document, pf *preflightPass) inventory.Capability {
	info, err := discovery.ToDiscoveryInterfaceWithContext(c.client.Discovery()).ServerVersionWithContext(ctx)
	if err != nil {
		pf.nodesRead(doc, nil, errVersionsFailed)
		return unavailable("server version", err)
	}
	doc.ServerVersion = info.GitVersion
	// Every recent server reports an emulation version; it matters only when it differs
	// from the binary's own minor.
	if emulated := info.EmulationMajor + "." + info.EmulationMinor; info.EmulationMinor != "" &&
		emulated != strings.TrimSuffix(info.Major+"."+info.Minor, "+") {
		doc.EmulatedVersion = emulated
	}
	doc.Provider = providerOf(info.GitVersion)
	var skipped []string
	var kubeSystemLabels map[string]string
	if ns, err := c.client.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err == nil {
		doc.ClusterID = string(ns.UID)
		kubeSystemLabels = ns.Labels
	} else {
		skipped = append(skipped, "cluster id: "+err.Error())
	}
	nodes, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 500})
	if err == nil && nodes.Continue == "" {
		doc.Nodes = groupNodes(nodes.Items)
	} else {
		nodes, err = c.listAllNodes(ctx)
		if err != nil {
			skipped = append(skipped, "nodes: "+err.Error())
		} else {
			doc.Nodes = groupNodes(nodes.Items)
		}
	}
	if err != nil {
		pf.nodesRead(doc, nil, err)
	} else {
		pf.nodesRead(doc, nodes.Items, nil)
	}
	pods, err := c.client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
	if err != nil {
		skipped = append(skipped, "control plane: "+err.Error())
		pf.kubeSystem(kubeSystemLabels, nil, err)
	} else {
		doc.ControlPlane = controlPlane(pods.Items, doc.Nodes, nodeKubelets(nodes))
		pf.kubeSystem(kubeSystemLabels, pods.Items, nil)
	}
	if len(skipped) > 0 {
		return inventory.Capability{Available: true, Partial: true, Reason: strings.Join(skipped, "; "), Skipped: skipped}
	}
	return inventory.Capability{Available: true}
}

func (c *Collector) listAllNodes(ctx context.Context) (*corev1.NodeList, error) {
	all := &corev1.NodeList{}
	opts := metav1.ListOptions{Limit: 500}
	for {
		page, err := c.client.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return nil, err
		}
		all.Items = append(all.Items, page.Items...)
		if page.Continue == "" {
			return all, nil
		}
		opts.Continue = page.Continue
	}
}

// groupNodes groups nodes by kubelet version and container runtime, names sorted.
func groupNodes(nodes []corev1.Node) []inventory.NodeGroup {
	type key struct{ kubelet, runtime string }
	groups := map[key]*inventory.NodeGroup{}
	var order []key
	for _, n := range nodes {
		k := key{n.Status.NodeInfo.KubeletVersion, n.Status.NodeInfo.ContainerRuntimeVersion}
		g := groups[k]
		if g == nil {
			g = &inventory.NodeGroup{KubeletVersion: k.kubelet, ContainerRuntime: k.runtime, Names: []string{}}
			groups[k] = g
			order = append(order, k)
		}
		g.Count++
		g.Names = append(g.Names, n.Name)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].kubelet != order[j].kubelet {
			return order[i].kubelet < order[j].kubelet
		}
		return order[i].runtime < order[j].runtime
	})
	out := make([]inventory.NodeGroup, 0, len(order))
	for _, k := range order {
		g := groups[k]
		sort.Strings(g.Names)
		if len(g.Names) > inventory.MaxNodeNames {
			g.NamesOmitted = len(g.Names) - inventory.MaxNodeNames
			g.Names = g.Names[:inventory.MaxNodeNames]
		}
		out = append(out, *g)
	}
	return out
}

func nodeKubelets(nodes *corev1.NodeList) map[string]string {
	out := map[string]string{}
	if nodes != nil {
		for _, n := range nodes.Items {
			out[n.Name] = n.Status.NodeInfo.KubeletVersion
		}
	}
	return out
}

// controlPlane reads component versions from kube-system pods: the static-pod `component`
// label, `k8s-app=kube-proxy`, or the pod name's prefix; the version is the image tag.
func controlPlane(pods []corev1.Pod, _ []inventory.NodeGroup, kubelets map[string]string) []inventory.ControlPlaneComponent {
	type key struct{ component, version, kubelet string }
	groups := map[key]*inventory.ControlPlaneComponent{}
	for _, p := range pods {
		component := componentOf(p)
		if component == "" {
			continue
		}
		version := imageVersion(p, component)
		if version == "" {
			continue
		}
		k := key{component, version, ""}
		if component == "kube-proxy" {
			k.kubelet = kubelets[p.Spec.NodeName]
		}
		g := groups[k]
		if g == nil {
			g = &inventory.ControlPlaneComponent{Component: component, Version: version, KubeletVersion: k.kubelet}
			groups[k] = g
		}
		g.Count++
		if component == "kube-proxy" && p.Spec.NodeName != "" {
			if len(g.Nodes) < inventory.MaxNodeNames {
				g.Nodes = append(g.Nodes, p.Spec.NodeName)
			} else {
				g.NodesOmitted++
			}
		}
	}
	out := make([]inventory.ControlPlaneComponent, 0, len(groups))
	for _, g := range groups {
		sort.Strings(g.Nodes)
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Component != b.Component {
			return a.Component < b.Component
		}
		if a.Version != b.Version {
			return a.Version < b.Version
		}
		return a.KubeletVersion < b.KubeletVersion
	})
	return out
}

func componentOf(p corev1.Pod) string {
	if p.Labels["k8s-app"] == "kube-proxy" {
		return "kube-proxy"
	}
	for _, c := range controlPlaneComponents {
		if p.Labels["component"] == c || strings.HasPrefix(p.Name, c+"-") {
			return c
		}
	}
	return ""
}

// imageVersion is the tag of the container named for the component, or of the only
// container; per-arch image names (kube-apiserver-amd64) and build suffixes are kept out
// of the component name and in the version.
func imageVersion(p corev1.Pod, component string) string {
	containers := p.Spec.Containers
	for _, c := range containers {
		if c.Name == component || len(containers) == 1 {
			repo, tag := splitTag(c.Image)
			if strings.Contains(repo, component) && tag != "" {
				return tag
			}
		}
	}
	return ""
}

// splitTag cuts a digest, then the tag after the last colon that follows the last slash.
func splitTag(image string) (repo, tag string) {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	slash := strings.LastIndex(image, "/")
	if i := strings.LastIndex(image, ":"); i > slash {
		return image[:i], image[i+1:]
	}
	return image, ""
}

// providerOf tells managed control planes apart by the version string they report.
func providerOf(gitVersion string) string {
	switch {
	case strings.Contains(gitVersion, "-eks-"):
		return "eks"
	case strings.Contains(gitVersion, "-gke."):
		return "gke"
	case strings.Contains(gitVersion, "-aks"):
		return "aks"
	}
	return "other"
}
