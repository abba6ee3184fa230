package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// ingressRelease is a rendered release whose Ingress is at extensions/v1beta1.
const ingressRelease = `---
# Source: web/templates/ingress.yaml
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: web
spec:
  backend:
    serviceName: web
    servicePort: 80
`

func TestRehearsalReadsTheObjectsOfTheCurrentContextsClusterAndItsHelmReleases(t *testing.T) {
	path := kubetest.Kubeconfig(t, kubetest.EnvServer)
	c, err := kubernetes.NewForConfig(kubetest.Config(t, kubetest.EnvServer, "admin"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := fmt.Sprintf("sources-cli-%d", time.Now().UnixNano()%1e6)
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.CoreV1().Secrets(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "owner=helm"})
		_ = c.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		// No namespace controller runs on the test server: finalize it, or it stays Terminating.
		if got, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
			got.Spec.Finalizers = nil
			_, _ = c.CoreV1().Namespaces().Finalize(ctx, got, metav1.UpdateOptions{})
		}
	})
	rel := &releasev1.Release{Name: "web", Namespace: ns, Version: 1, Info: &releasev1.Info{Status: common.StatusDeployed},
		Chart: &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "web", Version: "1.0.0"}}, Manifest: ingressRelease}
	if err := driver.NewSecrets(c.CoreV1().Secrets(ns)).Create("sh.helm.release.v1.web.v1", rel); err != nil {
		t.Fatal(err)
	}
	k := kbtest.Builtin(t)

	lf := &liveFlags{kubeconfig: path, context: "admin", requestTimeout: cluster.DefaultRequestTimeout, timeout: time.Minute}
	objs, skipped, err := lf.collectRehearsal(ctx, rehearseLiveFlags{maxObjects: cluster.DefaultRehearsalMaxObjects}, k, "1.35")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range objs {
		found = found || o.Obj.GetNamespace() == ns && o.Obj.GetName() == "web" && o.Source.HelmRelease == ns+"/web" && o.OriginalAPIVersion == "extensions/v1beta1"
	}
	if !found {
		t.Errorf("the release's Ingress is not replayed converted, as the release: %d objects, skips %+v", len(objs), skipped)
	}
	if _, _, err := lf.collectRehearsal(ctx, rehearseLiveFlags{}, k, "1.35"); err == nil {
		t.Error("--rehearse-max-objects 0 accepted")
	}
}
