package gitops_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

func restConfig(t testing.TB, context string) *rest.Config {
	t.Helper()
	return kubetest.Config(t, kubetest.EnvServer, context)
}

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
		raw, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			t.Logf("%s not found (%v): installing a minimal CRD", c.file, err)
			raw, _ = json.Marshal(minimalCRD(c.group, c.kind, c.plural, c.versions))
		}
		applyCRD(t, dyn, raw)
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

func applyCRD(t testing.TB, dyn dynamic.Interface, manifest []byte) {
	t.Helper()
	if err := crd.ApplyDefinition(context.Background(), dyn, manifest, "upgradescope-test"); err != nil {
		t.Fatal(err)
	}
}
