package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// Objects the 1.35 API server still accepts, with a warning, and the strict validation of 1.36
// refuses (KEP-4858): the knowledge base's strictInvalid probes find them live, name the refused
// values, and the behaviours pack judges them at 1.36 as a warning, since an object that exists
// keeps its value.
func TestIPsAndCIDRsTheStrictValidationRefusesAreFoundLive(t *testing.T) {
	c := adminClient(t, envServer)
	ctx := context.Background()
	sfx := fmt.Sprint(time.Now().UnixNano() % 1e6)
	ns := "strict-ip-" + sfx
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "legacy-vip"}, Spec: corev1.ServiceSpec{
		Selector:    map[string]string{"app": "legacy"},
		Ports:       []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		ExternalIPs: []string{"192.000.002.010", "192.0.2.11"},
	}}
	if _, err := c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	policy := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "egress-office"}, Spec: networkingv1.NetworkPolicySpec{
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		Egress: []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{
			{IPBlock: &networkingv1.IPBlock{CIDR: "10.20.30.40/16"}},
			{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}},
		}}},
	}}
	if _, err := c.NetworkingV1().NetworkPolicies(ns).Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	eng, err := engine.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	doc := collector(t, envServer, "admin").Collect(ctx, time.Now(), cluster.Options{StepTimeout: time.Minute, Observe: eng.Observe()})
	r, err := eng.Evaluate(ctx, doc, []string{"1.36"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ key, severity, value string }{
		{"removed-behaviour/service-external-ips-strict", report.SeverityWarning, "192.000.002.010"},
		{"removed-behaviour/networkpolicy-cidr-strict", report.SeverityWarning, "10.20.30.40/16"},
		{"deprecated-behaviour/service-external-ips", report.SeverityInfo, ""},
	} {
		f, ok := findingAbout(r.Targets[0].Findings, tt.key, ns)
		switch {
		case !ok:
			t.Errorf("no %s finding names an object of %s", tt.key, ns)
		case string(f.Severity) != tt.severity:
			t.Errorf("%s is a %s, want a %s live", tt.key, f.Severity, tt.severity)
		case tt.value != "" && !(strings.Contains(f.Detail, "Refused values: ") && strings.Contains(f.Detail, tt.value)):
			t.Errorf("%s detail %q does not name the refused value %s", tt.key, f.Detail, tt.value)
		}
	}
}

// Nodes whose containerd is 1.x are judged against the kubelet that stops falling back to its
// own cgroup driver at 1.38 (KEP-4033), read from the nodes' status as the API server has it;
// a node on containerd 2 is not named.
func TestContainerd1NodesAreJudgedFromTheirStatusLive(t *testing.T) {
	c := adminClient(t, envServer)
	ctx := context.Background()
	sfx := fmt.Sprint(time.Now().UnixNano() % 1e6)
	node := func(name, runtime string) {
		n, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		n.Status.NodeInfo.KubeletVersion = "v1.35.4"
		n.Status.NodeInfo.ContainerRuntimeVersion = runtime
		if _, err := c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	old, current := "ctr1-"+sfx, "ctr2-"+sfx
	node(old, "containerd://1.7.29")
	node(current, "containerd://2.1.4")

	eng, err := engine.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	doc := collector(t, envServer, "admin").Collect(ctx, time.Now(), cluster.Options{StepTimeout: time.Minute, Observe: eng.Observe()})
	r, err := eng.Evaluate(ctx, doc, []string{"1.37", "1.38"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i, severity := range []string{report.SeverityWarning, report.SeverityBlocker} {
		fs := r.Targets[i].Findings
		j := slices.IndexFunc(fs, func(f report.Finding) bool {
			return strings.HasSuffix(f.Key, "-behaviour/containerd-without-runtime-config")
		})
		if j < 0 {
			t.Errorf("%s: no finding about containerd 1.x nodes", r.Targets[i].Target)
			continue
		}
		named := func(n string) bool {
			return slices.ContainsFunc(fs[j].Objects, func(o inventory.ObjectRef) bool { return o.Kind == "Node" && o.Name == n })
		}
		if string(fs[j].Severity) != severity || !named(old) || named(current) {
			t.Errorf("%s: %s %q names %v; want a %s naming %s and not %s", r.Targets[i].Target, fs[j].Severity, fs[j].Title, fs[j].Objects, severity, old, current)
		}
	}
}

// findingAbout is the finding with key that names an object of namespace ns.
func findingAbout(fs []report.Finding, key, ns string) (report.Finding, bool) {
	i := slices.IndexFunc(fs, func(f report.Finding) bool {
		return f.Key == key && slices.ContainsFunc(f.Objects, func(o inventory.ObjectRef) bool { return o.Namespace == ns })
	})
	if i < 0 {
		return report.Finding{}, false
	}
	return fs[i], true
}
