package gitops_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// restConfig loads a context of the kubeconfig hack/with-kube.sh exports. In CI a missing
// server is a failure, never a skip.
func restConfig(t testing.TB, context string) *rest.Config {
	t.Helper()
	path := os.Getenv("UPGRADESCOPE_KUBECONFIG")
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("UPGRADESCOPE_KUBECONFIG is not set: .ci/run starts the API servers before the tests")
		}
		t.Skip("UPGRADESCOPE_KUBECONFIG is not set: run `make kube-up` and export `hack/kube-env.sh env`")
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: path},
		&clientcmd.ConfigOverrides{CurrentContext: context},
	).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400 // client-go's 5/s would make set-up take seconds
	return cfg
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// upstreamCRDs are Argo CD's and Flux's own CRDs, read from ../shared/kube/crds beside the
// checkout (CI has it); a user's clone falls back to minimal CRDs with the same names and
// served versions.
var upstreamCRDs = []struct {
	file                string
	group, kind, plural string
	versions            []string
}{
	{"argocd/application-crd.yaml", "argoproj.io", "Application", "applications", []string{"v1alpha1"}},
	{"flux/helm.toolkit.fluxcd.io_helmreleases.yaml", "helm.toolkit.fluxcd.io", "HelmRelease", "helmreleases", []string{"v2"}},
	{"flux/source.toolkit.fluxcd.io_ocirepositories.yaml", "source.toolkit.fluxcd.io", "OCIRepository", "ocirepositories", []string{"v1"}},
}

// crdsInstalled: the CRDs are applied once per test binary; they are large.
var crdsInstalled bool

func installCRDs(t testing.TB, dyn dynamic.Interface) {
	t.Helper()
	if crdsInstalled {
		return
	}
	defer func() { crdsInstalled = !t.Failed() }()
	dir := filepath.Join("..", "..", "..", "shared", "kube", "crds")
	for _, c := range upstreamCRDs {
		obj := minimalCRD(c.group, c.kind, c.plural, c.versions)
		if raw, err := os.ReadFile(filepath.Join(dir, c.file)); err == nil {
			obj = map[string]any{}
			if err := yaml.Unmarshal(raw, &obj); err != nil {
				t.Fatalf("decode %s: %v", c.file, err)
			}
		} else {
			t.Logf("%s not found (%v): installing a minimal CRD", c.file, err)
		}
		applyCRD(t, dyn, &unstructured.Unstructured{Object: obj})
	}
}

func minimalCRD(group, kind, plural string, versions []string) map[string]any {
	var vs []any
	for i, v := range versions {
		vs = append(vs, map[string]any{
			"name": v, "served": true, "storage": i == 0,
			"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			"subresources": map[string]any{"status": map[string]any{}},
		})
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + "." + group},
		"spec": map[string]any{
			"group": group, "scope": "Namespaced", "versions": vs,
			"names": map[string]any{"kind": kind, "plural": plural, "singular": "", "listKind": kind + "List"},
		},
	}
}

func applyCRD(t testing.TB, dyn dynamic.Interface, crd *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	data, err := crd.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	force := true
	if _, err := dyn.Resource(crdResource).Patch(ctx, crd.GetName(), types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: "upgradescope-test", Force: &force}); err != nil {
		t.Fatalf("apply CRD %s: %v", crd.GetName(), err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := dyn.Resource(crdResource).Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("CRD %s never established: %v", crd.GetName(), err)
	}
}
