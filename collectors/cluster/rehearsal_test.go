package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/release/common"
	"helm.sh/helm/v4/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/rehearsal"
)

// legacyDeployment is what `kubectl apply` last sent for the Deployment "legacy": an
// extensions/v1beta1 Deployment, which 1.16 stopped serving.
const legacyDeployment = `{"apiVersion":"extensions/v1beta1","kind":"Deployment","metadata":{"name":"legacy","namespace":"%s"},` +
	`"spec":{"replicas":2,"selector":{"matchLabels":{"app":"legacy"}},"template":{"metadata":{"labels":{"app":"legacy"}},` +
	`"spec":{"containers":[{"name":"app","image":"registry.example/legacy:1"}]}}}}`

// legacyFlowSchema is what `kubectl apply` last sent for the FlowSchema named like the test's
// namespace: flowcontrol v1beta3, which 1.32 stopped serving.
const legacyFlowSchema = `{"apiVersion":"flowcontrol.apiserver.k8s.io/v1beta3","kind":"FlowSchema","metadata":{"name":"%s"},` +
	`"spec":{"priorityLevelConfiguration":{"name":"workload-low"},"matchingPrecedence":9000,` +
	`"rules":[{"subjects":[{"kind":"Group","group":{"name":"sources"}}],"resourceRules":[{"verbs":["list"],"apiGroups":[""],"resources":["pods"],"namespaces":["*"]}]}]}}`

// webManifest is a rendered release: an Ingress at extensions/v1beta1 and the ConfigMap the
// release also has live.
const webManifest = `---
# Source: web/templates/ingress.yaml
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: web
spec:
  rules:
  - host: web.example
    http:
      paths:
      - path: /
        backend:
          serviceName: web
          servicePort: 80
---
# Source: web/templates/empty.yaml
---
# Source: web/templates/flowschema.yaml
apiVersion: flowcontrol.apiserver.k8s.io/v1beta2
kind: FlowSchema
metadata:
  name: NAMESPACE-web
spec:
  priorityLevelConfiguration:
    name: workload-low
  matchingPrecedence: 9001
---
# Source: web/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: chart-cm
data:
  mode: release
`

// sourcesNamespace makes a namespace for one test and deletes what the test made in it (the
// test server runs no namespace controller).
func sourcesNamespace(t *testing.T, c kubernetes.Interface) string {
	t.Helper()
	ctx := context.Background()
	ns := fmt.Sprintf("sources-%d", time.Now().UnixNano()%1e7)
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{FieldManager: "sources-test"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		all := metav1.ListOptions{}
		_ = c.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, all)
		_ = c.CoreV1().Secrets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, all)
		_ = c.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}, all)
		_ = c.AppsV1().Deployments(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, all)
		if svcs, err := c.CoreV1().Services(ns).List(ctx, all); err == nil {
			for _, s := range svcs.Items {
				_ = c.CoreV1().Services(ns).Delete(ctx, s.Name, metav1.DeleteOptions{})
			}
		}
		deleteNamespace(c, ns)
	})
	return ns
}

// deleteNamespace deletes ns and, since no namespace controller runs to do it, finalizes it,
// so that it does not stay Terminating on the shared server.
func deleteNamespace(c kubernetes.Interface, ns string) {
	ctx := context.Background()
	_ = c.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if got, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
		got.Spec.Finalizers = nil
		_, _ = c.CoreV1().Namespaces().Finalize(ctx, got, metav1.UpdateOptions{})
	}
}

// seedSources makes, in ns, the objects of every kind of source the collection tells apart.
func seedSources(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	as := func(manager string) metav1.CreateOptions { return metav1.CreateOptions{FieldManager: manager} }
	labels := map[string]string{"app": "legacy"}
	deployment := func(name, lastApplied string) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied}},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/legacy:1"}}},
			}},
		}
	}
	yes := true
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.AppsV1().Deployments(ns).Create(ctx, deployment("legacy", fmt.Sprintf(legacyDeployment, ns)), as("kubectl-client-side-apply")))
	must(c.AppsV1().Deployments(ns).Create(ctx, deployment("modern", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"modern"}}`), as("kubectl-client-side-apply")))
	must(c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"a": "b"}}, as("sources-test")))
	must(c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "chart-cm", Annotations: map[string]string{
		"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": ns}}}, as("helm")))
	must(c.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "argo-cm", Annotations: map[string]string{
		"argocd.argoproj.io/tracking-id": "argocd_shop:/ConfigMap:" + ns + "/argo-cm"}}}, as("argocd-controller")))
	must(c.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, as("sources-test")))
	pod := func(name string, owners []metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/legacy:1"}}}}
	}
	must(c.CoreV1().Pods(ns).Create(ctx, pod("legacy-abc12", []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "legacy-abc", UID: "0c1a0000-0000-4000-8000-000000000001", Controller: &yes}}), as("kube-controller-manager-like")))
	must(c.CoreV1().Pods(ns).Create(ctx, pod("standalone", nil), as("sources-test")))
	store(t, driver.NewSecrets(c.CoreV1().Secrets(ns)), release("web", ns, 1, common.StatusDeployed, "", strings.ReplaceAll(webManifest, "NAMESPACE", ns)))
	fs := &unstructured.Unstructured{}
	if err := fs.UnmarshalJSON([]byte(fmt.Sprintf(legacyFlowSchema, ns))); err != nil {
		t.Fatal(err)
	}
	fs.SetAPIVersion("flowcontrol.apiserver.k8s.io/v1")
	fs.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": fmt.Sprintf(legacyFlowSchema, ns)})
	flowSchemas := dynamicClient(t).Resource(schema.GroupVersionResource{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"})
	must(flowSchemas.Create(ctx, fs, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"}))
	t.Cleanup(func() { _ = flowSchemas.Delete(context.Background(), ns, metav1.DeleteOptions{}) })
}

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(restConfig(t, envServer, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// mine are the objects and skips of namespace ns, by "Kind/name".
func mine(ns string, objects []rehearsal.Object, skipped []rehearsal.Skipped) (map[string]rehearsal.Object, map[string]rehearsal.Skipped) {
	objs, skips := map[string]rehearsal.Object{}, map[string]rehearsal.Skipped{}
	for _, o := range objects {
		if o.Obj.GetNamespace() == ns || o.Obj.GetName() == ns || o.Obj.GetName() == ns+"-web" {
			objs[o.Obj.GetKind()+"/"+o.Obj.GetName()] = o
		}
	}
	for _, s := range skipped {
		if s.Namespace == ns || s.Name == ns || s.Name == ns+"-web" {
			skips[s.Kind+"/"+s.Name] = s
		}
	}
	return objs, skips
}

func TestRehearsalCollectsTheClustersObjectsWithTheirSourcesAndReleases(t *testing.T) {
	c := adminClient(t, envServer)
	ns := sourcesNamespace(t, c)
	seedSources(t, c, ns)
	k := kbtest.Builtin(t)
	objects, skipped, err := collector(t, envServer, "admin").RehearsalObjects(context.Background(), cluster.RehearsalOptions{KB: k, Target: "1.35"})
	if err != nil {
		t.Fatal(err)
	}
	objs, skips := mine(ns, objects, skipped)

	t.Run("each object is collected once, with where it comes from and who wrote it", func(t *testing.T) {
		want := []struct {
			key, manager, helm, app string
			live                    bool
		}{
			{"ConfigMap/settings", "sources-test", "", "", true},
			{"ConfigMap/chart-cm", "helm", ns + "/web", "", true},
			{"ConfigMap/argo-cm", "argocd-controller", "", "argocd/shop", true},
			{"Service/web", "sources-test", "", "", true},
			{"Pod/standalone", "sources-test", "", "", true},
			{"Deployment/modern", "kubectl-client-side-apply", "", "", true},
			{"Namespace/" + ns, "sources-test", "", "", true},
		}
		for _, w := range want {
			o, ok := objs[w.key]
			if !ok {
				t.Errorf("%s not collected", w.key)
				continue
			}
			if o.FieldManager != w.manager || o.Source.HelmRelease != w.helm || o.Source.Application != w.app || o.Source.Live != w.live {
				t.Errorf("%s: manager %q source %+v; want manager %q, release %q, application %q, live %v", w.key, o.FieldManager, o.Source, w.manager, w.helm, w.app, w.live)
			}
		}
		n := 0
		for _, o := range objects {
			if o.Obj.GetNamespace() == ns && o.Obj.GetName() == "chart-cm" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("chart-cm replayed %d times, want once (live and in the release's manifest)", n)
		}
	})

	t.Run("what a controller makes again and Helm's own records are left out", func(t *testing.T) {
		for _, key := range []string{"Pod/legacy-abc12", "Secret/sh.helm.release.v1.web.v1"} {
			if _, ok := objs[key]; ok {
				t.Errorf("%s collected, want it left out", key)
			}
		}
	})

	t.Run("what the server sets is stripped", func(t *testing.T) {
		for key, o := range objs {
			for _, f := range [][]string{{"status"}, {"metadata", "managedFields"}, {"metadata", "resourceVersion"}, {"metadata", "uid"}, {"metadata", "creationTimestamp"}, {"metadata", "generation"}} {
				if _, found, _ := unstructured.NestedFieldNoCopy(o.Obj.Object, f...); found {
					t.Errorf("%s keeps %s", key, strings.Join(f, "."))
				}
			}
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(objs["Service/web"].Obj.Object, "spec", "clusterIP"); found {
			t.Error("Service/web keeps this cluster's clusterIP")
		}
	})

	t.Run("every object collected is one the 1.35 server's dry-run apply accepts", func(t *testing.T) {
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Discovery()))
		dyn := dynamicClient(t)
		for key, o := range objs {
			m, err := mapper.RESTMapping(o.Obj.GroupVersionKind().GroupKind(), o.Obj.GroupVersionKind().Version)
			if err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			body, err := o.Obj.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			force := true
			_, err = dyn.Resource(m.Resource).Namespace(o.Obj.GetNamespace()).Patch(context.Background(), o.Obj.GetName(), types.ApplyPatchType, body,
				metav1.PatchOptions{FieldManager: "upgradescope-rehearsal", Force: &force, DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Errorf("%s refused: %v", key, err)
			}
		}
	})

	t.Run("a last-applied configuration at an API 1.35 does not serve is replayed converted", func(t *testing.T) {
		expectConverted(t, k, fmt.Sprintf(legacyDeployment, ns), objs["Deployment/legacy"], skips["Deployment/legacy"])
		if o, ok := objs["Deployment/legacy"]; ok && o.FieldManager != "kubectl-client-side-apply" {
			t.Errorf("Deployment/legacy applied as %q, want kubectl-client-side-apply", o.FieldManager)
		}
		if o := objs["Deployment/modern"]; o.OriginalAPIVersion != "" || o.Obj.GetAPIVersion() != "apps/v1" {
			t.Errorf("Deployment/modern = %s from %q, want the listed apps/v1 object", o.Obj.GetAPIVersion(), o.OriginalAPIVersion)
		}
	})

	t.Run("a last-applied FlowSchema at v1beta3 is replayed converted to v1, as its applier", func(t *testing.T) {
		o, ok := objs["FlowSchema/"+ns]
		if !ok {
			t.Fatalf("not collected; skip %+v", skips["FlowSchema/"+ns])
		}
		if o.OriginalAPIVersion != "flowcontrol.apiserver.k8s.io/v1beta3" || o.Obj.GetAPIVersion() != "flowcontrol.apiserver.k8s.io/v1" || o.FieldManager != "kubectl-client-side-apply" {
			t.Errorf("replayed %s from %q as %q, want v1 from v1beta3 as kubectl-client-side-apply", o.Obj.GetAPIVersion(), o.OriginalAPIVersion, o.FieldManager)
		}
		if p, _, _ := unstructured.NestedInt64(o.Obj.Object, "spec", "matchingPrecedence"); p != 9000 {
			t.Errorf("matchingPrecedence %d, want the applied 9000", p)
		}
	})

	t.Run("a release manifest's cluster-scoped FlowSchema at v1beta2 is replayed converted, in no namespace", func(t *testing.T) {
		o, ok := objs["FlowSchema/"+ns+"-web"]
		if !ok {
			t.Fatalf("not collected; skip %+v", skips["FlowSchema/"+ns+"-web"])
		}
		if o.OriginalAPIVersion != "flowcontrol.apiserver.k8s.io/v1beta2" || o.Obj.GetAPIVersion() != "flowcontrol.apiserver.k8s.io/v1" || o.Obj.GetNamespace() != "" || o.Source.HelmRelease != ns+"/web" || o.FieldManager != "helm" {
			t.Errorf("replayed %s from %q in %q, source %+v as %q", o.Obj.GetAPIVersion(), o.OriginalAPIVersion, o.Obj.GetNamespace(), o.Source, o.FieldManager)
		}
	})

	t.Run("a release manifest's Ingress at extensions/v1beta1 is replayed converted, as the release", func(t *testing.T) {
		doc := strings.Split(webManifest, "---\n")[1]
		o := objs["Ingress/web"]
		expectConverted(t, k, doc, o, skips["Ingress/web"])
		if o.Obj != nil && (o.Source.HelmRelease != ns+"/web" || o.Source.Live || o.FieldManager != "helm" || o.Obj.GetNamespace() != ns) {
			t.Errorf("Ingress/web: source %+v manager %q namespace %q; want release %s/web as helm in %s", o.Source, o.FieldManager, o.Obj.GetNamespace(), ns, ns)
		}
	})
}

// expectConverted checks that an object written at a version 1.35 does not serve is replayed
// as package convert converts it.
func expectConverted(t *testing.T, k *kb.KB, written string, got rehearsal.Object, skip rehearsal.Skipped) {
	t.Helper()
	var node yaml.Node
	if err := yaml.Unmarshal([]byte(written), &node); err != nil {
		t.Fatal(err)
	}
	want := convert.Object(k, node.Content[0], "1.35")
	if got.Obj == nil || want.Object == nil {
		t.Fatalf("not collected (skip %+v); convert says %v", skip, want.Manual)
	}
	wantObj, err := yaml.Marshal(want.Object)
	if err != nil {
		t.Fatal(err)
	}
	var wantMap map[string]any
	if err := yaml.Unmarshal(wantObj, &wantMap); err != nil {
		t.Fatal(err)
	}
	if got.OriginalAPIVersion != want.From.APIVersion() || got.Obj.GetAPIVersion() != want.To.APIVersion() {
		t.Errorf("replayed %s from %q, want %s from %s", got.Obj.GetAPIVersion(), got.OriginalAPIVersion, want.To.APIVersion(), want.From.APIVersion())
	}
	gotSpec, _, _ := unstructured.NestedFieldNoCopy(got.Obj.Object, "spec")
	if g, w := fmt.Sprint(gotSpec), fmt.Sprint(wantMap["spec"]); g != w {
		t.Errorf("spec\n got %s\nwant %s (convert's)", g, w)
	}
}

func TestRehearsalSkipsWhatIsPastItsBoundsAsBound(t *testing.T) {
	c := adminClient(t, envServer)
	ns := sourcesNamespace(t, c)
	seedSources(t, c, ns)
	opts := map[string]cluster.RehearsalOptions{
		"one object":  {MaxObjects: 1},
		"a few bytes": {MaxBytes: 64},
	}
	for name, o := range opts {
		t.Run(name, func(t *testing.T) {
			o.KB, o.Target = kbtest.Builtin(t), "1.35"
			objects, skipped, err := collector(t, envServer, "admin").RehearsalObjects(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if o.MaxObjects == 1 && len(objects) != 1 || o.MaxBytes == 64 && len(objects) != 0 {
				t.Fatalf("%d objects kept", len(objects))
			}
			objs, _ := mine(ns, objects, skipped)
			if len(objs) > 1 {
				t.Errorf("%d of the test's objects kept past the bound", len(objs))
			}
			bound := 0
			for _, s := range skipped {
				if s.Reason == cluster.SkipBound {
					bound++
				}
			}
			// One per object on the page that met the bound, one per resource not listed, one
			// per release manifest object.
			if bound < 3 {
				t.Errorf("%d skips for the bound, want the rest of the objects and resources skipped: %+v", bound, skipped)
			}
		})
	}
}

func TestRehearsalForAnIdentityThatMayListNothingSkipsEachResourceOnceAsForbidden(t *testing.T) {
	objects, skipped, err := collector(t, envServer, "viewer").RehearsalObjects(context.Background(), cluster.RehearsalOptions{KB: kbtest.Builtin(t), Target: "1.35"})
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) != 0 {
		t.Errorf("%d objects collected by an identity with no RBAC", len(objects))
	}
	seen := map[string]bool{}
	for _, s := range skipped {
		key := s.APIVersion + " " + s.Kind
		if s.Reason != cluster.SkipForbidden || s.Name != "" || seen[key] || !strings.Contains(s.Message, "forbidden; grant list on") {
			t.Errorf("skip %+v: want one forbidden skip per resource naming the grant", s)
		}
		seen[key] = true
	}
	for _, want := range []string{"v1 Secret", "v1 ConfigMap", "apps/v1 Deployment"} {
		if !seen[want] {
			t.Errorf("no forbidden skip for %s", want)
		}
	}
}

// The collection keeps owner references: the rehearsal server checks their shape, not that the
// owner exists, so an object whose (non-controller) owner is not replayed is still accepted.
func TestRehearsalKeepsOwnerReferencesTheServerAcceptsWithoutTheirOwner(t *testing.T) {
	c := adminClient(t, envServer)
	ns := sourcesNamespace(t, c)
	dyn := dynamicClient(t)
	for _, block := range []bool{false, true} {
		cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "owned", "namespace": ns,
			"ownerReferences": []any{map[string]any{"apiVersion": "example.com/v1", "kind": "Owner", "name": "gone", "uid": "0c1a0000-0000-4000-8000-00000000dead", "blockOwnerDeletion": block}}}}
		body, _ := json.Marshal(cm)
		_, err := dyn.Resource(corev1.SchemeGroupVersion.WithResource("configmaps")).Namespace(ns).Patch(context.Background(), "owned", types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "upgradescope-rehearsal", DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Errorf("blockOwnerDeletion %v: dry-run apply refused: %v", block, err)
		}
	}
}
