package gitops_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// The second test server (emulating 1.32) gets a HelmRelease CRD of the project's own that
// serves only the older versions current Flux no longer ships, v2beta2 and v2beta1; the first
// server has upstream's, serving v2. The Reader must list the newest each serves.
func TestHelmReleasesAreReadAtTheNewestServedVersion(t *testing.T) {
	cfg := kubetest.Config(t, kubetest.EnvEmulated, "admin")
	dyn := dynamic.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	oldFlux, _ := json.Marshal(minimalCRD("helm.toolkit.fluxcd.io", "HelmRelease", "helmreleases", []string{"v2beta2", "v2beta1"}))
	applyCRD(t, dyn, oldFlux)
	ctx := context.Background()
	_, _ = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gitops-old"}}, metav1.CreateOptions{})
	createObject(t, dyn, `{apiVersion: helm.toolkit.fluxcd.io/v2beta1, kind: HelmRelease, metadata: {name: old, namespace: gitops-old}, spec: {chart: {spec: {chart: ingress-nginx, version: 4.0.1, sourceRef: {kind: HelmRepository, name: r}}}}}`)

	for _, server := range []struct {
		name      string
		cfg       *rest.Config
		want      string
		wantChart string
	}{
		{"a server serving v2beta2 and v2beta1", cfg, "/apis/helm.toolkit.fluxcd.io/v2beta2/helmreleases", "old"},
		{"a server serving upstream v2", restConfig(t, "admin"), "/apis/helm.toolkit.fluxcd.io/v2/helmreleases", "from-repo"},
	} {
		t.Run(server.name, func(t *testing.T) {
			if server.want == "/apis/helm.toolkit.fluxcd.io/v2/helmreleases" {
				setUpScenario(t)
			}
			c := rest.CopyConfig(server.cfg)
			log := &requestLog{}
			c.Wrap(log.wrap)
			k := kubernetes.NewForConfigOrDie(c)
			res := gitops.NewReader(dynamic.NewForConfigOrDie(c), k.Discovery(), metadata.NewForConfigOrDie(c)).Read(ctx)
			var listed []string
			for _, l := range log.take() {
				if strings.Contains(l, "helmreleases") {
					listed = append(listed, l)
				}
			}
			if len(listed) != 1 || listed[0] != "GET "+server.want {
				t.Errorf("HelmRelease requests = %q, want one GET %s", listed, server.want)
			}
			found := false
			for _, c := range res.Charts {
				found = found || c.Name == server.wantChart
			}
			if !found {
				t.Errorf("HelmRelease %s not read: charts %+v, gaps %q", server.wantChart, res.Charts, res.Gaps)
			}
		})
	}
}

// An Argo CD running in another cluster shows only by the tracking metadata it leaves on
// workloads; the second test server serves no Argo CD CRD.
func TestArgoCDInAnotherClusterShowsByItsTrackingAnnotation(t *testing.T) {
	cfg := kubetest.Config(t, kubetest.EnvEmulated, "admin")
	kube := kubernetes.NewForConfigOrDie(cfg)
	reader := func() gitops.Result {
		return gitops.NewReader(dynamic.NewForConfigOrDie(cfg), kube.Discovery(), metadata.NewForConfigOrDie(cfg)).Read(context.Background())
	}
	ctx := context.Background()
	_ = kube.AppsV1().Deployments("default").Delete(ctx, "tracked", metav1.DeleteOptions{})
	if res := reader(); res.ArgoCD {
		t.Fatal("Argo CD reported present before any workload carries its tracking annotation")
	}
	labels := map[string]string{"app": "tracked"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "tracked", Namespace: "default",
			Annotations: map[string]string{"argocd.argoproj.io/tracking-id": "web:apps/Deployment:default/tracked"}},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/web:1"}}}},
		},
	}
	if _, err := kube.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.AppsV1().Deployments("default").Delete(ctx, "tracked", metav1.DeleteOptions{}) })
	if res := reader(); !res.ArgoCD {
		t.Error("Argo CD not reported present with a Deployment carrying argocd.argoproj.io/tracking-id")
	}
}
