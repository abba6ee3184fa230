package cluster_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/inventory"
)

// makeNode creates a node and sets the kubelet and runtime versions a kubelet would report.
func makeNode(t *testing.T, c kubernetes.Interface, name, kubelet string) {
	t.Helper()
	ctx := context.Background()
	n, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	n.Status.NodeInfo.KubeletVersion = kubelet
	n.Status.NodeInfo.ContainerRuntimeVersion = "containerd://1.7.27"
	if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func makePod(t *testing.T, c kubernetes.Interface, name string, labels map[string]string, node, container, image string) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: container, Image: image}}},
	}
	if _, err := c.CoreV1().Pods("kube-system").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = c.CoreV1().Pods("kube-system").Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
}

func TestVersionsReadsServerNodesAndControlPlane(t *testing.T) {
	c := adminClient(t, envServer)
	suffix := fmt.Sprint(time.Now().UnixNano() % 1e6)
	makeNode(t, c, "versions-a-"+suffix, "v1.35.1")
	makeNode(t, c, "versions-b-"+suffix, "v1.35.1")
	makeNode(t, c, "versions-c-"+suffix, "v1.32.9-eks-4096722")
	makePod(t, c, "kube-apiserver-cp-"+suffix, map[string]string{"component": "kube-apiserver", "tier": "control-plane"}, "", "kube-apiserver", "registry.k8s.io/kube-apiserver:v1.35.4")
	makePod(t, c, "kube-scheduler-cp-"+suffix, nil, "", "kube-scheduler", "registry.k8s.io/kube-scheduler-amd64:v1.34.2@sha256:0a1b")
	makePod(t, c, "kube-proxy-a-"+suffix, map[string]string{"k8s-app": "kube-proxy"}, "versions-a-"+suffix, "kube-proxy", "registry.k8s.io/kube-proxy:v1.35.1")
	makePod(t, c, "kube-proxy-c-"+suffix, map[string]string{"k8s-app": "kube-proxy"}, "versions-c-"+suffix, "kube-proxy", "registry.k8s.io/kube-proxy:v1.32.9-eks-4096722")

	col, err := cluster.New(restConfig(t, envServer, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	var doc inventory.Document
	capability := col.Versions(context.Background(), &doc)
	if !capability.Available || capability.Partial {
		t.Fatalf("versions = %+v", capability)
	}
	ks, err := c.CoreV1().Namespaces().Get(context.Background(), "kube-system", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if doc.ServerVersion != "v1.35.4" || doc.ClusterID != string(ks.UID) || doc.Provider != "other" || doc.EmulatedVersion != "" {
		t.Errorf("server %q cluster %q provider %q emulated %q", doc.ServerVersion, doc.ClusterID, doc.Provider, doc.EmulatedVersion)
	}
	var groups []string
	for _, g := range doc.Nodes {
		var mine []string
		for _, n := range g.Names {
			if strings.HasSuffix(n, suffix) {
				mine = append(mine, n)
			}
		}
		if len(mine) > 0 {
			groups = append(groups, fmt.Sprintf("%s %s %v", g.KubeletVersion, g.ContainerRuntime, mine))
		}
	}
	want := []string{
		fmt.Sprintf("v1.32.9-eks-4096722 containerd://1.7.27 [versions-c-%s]", suffix),
		fmt.Sprintf("v1.35.1 containerd://1.7.27 [versions-a-%[1]s versions-b-%[1]s]", suffix),
	}
	if !reflect.DeepEqual(groups, want) {
		t.Errorf("node groups = %q, want %q", groups, want)
	}
	got := map[string]inventory.ControlPlaneComponent{}
	for _, cp := range doc.ControlPlane {
		got[cp.Component+" "+cp.Version] = cp
	}
	if _, ok := got["kube-apiserver v1.35.4"]; !ok {
		t.Errorf("control plane %+v lacks kube-apiserver v1.35.4", doc.ControlPlane)
	}
	if _, ok := got["kube-scheduler v1.34.2"]; !ok {
		t.Errorf("control plane %+v lacks kube-scheduler v1.34.2 from a per-arch image", doc.ControlPlane)
	}
	proxy := got["kube-proxy v1.32.9-eks-4096722"]
	if proxy.KubeletVersion != "v1.32.9-eks-4096722" || !reflect.DeepEqual(proxy.Nodes, []string{"versions-c-" + suffix}) {
		t.Errorf("kube-proxy group = %+v, want it paired with its node's kubelet", proxy)
	}
}

func TestVersionsOfAnEmulatingServerNameTheEmulatedMinor(t *testing.T) {
	col, err := cluster.New(restConfig(t, envEmulated, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	var doc inventory.Document
	if c := col.Versions(context.Background(), &doc); !c.Available {
		t.Fatalf("versions = %+v", c)
	}
	if doc.EmulatedVersion != "1.32" || !strings.HasPrefix(doc.ServerVersion, "v1.35.") {
		t.Errorf("server %q emulated %q, want v1.35.x emulating 1.32", doc.ServerVersion, doc.EmulatedVersion)
	}
}

func TestVersionsForAViewerWithoutRightsIsPartialAndNamesWhy(t *testing.T) {
	col, err := cluster.New(restConfig(t, envServer, "viewer"))
	if err != nil {
		t.Fatal(err)
	}
	var doc inventory.Document
	c := col.Versions(context.Background(), &doc)
	if !c.Available || !c.Partial || len(c.Skipped) != 3 {
		t.Fatalf("versions = %+v, want available (the version is public) and partial with three skips", c)
	}
	for _, s := range c.Skipped {
		if !strings.Contains(s, "forbidden") {
			t.Errorf("skip %q does not say forbidden", s)
		}
	}
}
