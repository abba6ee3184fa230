package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/inventory"
)

func collector(t *testing.T, env, context string) *cluster.Collector {
	t.Helper()
	col, err := cluster.New(restConfig(t, env, context))
	if err != nil {
		t.Fatal(err)
	}
	return col
}

func TestNamespacesCarryTheirTeam(t *testing.T) {
	c := adminClient(t, envServer)
	name := fmt.Sprintf("team-ns-%d", time.Now().UnixNano()%1e6)
	_, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"owner": "payments"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	var doc inventory.Document
	if err := collector(t, envServer, "admin").Namespaces(context.Background(), &doc, "owner"); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ns := range doc.Namespaces {
		found = found || ns.Name == name && ns.Team == "payments"
	}
	if !found {
		t.Errorf("namespaces %+v lack %s owned by payments", doc.Namespaces, name)
	}
}

func TestAddonsRecordPodImagesLabelsAndIngressClasses(t *testing.T) {
	c := adminClient(t, envServer)
	ctx := context.Background()
	sfx := fmt.Sprint(time.Now().UnixNano() % 1e6)
	image := "registry.k8s.io/ingress-nginx/controller:v1.9." + sfx
	for i, ns := range []string{"default", "kube-public"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("nginx-%d-%s", i, sfx), Namespace: ns, Labels: map[string]string{"app.kubernetes.io/name": "ingress-nginx"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "controller", Image: image}}},
		}
		if _, err := c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			zero := int64(0)
			_ = c.CoreV1().Pods(p.Namespace).Delete(context.Background(), p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		})
	}
	ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx-" + sfx}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}
	if _, err := c.NetworkingV1().IngressClasses().Create(ctx, ic, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.NetworkingV1().IngressClasses().Delete(context.Background(), ic.Name, metav1.DeleteOptions{})
	})

	var doc inventory.Document
	watch := inventory.ImageWatch{Segments: map[string]bool{"ingress-nginx": true}, Names: map[string]bool{}}
	if capability := collector(t, envServer, "admin").Addons(ctx, &doc, watch); !capability.Available || capability.Partial {
		t.Fatalf("addons = %+v", capability)
	}
	var got *inventory.ImageVersion
	for _, w := range doc.WorkloadImages {
		for i, v := range w.Versions {
			if w.Reference(v) == image {
				got = &w.Versions[i]
			}
		}
	}
	if got == nil || strings.Join(got.Namespaces, ",") != "default,kube-public" || len(got.LabelSets) != 1 || got.LabelSets[0]["app.kubernetes.io/name"] != "ingress-nginx" || len(got.Objects) != 0 {
		t.Errorf("image evidence = %+v, want its namespaces and its one label set, no pods named", got)
	}
	found := false
	for _, c := range doc.IngressClasses {
		found = found || c.Name == ic.Name && c.Controller == "k8s.io/ingress-nginx"
	}
	if !found {
		t.Errorf("ingress classes %+v lack %s", doc.IngressClasses, ic.Name)
	}
}

func TestCRDsRecordVersionsAndCustomResourcesWrittenThroughDeprecatedOnes(t *testing.T) {
	cfg := restConfig(t, envServer, "admin")
	ext, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sfx := fmt.Sprint(time.Now().UnixNano() % 1e6)
	group := "widgets" + sfx + ".example.com"
	warning := "v1beta1 Widget is deprecated; use v1"
	schemaProps := &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
		Type:       "object",
		Properties: map[string]apiextv1.JSONSchemaProps{"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}}}},
	}}
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true, Schema: schemaProps},
				{Name: "v1beta1", Served: true, Deprecated: true, DeprecationWarning: &warning, Schema: schemaProps},
				{Name: "v1alpha1", Served: false, Schema: schemaProps},
			},
		},
	}
	if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
	})
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1beta1", Resource: "widgets"}
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1beta1", "kind": "Widget", "metadata": map[string]any{"name": "old", "namespace": "default"}, "spec": map[string]any{"size": int64(3)}}}
	// The CRD takes a moment to be served.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(gvr).Namespace("default").Create(ctx, w, metav1.CreateOptions{FieldManager: "widget-operator"})
		return err == nil, nil
	})
	if err != nil {
		t.Fatal("custom resource never created:", err)
	}

	var doc inventory.Document
	if capability := collector(t, envServer, "admin").CRDs(ctx, &doc); !capability.Available || capability.Partial {
		t.Fatalf("crds = %+v", capability)
	}
	var got *inventory.CRD
	for i := range doc.CRDs {
		if doc.CRDs[i].Group == group {
			got = &doc.CRDs[i]
		}
	}
	if got == nil || len(got.Versions) != 3 || !got.Versions[1].Deprecated || got.Versions[1].DeprecationWarning != warning || got.Versions[2].Served {
		t.Fatalf("crd = %+v", got)
	}
	if len(got.Usage) != 1 || got.Usage[0].Version != "v1beta1" || got.Usage[0].Objects[0].Name != "old" {
		t.Errorf("usage = %+v, want the widget written through v1beta1", got.Usage)
	}
}

func TestDeprecatedCallsComeFromTheMetricAndForbiddenIsAReason(t *testing.T) {
	c := adminClient(t, envServer)
	// A request at a deprecated version, so the metric has a row.
	if _, err := c.StorageV1beta1().VolumeAttributesClasses().List(context.Background(), metav1.ListOptions{Limit: 1}); err != nil {
		t.Fatal(err)
	}
	var doc inventory.Document
	if capability := collector(t, envServer, "admin").DeprecatedCalls(context.Background(), &doc); !capability.Available {
		t.Fatalf("deprecated-calls = %+v", capability)
	}
	found := false
	for _, call := range doc.DeprecatedCalls {
		found = found || call == inventory.DeprecatedCall{Group: "storage.k8s.io", Version: "v1beta1", Resource: "volumeattributesclasses", RemovedRelease: "1.37"}
	}
	if !found {
		t.Errorf("calls %+v lack storage.k8s.io/v1beta1 volumeattributesclasses", doc.DeprecatedCalls)
	}
	var viewer inventory.Document
	capability := collector(t, envServer, "viewer").DeprecatedCalls(context.Background(), &viewer)
	if capability.Available || !strings.Contains(capability.Reason, "forbidden") {
		t.Errorf("viewer deprecated-calls = %+v, want unavailable with a forbidden reason", capability)
	}
}

func TestEveryStepForAUserWhoCanReadNothingSaysForbidden(t *testing.T) {
	col := collector(t, envServer, "viewer")
	ctx := context.Background()
	var doc inventory.Document
	if err := col.Namespaces(ctx, &doc, "team"); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("namespaces: %v, want forbidden", err)
	}
	for name, step := range map[string]func() inventory.Capability{
		"addons": func() inventory.Capability { return col.Addons(ctx, &doc, inventory.ImageWatch{}) },
		"crds":   func() inventory.Capability { return col.CRDs(ctx, &doc) },
	} {
		if c := step(); c.Available || !strings.Contains(c.Reason, "forbidden") {
			t.Errorf("%s = %+v, want unavailable and forbidden", name, c)
		}
	}
}

func TestTheScansOwnListsAtDeprecatedVersionsAreLeftOutOfTheCalls(t *testing.T) {
	col := collector(t, envServer, "admin")
	ctx := context.Background()
	var doc inventory.Document
	// Every served version of LeaseCandidate is flagged: the scan has to list one of them.
	flagged := []cluster.FlaggedKind{
		{Group: "coordination.k8s.io", Version: "v1alpha2", Kind: "LeaseCandidate", Removed: "1.38"},
		{Group: "coordination.k8s.io", Version: "v1beta1", Kind: "LeaseCandidate", Removed: "1.39"},
	}
	if c := col.APIUsage(ctx, &doc, flagged); !c.Available || c.Partial {
		t.Fatalf("api-usage = %+v", c)
	}
	capability := col.DeprecatedCalls(ctx, &doc)
	if !capability.Partial || !strings.Contains(strings.Join(capability.Skipped, " "), "leasecandidates (listed by this scan)") {
		t.Errorf("deprecated-calls = %+v, want the scan's own leasecandidates rows left out", capability)
	}
	for _, call := range doc.DeprecatedCalls {
		if call.Resource == "leasecandidates" && call.Subresource == "" {
			t.Errorf("call %+v kept", call)
		}
	}
}
