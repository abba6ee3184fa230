package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/inventory"
)

// preflightCapabilities are the capabilities the pre-flight steps fill.
var preflightCapabilities = []string{
	inventory.CapDisruptionBudgets, inventory.CapPods, inventory.CapWebhooks, inventory.CapEndpoints,
	inventory.CapAPIServices, inventory.CapNodeState, inventory.CapComponentFlags, inventory.CapKubeletConfig,
}

// fixture is what a pre-flight test writes to the shared API server, named with a suffix so
// that concurrent tests' objects are told apart, and removed when the test ends.
type fixture struct {
	t   *testing.T
	c   kubernetes.Interface
	dyn dynamic.Interface
	sfx string
	ns  string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	cfg := restConfig(t, envServer, "admin")
	f := &fixture{t: t, c: kubernetes.NewForConfigOrDie(cfg), dyn: dynamic.NewForConfigOrDie(cfg), sfx: fmt.Sprint(time.Now().UnixNano() % 1e6)}
	f.ns = "preflight-" + f.sfx
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}})
	return f
}

// create writes obj (a typed object of the kinds below) and deletes it at the end.
func (f *fixture) create(obj any) {
	f.t.Helper()
	ctx, bg := context.Background(), context.Background()
	var err error
	switch o := obj.(type) {
	case *corev1.Namespace:
		_, err = f.c.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
		f.t.Cleanup(func() { _ = f.c.CoreV1().Namespaces().Delete(bg, o.Name, metav1.DeleteOptions{}) })
	case *corev1.Pod:
		_, err = f.c.CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		zero := int64(0)
		f.t.Cleanup(func() {
			_ = f.c.CoreV1().Pods(o.Namespace).Delete(bg, o.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		})
	case *corev1.Service:
		_, err = f.c.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ConfigMap:
		_, err = f.c.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		f.t.Cleanup(func() { _ = f.c.CoreV1().ConfigMaps(o.Namespace).Delete(bg, o.Name, metav1.DeleteOptions{}) })
	case *discoveryv1.EndpointSlice:
		_, err = f.c.DiscoveryV1().EndpointSlices(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *unstructured.Unstructured:
		gvk := o.GroupVersionKind()
		resource := strings.ToLower(gvk.Kind) + "s"
		if gvk.Kind == "CustomResourceDefinition" {
			resource = "customresourcedefinitions"
		}
		var r dynamic.ResourceInterface = f.dyn.Resource(gvk.GroupVersion().WithResource(resource))
		if o.GetNamespace() != "" {
			r = f.dyn.Resource(gvk.GroupVersion().WithResource(resource)).Namespace(o.GetNamespace())
		}
		_, err = r.Create(ctx, o, metav1.CreateOptions{})
		f.t.Cleanup(func() { _ = r.Delete(bg, o.GetName(), metav1.DeleteOptions{}) })
	default:
		f.t.Fatalf("no create for %T", obj)
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// pod is a Pending pod (no scheduler or kubelet runs) with labels.
func (f *fixture) pod(name string, labels map[string]string) {
	f.create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/shop:1"}}}})
}

// blockingBudget is a PodDisruptionBudget selecting app=shop whose status, written through
// the status subresource as the disruption controller would (none runs here), allows no
// disruption with every pod healthy.
func (f *fixture) blockingBudget(name string) {
	f.t.Helper()
	ctx := context.Background()
	two := intstr.FromInt32(2)
	pdb, err := f.c.PolicyV1().PodDisruptionBudgets(f.ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "shop"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2}
	if _, err := f.c.PolicyV1().PodDisruptionBudgets(f.ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// service is a ClusterIP service on port 443 (named https), selecting no pod.
func (f *fixture) service(name string) {
	f.create(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "nothing-" + f.sfx}, Ports: []corev1.ServicePort{
			{Name: "https", Port: 443, TargetPort: intstr.FromInt32(8443)}, {Name: "metrics", Port: 9090},
		}}})
}

// failingWebhook is a ValidatingWebhookConfiguration with failurePolicy Fail calling
// service. Its namespaceSelector names a label no namespace has, so it never stops another
// test sharing the API server.
func (f *fixture) failingWebhook(name, service string) {
	f.create(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
		"metadata": map[string]any{"name": name},
		"webhooks": []any{map[string]any{
			"name": "validate.preflight-" + f.sfx + ".example.com", "failurePolicy": "Fail", "sideEffects": "None",
			"admissionReviewVersions": []any{"v1"},
			"clientConfig":            map[string]any{"service": map[string]any{"namespace": f.ns, "name": service, "path": "/validate"}},
			"namespaceSelector":       map[string]any{"matchLabels": map[string]any{"upgradescope-preflight-test": f.sfx}},
			"rules": []any{map[string]any{"operations": []any{"CREATE"}, "apiGroups": []any{""}, "apiVersions": []any{"v1"},
				"resources": []any{"configmaps"}}},
		}},
	}})
}

func (f *fixture) node(name string, ready corev1.ConditionStatus, mutate func(*corev1.Node)) {
	f.t.Helper()
	ctx := context.Background()
	n, err := f.c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = f.c.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	n.Status.NodeInfo = corev1.NodeSystemInfo{OSImage: "Preflight Linux " + f.sfx, KernelVersion: "6.8.0", ContainerRuntimeVersion: "containerd://1.7.27", KubeletVersion: "v1.35.1"}
	if mutate != nil {
		mutate(n)
	}
	unschedulable := n.Spec.Unschedulable
	if n, err = f.c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	if unschedulable {
		n.Spec.Unschedulable = true
		if _, err := f.c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
			f.t.Fatal(err)
		}
	}
}

// mine keeps the names ending in the fixture's suffix: the API server is shared.
func (f *fixture) mine(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, f.sfx) {
			out = append(out, n)
		}
	}
	return out
}

func collectAll(t *testing.T, cfg *rest.Config, opts cluster.Options) *inventory.Document {
	t.Helper()
	col, err := cluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if opts.StepTimeout == 0 {
		opts.StepTimeout = time.Minute
	}
	doc := col.Collect(context.Background(), time.Now(), opts)
	// Every collection is a document the schema accepts.
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inventory.Parse(data); err != nil {
		t.Fatalf("the collected inventory does not validate: %v", err)
	}
	return doc
}

// A live collection on the real API server: a budget that allows no disruption with its pods,
// a Fail webhook whose service has no EndpointSlice, an APIService the aggregator finds no
// service for, a CRD converting through a service whose only endpoint is not ready, and
// nodes NotReady, cordoned and under pressure, each read into the section and each part's
// capability available.
func TestALiveCollectionReadsWhatStallsAnUpgrade(t *testing.T) {
	f := newFixture(t)
	f.pod("shop-1-"+f.sfx, map[string]string{"app": "shop"})
	f.pod("shop-2-"+f.sfx, map[string]string{"app": "shop"})
	f.pod("other-"+f.sfx, map[string]string{"app": "web"})
	f.blockingBudget("shop")
	f.service("hook")
	f.failingWebhook("preflight-"+f.sfx, "hook")
	f.conversionWebhook()
	group := f.unavailableAPIService()
	f.spreadDeployment("spread")
	f.node("ready-"+f.sfx, corev1.ConditionTrue, nil)
	f.node("notready-"+f.sfx, corev1.ConditionFalse, nil)
	f.node("cordoned-"+f.sfx, corev1.ConditionTrue, func(n *corev1.Node) { n.Spec.Unschedulable = true })
	f.node("pressure-"+f.sfx, corev1.ConditionTrue, func(n *corev1.Node) {
		n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue})
	})

	doc := collectAll(t, restConfig(t, envServer, "admin"), cluster.Options{})
	for _, name := range preflightCapabilities {
		c, ok := doc.Capabilities[name]
		if want := name != inventory.CapKubeletConfig; !ok || c.Available != want {
			t.Errorf("capability %s = %+v (recorded %v), want available %v", name, c, ok, want)
		}
	}
	if c := doc.Capabilities[inventory.CapKubeletConfig]; !strings.Contains(c.Reason, "--kubelet-configz") || !strings.Contains(c.Reason, "nodes/proxy") {
		t.Errorf("kubelet-config reason %q does not say how to read it", c.Reason)
	}
	sec := doc.Preflight
	if sec == nil {
		t.Fatal("no preflight section")
	}

	t.Run("the budget carries its status and its pods", func(t *testing.T) {
		var got *inventory.DisruptionBudget
		for i, b := range sec.DisruptionBudgets {
			if b.Object.Namespace == f.ns && b.Object.Name == "shop" {
				got = &sec.DisruptionBudgets[i]
			}
		}
		if got == nil {
			t.Fatalf("no budget %s/shop in %+v", f.ns, sec.DisruptionBudgets)
		}
		if want := (&inventory.BudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2}); !reflect.DeepEqual(got.Status, want) {
			t.Errorf("status %+v, want %+v", got.Status, want)
		}
		if want := []string{"shop-1-" + f.sfx, "shop-2-" + f.sfx}; !reflect.DeepEqual(got.Pods, want) || got.MinAvailable != "2" {
			t.Errorf("pods %q minAvailable %q, want %q and 2", got.Pods, got.MinAvailable, want)
		}
	})
	t.Run("a Deployment whose replicas each need a node is a placement", func(t *testing.T) {
		want := inventory.Placement{Object: inventory.ObjectRef{Kind: "Deployment", Namespace: f.ns, Name: "spread"}, Replicas: 3, Rule: "anti-affinity"}
		if !slices.Contains(sec.Placements, want) {
			t.Errorf("placements %+v lack %+v", sec.Placements, want)
		}
	})
	t.Run("the webhook's service is there with no ready endpoint", func(t *testing.T) {
		var got *inventory.Webhook
		for i, w := range sec.Webhooks {
			if w.Configuration.Name == "preflight-"+f.sfx {
				got = &sec.Webhooks[i]
			}
		}
		if got == nil || got.Service == nil {
			t.Fatalf("no webhook preflight-%s with a service in %+v", f.sfx, sec.Webhooks)
		}
		if got.FailurePolicy != "Fail" || got.Service.Namespace != f.ns || got.Service.Name != "hook" ||
			got.Service.Found == nil || !*got.Service.Found || got.Service.ReadyEndpoints == nil || *got.Service.ReadyEndpoints != 0 {
			t.Errorf("webhook %+v service %+v, want Fail calling %s/hook, found with 0 ready endpoints", got, got.Service, f.ns)
		}
	})
	t.Run("the APIService is not Available, as the aggregator says", func(t *testing.T) {
		var got *inventory.APIService
		for i, a := range sec.APIServices {
			if a.Group == group {
				got = &sec.APIServices[i]
			}
		}
		if got == nil || got.Service == nil {
			t.Fatalf("no APIService of %s with a service in %+v", group, sec.APIServices)
		}
		if got.Available != "False" || got.Reason != "ServiceNotFound" || *got.Service.Found || *got.Service.ReadyEndpoints != 0 {
			t.Errorf("APIService %+v service %+v, want Available False for ServiceNotFound, no service, 0 ready endpoints", got, got.Service)
		}
	})
	t.Run("the conversion webhook's service has only a not-ready endpoint on its port", func(t *testing.T) {
		var got *inventory.Conversion
		for i, c := range sec.Conversions {
			if c.Group == "preflight"+f.sfx+".example.com" {
				got = &sec.Conversions[i]
			}
		}
		if got == nil || got.Service == nil {
			t.Fatalf("no conversion of preflight%s.example.com in %+v", f.sfx, sec.Conversions)
		}
		if !*got.Service.Found || *got.Service.ReadyEndpoints != 0 {
			t.Errorf("conversion service %+v, want found with 0 ready endpoints", got.Service)
		}
	})
	t.Run("nodes NotReady, cordoned and under pressure are named", func(t *testing.T) {
		ns := sec.NodeState
		if ns == nil {
			t.Fatal("no node state")
		}
		if got := f.mine(ns.NotReady.Names); !reflect.DeepEqual(got, []string{"notready-" + f.sfx}) {
			t.Errorf("not ready %q", got)
		}
		if got := f.mine(ns.Cordoned.Names); !reflect.DeepEqual(got, []string{"cordoned-" + f.sfx}) {
			t.Errorf("cordoned %q", got)
		}
		var pressure []string
		for _, p := range ns.Pressure {
			if p.Condition == "MemoryPressure" {
				pressure = f.mine(p.Nodes.Names)
			}
		}
		if !reflect.DeepEqual(pressure, []string{"pressure-" + f.sfx}) {
			t.Errorf("memory pressure on %q", pressure)
		}
		for _, s := range ns.Systems {
			if s.OSImage == "Preflight Linux "+f.sfx && s.Nodes.Count != 4 {
				t.Errorf("system %+v, want the 4 nodes", s)
			}
		}
	})
}

// spreadDeployment is a Deployment of 3 replicas whose pods refuse to share a node
// (required anti-affinity on kubernetes.io/hostname against its own pods).
func (f *fixture) spreadDeployment(name string) {
	labels := map[string]any{"app": name}
	f.create(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": f.ns},
		"spec": map[string]any{
			"replicas": int64(3),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"affinity": map[string]any{"podAntiAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{
						map[string]any{"topologyKey": "kubernetes.io/hostname", "labelSelector": map[string]any{"matchLabels": labels}},
					}}},
					"containers": []any{map[string]any{"name": "c", "image": "registry.example.com/spread:1"}},
				},
			},
		},
	}})
}

// conversionWebhook is a CRD converting through service conv, whose only EndpointSlice on
// its https port holds a not-ready endpoint (and a ready one on another port).
func (f *fixture) conversionWebhook() {
	f.service("conv")
	ready, notReady := true, false
	https, metrics := "https", "metrics"
	port, metricsPort := int32(8443), int32(9090)
	for _, s := range []struct {
		name  string
		port  *string
		num   *int32
		ready *bool
	}{{"conv-https", &https, &port, &notReady}, {"conv-metrics", &metrics, &metricsPort, &ready}} {
		f.create(&discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: s.name, Namespace: f.ns, Labels: map[string]string{discoveryv1.LabelServiceName: "conv", discoveryv1.LabelManagedBy: "upgradescope-test"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.1.2.3"}, Conditions: discoveryv1.EndpointConditions{Ready: s.ready}}},
			Ports:       []discoveryv1.EndpointPort{{Name: s.port, Port: s.num}},
		})
	}
	group := "preflight" + f.sfx + ".example.com"
	schemaProps := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	f.create(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced",
			"names": map[string]any{"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"},
			"versions": []any{
				map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": schemaProps}},
				map[string]any{"name": "v1beta1", "served": true, "storage": false, "schema": map[string]any{"openAPIV3Schema": schemaProps}},
			},
			"conversion": map[string]any{"strategy": "Webhook", "webhook": map[string]any{
				"conversionReviewVersions": []any{"v1"},
				"clientConfig":             map[string]any{"service": map[string]any{"namespace": f.ns, "name": "conv", "path": "/convert"}},
			}},
		},
	}})
	_ = apiextv1.WebhookConverter // the strategy written above
}

// unavailableAPIService registers an aggregated API backed by a service that does not exist,
// waits until the aggregator has judged it, and answers its group. It is deleted when the
// test ends: an unavailable APIService makes discovery partial for every client.
func (f *fixture) unavailableAPIService() string {
	f.t.Helper()
	// Not the conversion CRD's group: the API server registers a local APIService for it.
	group := "aggregated" + f.sfx + ".example.com"
	f.create(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1." + group},
		"spec": map[string]any{
			"group": group, "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"insecureSkipTLSVerify": true,
			"service":               map[string]any{"namespace": f.ns, "name": "missing"},
		},
	}})
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		obj, err := f.dyn.Resource(gvr).Get(ctx, "v1."+group, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		return len(conditions) > 0, nil
	})
	if err != nil {
		f.t.Fatalf("the aggregator never judged v1.%s: %v", group, err)
	}
	return group
}

// An identity that may read everything the pre-flight steps read but PodDisruptionBudgets
// gets every pre-flight capability but disruption-budgets, which names the permission.
func TestAnIdentityThatCannotListBudgetsLeavesThemUnassessedNamingThePermission(t *testing.T) {
	c := adminClient(t, envServer)
	user := fmt.Sprintf("preflight-reader-%d", time.Now().UnixNano()%1e6)
	grant(t, c, user, []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods", "services", "namespaces"}, Verbs: []string{"get", "list"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"kube-proxy"}, Verbs: []string{"get"}},
		{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, ResourceNames: []string{"kube-proxy"}, Verbs: []string{"get"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list"}},
		{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"}, Verbs: []string{"list"}},
		{APIGroups: []string{"apiregistration.k8s.io"}, Resources: []string{"apiservices"}, Verbs: []string{"list"}},
	})
	cfg := rest.CopyConfig(restConfig(t, envServer, "admin"))
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	waitUntilAllowed(t, cfg)

	doc := collectAll(t, cfg, cluster.Options{})
	for _, name := range preflightCapabilities {
		got := doc.Capabilities[name]
		switch name {
		case inventory.CapDisruptionBudgets:
			want := "cannot list poddisruptionbudgets.policy at the cluster scope: forbidden; grant list on poddisruptionbudgets in group policy"
			if got.Available || got.Reason != want {
				t.Errorf("%s = %+v, want unavailable: %q", name, got, want)
			}
		case inventory.CapKubeletConfig:
		default:
			if !got.Available {
				t.Errorf("%s unavailable: %s", name, got.Reason)
			}
		}
	}
	if doc.Preflight == nil || len(doc.Preflight.DisruptionBudgets) != 0 {
		t.Errorf("preflight %+v, want a section without budgets", doc.Preflight)
	}
}

// An identity that can read nothing is refused every required pre-flight part, each naming
// what to grant.
func TestAnIdentityThatCanReadNothingIsRefusedEveryPreflightPart(t *testing.T) {
	doc := collectAll(t, restConfig(t, envServer, "viewer"), cluster.Options{})
	want := map[string]string{
		inventory.CapDisruptionBudgets: "grant list on poddisruptionbudgets in group policy",
		inventory.CapPods:              `grant list on pods in the core group ("")`,
		inventory.CapWebhooks:          "grant list on validatingwebhookconfigurations in group admissionregistration.k8s.io",
		inventory.CapAPIServices:       "grant list on apiservices in group apiregistration.k8s.io",
		inventory.CapNodeState:         `grant list on nodes in the core group ("")`,
		inventory.CapComponentFlags:    `grant list on pods in the core group ("")`,
	}
	for name, grantText := range want {
		got := doc.Capabilities[name]
		if got.Available || !strings.Contains(got.Reason, "forbidden; "+grantText) {
			t.Errorf("%s = %+v, want unavailable saying %q", name, got, grantText)
		}
	}
	// What would name a service could not be listed: the services were not read either.
	if got := doc.Capabilities[inventory.CapEndpoints]; got.Available || !strings.Contains(got.Reason, "could not be listed") {
		t.Errorf("service-endpoints = %+v, want unavailable since nothing naming a service was listed", got)
	}
}

func grant(t *testing.T, c kubernetes.Interface, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	ctx := context.Background()
	name := "preflight-test-" + user
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	_, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// waitUntilAllowed waits until RBAC's informer has seen the grant: listing nodes works.
func waitUntilAllowed(t *testing.T, cfg *rest.Config) {
	t.Helper()
	restricted := kubernetes.NewForConfigOrDie(cfg)
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := restricted.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the grant never took: %v", err)
	}
}

// controlPlaneSeen says whether a collection saw a control-plane component's pod in
// kube-system (other tests sharing the API server make some for a while).
func controlPlaneSeen(doc *inventory.Document) bool {
	for _, c := range doc.ControlPlane {
		switch c.Component {
		case "kube-apiserver", "kube-controller-manager", "kube-scheduler":
			return true
		}
	}
	return false
}

// Control-plane static pods (mirror pods in kube-system) and kube-proxy's DaemonSet and
// ConfigMap are read for their flags; a kube-system without control-plane pods is a managed
// control plane, said so and still available.
func TestComponentFlagsComeFromStaticPodsAndKubeProxy(t *testing.T) {
	f := newFixture(t)
	doc := collectAll(t, restConfig(t, envServer, "admin"), cluster.Options{})
	if c := doc.Capabilities[inventory.CapComponentFlags]; !c.Available || !controlPlaneSeen(doc) && !strings.Contains(c.Reason, "no control-plane pods in kube-system") {
		t.Errorf("component-flags without control-plane pods = %+v, want available saying there are none", c)
	}

	name := "kube-apiserver-cp-" + f.sfx
	f.create(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system",
			Labels:      map[string]string{"component": "kube-apiserver", "tier": "control-plane"},
			Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "0123456789abcdef", "kubernetes.io/config.source": "file"}},
		Spec: corev1.PodSpec{NodeName: "cp-" + f.sfx, Containers: []corev1.Container{{Name: "kube-apiserver", Image: "registry.k8s.io/kube-apiserver:v1.35.4",
			Command: []string{"kube-apiserver", "--feature-gates=PreflightTestGate" + f.sfx + "=true", "--secure-port=6443"}}}},
	})
	// kube-proxy as kubeadm runs it: flags on its DaemonSet, configuration in its ConfigMap.
	f.create(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"}, Data: map[string]string{
		"config.conf":     "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\nfeatureGates:\n  PreflightProxyGate" + f.sfx + ": false\n",
		"kubeconfig.conf": "apiVersion: v1\nkind: Config\nusers: [{name: default, user: {tokenFile: /var/run/secrets/token}}]\n",
	}})
	f.create(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "DaemonSet",
		"metadata": map[string]any{"name": "kube-proxy", "namespace": "kube-system"},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"k8s-app": "kube-proxy"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"k8s-app": "kube-proxy"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "kube-proxy", "image": "registry.k8s.io/kube-proxy:v1.35.4",
					"command": []any{"/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"}}}},
			},
		},
	}})
	doc = collectAll(t, restConfig(t, envServer, "admin"), cluster.Options{})
	proxy := map[string]*inventory.Component{}
	for i, comp := range doc.Preflight.Components {
		if comp.Component == "kube-proxy" && comp.Object.Namespace == "kube-system" && comp.Object.Name == "kube-proxy" {
			proxy[comp.Source] = &doc.Preflight.Components[i]
		}
	}
	if c := proxy["configmap"]; c == nil || c.ProxyMode != "ipvs" || !slices.Contains(c.FeatureGates, inventory.FeatureGate{Name: "PreflightProxyGate" + f.sfx, Value: false}) {
		t.Errorf("kube-proxy from its ConfigMap %+v, want mode ipvs and the test's gate off", c)
	}
	if c := proxy["daemonset"]; c == nil || !slices.ContainsFunc(c.Flags, func(fl inventory.Flag) bool { return fl.Name == "config" }) {
		t.Errorf("kube-proxy from its DaemonSet %+v, want its --config flag", c)
	}
	if strings.Contains(fmt.Sprint(doc.Preflight.Components), "tokenFile") {
		t.Error("the section holds kube-proxy's kubeconfig")
	}
	if c := doc.Capabilities[inventory.CapComponentFlags]; !c.Available || strings.Contains(c.Reason, "no control-plane pods") {
		t.Errorf("component-flags with a static pod = %+v, want available", c)
	}
	var got *inventory.Component
	for i, comp := range doc.Preflight.Components {
		if comp.Object.Name == name {
			got = &doc.Preflight.Components[i]
		}
	}
	if got == nil {
		t.Fatalf("no component from %s in %+v", name, doc.Preflight.Components)
	}
	if got.Component != "kube-apiserver" || !slices.Contains(got.FeatureGates, inventory.FeatureGate{Name: "PreflightTestGate" + f.sfx, Value: true}) {
		t.Errorf("component %+v, want kube-apiserver with the test's gate on", got)
	}
}

// With --kubelet-configz, the kubelet configuration is read through the API server's node
// proxy: here a kubelet stand-in (the API server proxies to a node's address and kubelet
// port, over TLS it does not verify without --kubelet-certificate-authority) on this
// machine's first address that is not loopback (the API server refuses to proxy to one).
func TestKubeletConfigurationIsReadThroughTheNodeProxyWhenAskedFor(t *testing.T) {
	addr := nonLoopbackAddress(t)
	f := newFixture(t)
	var asked []string
	kubelet := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = append(asked, r.URL.Path)
		if r.URL.Path != "/configz" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"kubeletconfig": map[string]any{
			"featureGates": map[string]any{"PreflightKubeletGate" + f.sfx: true}, "failCgroupV1": true,
			"staticPodPath": "/etc/kubernetes/manifests",
		}})
	}))
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	kubelet.Listener = ln
	kubelet.StartTLS()
	t.Cleanup(kubelet.Close)
	_, portText, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(portText)
	kubeletVersion := "v1.35.0-preflight" + f.sfx
	for _, name := range []string{"kubelet-a-" + f.sfx, "kubelet-b-" + f.sfx} {
		f.node(name, corev1.ConditionTrue, func(n *corev1.Node) {
			n.Status.NodeInfo.KubeletVersion = kubeletVersion
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}}
			n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
		})
	}

	doc := collectAll(t, restConfig(t, envServer, "admin"), cluster.Options{KubeletConfigz: true})
	c := doc.Capabilities[inventory.CapKubeletConfig]
	if !c.Available {
		t.Fatalf("kubelet-config = %+v, want available", c)
	}
	var got *inventory.Component
	for i, comp := range doc.Preflight.Components {
		if comp.Component == "kubelet" && slices.Contains(comp.Nodes, "kubelet-a-"+f.sfx) {
			got = &doc.Preflight.Components[i]
		}
	}
	if got == nil {
		t.Fatalf("no kubelet configuration of kubelet-a-%s in %+v (kubelet asked %q; %+v)", f.sfx, doc.Preflight.Components, asked, c)
	}
	// One node per kubelet version and OS image: kubelet-a, the first by name, alone.
	if got.Source != "kubelet-configz" || !reflect.DeepEqual(got.Nodes, []string{"kubelet-a-" + f.sfx}) ||
		!slices.Contains(got.FeatureGates, inventory.FeatureGate{Name: "PreflightKubeletGate" + f.sfx, Value: true}) ||
		got.FailCgroupV1 == nil || !*got.FailCgroupV1 {
		t.Errorf("kubelet component %+v, want from configz of kubelet-a with the test's gate and failCgroupV1", got)
	}
}

// A node whose kubelet does not answer leaves kubelet-config unavailable (optional) with the
// reason, and the collection goes on.
func TestAKubeletThatDoesNotAnswerLeavesItsConfigurationUnassessed(t *testing.T) {
	addr := nonLoopbackAddress(t)
	f := newFixture(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	_, portText, _ := net.SplitHostPort(ln.Addr().String())
	port, _ := strconv.Atoi(portText)
	ln.Close() // nothing listens there now
	f.node("silent-"+f.sfx, corev1.ConditionTrue, func(n *corev1.Node) {
		n.Status.NodeInfo.KubeletVersion = "v1.35.0-silent" + f.sfx
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}}
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	})
	doc := collectAll(t, restConfig(t, envServer, "admin"), cluster.Options{KubeletConfigz: true})
	c := doc.Capabilities[inventory.CapKubeletConfig]
	text := c.Reason + strings.Join(c.Skipped, " ")
	if c.Available && !c.Partial || !strings.Contains(text, "silent-"+f.sfx) {
		t.Errorf("kubelet-config = %+v, want unavailable or partial naming silent-%s", c, f.sfx)
	}
}

// nonLoopbackAddress is this machine's first IPv4 address that is not loopback, or the test
// is skipped.
func nonLoopbackAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() && !ip.IP.IsLinkLocalUnicast() {
			return ip.IP.String()
		}
	}
	t.Skip("no IPv4 address that is not loopback: the API server will not proxy to a node on loopback")
	return ""
}

// The agent lists pods on one collection in three: in between, the budgets' pods and the
// drain facts are the last pod pass's, as the images are, and the next pass sees the pods
// created since.
func TestBetweenPodPassesTheBudgetsPodsAndDrainFactsAreTheLastPasss(t *testing.T) {
	f := newFixture(t)
	f.pod("shop-1-"+f.sfx, map[string]string{"app": "shop"})
	f.blockingBudget("shop")
	col, err := cluster.New(restConfig(t, envServer, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	opts := cluster.Options{StepTimeout: time.Minute, PodPassEvery: 3}
	seen := func(doc *inventory.Document) (pods []string, unreplicated []string) {
		for _, b := range doc.Preflight.DisruptionBudgets {
			if b.Object.Namespace == f.ns {
				pods = b.Pods
			}
		}
		if d := doc.Preflight.Drain; d != nil {
			for _, o := range d.Unreplicated.Objects {
				if o.Namespace == f.ns {
					unreplicated = append(unreplicated, o.Name)
				}
			}
		}
		return pods, unreplicated
	}
	first := col.Collect(context.Background(), time.Now(), opts)
	want := []string{"shop-1-" + f.sfx}
	if pods, bare := seen(first); !reflect.DeepEqual(pods, want) || !reflect.DeepEqual(bare, want) {
		t.Fatalf("the pod pass sees budget pods %q and unreplicated %q, want %q", pods, bare, want)
	}
	f.pod("shop-2-"+f.sfx, map[string]string{"app": "shop"})
	for i := 2; i <= 3; i++ {
		doc := col.Collect(context.Background(), time.Now(), opts)
		if pods, bare := seen(doc); !reflect.DeepEqual(pods, want) || !reflect.DeepEqual(bare, want) {
			t.Errorf("collection %d sees budget pods %q and unreplicated %q, want the pass's %q", i, pods, bare, want)
		}
		if c := doc.Capabilities[inventory.CapPods]; !c.Available || !strings.Contains(c.Reason, "last pod pass") {
			t.Errorf("collection %d: pods = %+v, want available from the last pod pass", i, c)
		}
	}
	want = append(want, "shop-2-"+f.sfx)
	if pods, bare := seen(col.Collect(context.Background(), time.Now(), opts)); !reflect.DeepEqual(pods, want) || !reflect.DeepEqual(bare, want) {
		t.Errorf("the fourth collection is a pod pass and sees budget pods %q and unreplicated %q, want %q", pods, bare, want)
	}
}
