package gitops_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/collectors/gitops"
)

const (
	scaleApps, scaleReleases, scaleOCI = 1000, 1000, 500
	scaleArgoNS, scaleFluxNS           = "gitops-scale-argo", "gitops-scale-flux"
)

// BenchmarkGitOpsScale reads 1,000 Applications and 1,000 HelmReleases, half of them pointing
// to 500 OCIRepositories, and reports the API requests one read makes. It fails unless that
// is exactly the list pages plus discovery: no request per object.
//
//	make bench-gitops
func BenchmarkGitOpsScale(b *testing.B) {
	cfg := restConfig(b, "admin")
	dyn := dynamic.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	installCRDs(b, dyn)
	populateScale(b, dyn, kube)
	b.Cleanup(func() { removeScale(dyn) })
	want := 1 + pages(countAll(b, dyn, applicationsGVR, "")) + pages(countAll(b, dyn, helmReleases, "")) + ociPages(b, dyn)

	var res gitops.Result
	var requests int
	for b.Loop() {
		reader := gitops.NewReader(dyn, kube.Discovery(), metadata.NewForConfigOrDie(cfg))
		res = reader.Read(context.Background())
		requests = reader.Requests
	}
	if requests != want {
		b.Fatalf("one read made %d requests, want %d (discovery plus list pages)", requests, want)
	}
	if len(res.Charts) < scaleApps+scaleReleases {
		b.Fatalf("read %d charts, want at least %d; gaps %q", len(res.Charts), scaleApps+scaleReleases, res.Gaps)
	}
	b.ReportMetric(float64(requests), "requests/op")
	b.ReportMetric(float64(len(res.Charts)), "charts/op")
}

var applicationsGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
var ociGVR = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "ocirepositories"}

func pages(n int) int { return max(1, (n+gitops.PageSize-1)/gitops.PageSize) }

func countAll(b *testing.B, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string) int {
	list, err := dyn.Resource(gvr).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return len(list.Items)
}

// ociPages: chartRefs into one namespace list it; into several, the whole cluster.
func ociPages(b *testing.B, dyn dynamic.Interface) int {
	list, err := dyn.Resource(helmReleases).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	namespaces := map[string]bool{}
	for _, hr := range list.Items {
		ref, ok, _ := unstructured.NestedStringMap(hr.Object, "spec", "chartRef")
		if !ok || ref["kind"] != "OCIRepository" {
			continue
		}
		if _, kc := hr.Object["spec"].(map[string]any)["kubeConfig"]; kc {
			continue
		}
		ns := ref["namespace"]
		if ns == "" {
			ns = hr.GetNamespace()
		}
		namespaces[ns] = true
	}
	if len(namespaces) == 1 {
		for ns := range namespaces {
			return pages(countAll(b, dyn, ociGVR, ns))
		}
	}
	return pages(countAll(b, dyn, ociGVR, ""))
}

func populateScale(b *testing.B, dyn dynamic.Interface, kube kubernetes.Interface) {
	ctx := context.Background()
	for _, ns := range []string{scaleArgoNS, scaleFluxNS} {
		_, _ = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	}
	var objects []*unstructured.Unstructured
	for i := range scaleApps {
		objects = append(objects, yamlObject(b, fmt.Sprintf(`{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: app-%d, namespace: %s}, spec: {project: default, destination: {server: "https://kubernetes.default.svc", namespace: team-%d}, source: {repoURL: "https://charts.example.com", chart: chart-%d, targetRevision: 1.%d.0}}}`, i, scaleArgoNS, i%50, i%40, i)))
	}
	for i := range scaleOCI {
		objects = append(objects, yamlObject(b, fmt.Sprintf(`{apiVersion: source.toolkit.fluxcd.io/v1, kind: OCIRepository, metadata: {name: oci-%d, namespace: %s}, spec: {interval: 10m, url: "oci://ghcr.io/acme/charts/oci-chart-%d", ref: {tag: 1.0.%d}}}`, i, scaleFluxNS, i, i)))
	}
	for i := range scaleReleases {
		spec := fmt.Sprintf(`{interval: 10m, chart: {spec: {chart: flux-chart-%d, version: 2.%d.0, sourceRef: {kind: HelmRepository, name: r}}}}`, i, i)
		if i%2 == 0 {
			spec = fmt.Sprintf(`{interval: 10m, chartRef: {kind: OCIRepository, name: oci-%d}}`, i/2)
		}
		objects = append(objects, yamlObject(b, fmt.Sprintf(`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: hr-%d, namespace: %s}, spec: %s}`, i, scaleFluxNS, spec)))
	}
	work := make(chan *unstructured.Unstructured)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 8 {
		wg.Go(func() {
			for u := range work {
				gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
				gvr := gv.WithResource(map[string]string{"Application": "applications", "HelmRelease": "helmreleases", "OCIRepository": "ocirepositories"}[u.GetKind()])
				_, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
				if err != nil && !isAlreadyExists(err) {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		})
	}
	for _, u := range objects {
		work <- u
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

func yamlObject(b *testing.B, doc string) *unstructured.Unstructured {
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		b.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// removeScale deletes the benchmark's objects: a test server has no namespace controller, so
// deleting the namespaces would leave them behind for the next test.
func removeScale(dyn dynamic.Interface) {
	ctx := context.Background()
	for _, at := range []struct {
		gvr schema.GroupVersionResource
		ns  string
	}{{applicationsGVR, scaleArgoNS}, {helmReleases, scaleFluxNS}, {ociGVR, scaleFluxNS}} {
		_ = dyn.Resource(at.gvr).Namespace(at.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}
}
