package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/inventory"
)

// repoPassword is a chart repository's password, which a GitOps Secret holds: it must never
// leave the process.
const repoPassword = "r3po-pa55-7c1e9b"

// TestScanReadsPrivateGitOpsRepositoriesWithTheSecretsTheyName: a Flux HelmRepository's
// secretRef and an Argo CD repo-creds template let the advisor read repositories that want
// basic auth; without the Secret the advice says which Secret it could not read.
func TestScanReadsPrivateGitOpsRepositoriesWithTheSecretsTheyName(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	cfg := kubetest.Config(t, kubetest.EnvServer, "admin")
	dyn := dynamic.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	installGitOpsCRDs(t, dyn)
	fluxRepo := charttest.ServeIndex(t, demoVersions()...)
	fluxRepo.User, fluxRepo.Password = "flux", repoPassword
	argoRepo := charttest.ServeIndex(t, demoVersions()...)
	argoRepo.User, argoRepo.Password = "argo", repoPassword

	ns := fmt.Sprintf("creds-%d", time.Now().UnixNano()%1_000_000)
	ctx := context.Background()
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	secret := func(name string, labels map[string]string, data map[string]string) {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, StringData: data}
		if _, err := kube.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	secret("flux-auth", nil, map[string]string{"username": "flux", "password": repoPassword})
	// A template for every repository on the Argo repository's host, as Argo CD matches them.
	secret("argo-creds", map[string]string{"argocd.argoproj.io/secret-type": "repo-creds"},
		map[string]string{"url": strings.TrimSuffix(argoRepo.URL, "/"), "type": "helm", "username": "argo", "password": repoPassword})
	for _, doc := range []string{
		`{apiVersion: source.toolkit.fluxcd.io/v1, kind: HelmRepository, metadata: {name: private, namespace: NS}, spec: {interval: 10m, url: "FLUX", secretRef: {name: flux-auth}}}`,
		`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: web, namespace: NS}, spec: {interval: 10m, chart: {spec: {chart: demo, version: 1.0.0, sourceRef: {kind: HelmRepository, name: private}}}}}`,
		`{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: shop, namespace: NS}, spec: {project: default, destination: {server: "https://kubernetes.default.svc", namespace: shop}, source: {repoURL: "ARGO", chart: demo, targetRevision: 1.0.0}}}`,
	} {
		doc = strings.NewReplacer("NS", ns, "FLUX", fluxRepo.URL, "ARGO", argoRepo.URL).Replace(doc)
		createLive(t, dyn, doc)
	}

	dir := t.TempDir()
	// Helm's configuration names no repository: what is read is read with the Secrets.
	if err := os.WriteFile(filepath.Join(dir, "repositories.yaml"), []byte("apiVersion: v1\nrepositories: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := func(cache string) []string {
		return []string{"--kubeconfig", kubeconfig, "--context", "admin", "--target", "1.36", "--advise-charts",
			"--helm-repository-config", filepath.Join(dir, "repositories.yaml"), "--chart-repo-cache", filepath.Join(dir, cache),
			"--chart-timeout", "3s", "--quiet"}
	}
	advice := func(res result, source, name string) inventory.ChartAdvice {
		t.Helper()
		if res.code != 0 {
			t.Fatalf("inventory exit %d:\n%s", res.code, res.stderr)
		}
		var doc inventory.Document
		if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		for _, a := range doc.ChartAdvice {
			if a.Source == source && a.Namespace == ns && a.Name == name {
				return a
			}
		}
		t.Fatalf("no advice for %s %s/%s in %d", source, ns, name, len(doc.ChartAdvice))
		return inventory.ChartAdvice{}
	}
	noSecret := func(what string, res result) {
		t.Helper()
		if strings.Contains(res.stdout, repoPassword) || strings.Contains(res.stderr, repoPassword) {
			t.Errorf("%s carries a repository password", what)
		}
	}

	inv := runCLI(t, append([]string{"inventory"}, args("cache")...)...)
	noSecret("the inventory", inv)
	for _, a := range []inventory.ChartAdvice{advice(inv, inventory.ToolFlux, "web"), advice(inv, inventory.ToolArgoCD, "shop")} {
		if !a.Read || len(a.Versions) < 2 {
			t.Errorf("%s %s: read %v, %d versions (%s); want the private repository read", a.Source, a.Name, a.Read, len(a.Versions), a.Reason)
		}
	}
	scan := runCLI(t, append([]string{"scan", "-o", "json"}, args("cache")...)...)
	noSecret("the report", scan)
	if !strings.Contains(scan.stdout, `"1.2.0"`) {
		t.Errorf("the report names no fix 1.2.0:\n%s", scan.stdout)
	}

	// Without the Secret, the repository refuses the read and the advice names the Secret.
	if err := kube.CoreV1().Secrets(ns).Delete(ctx, "flux-auth", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	inv = runCLI(t, append([]string{"inventory"}, args("fresh")...)...)
	noSecret("the inventory without the Secret", inv)
	a := advice(inv, inventory.ToolFlux, "web")
	want := "credentials secret " + ns + "/flux-auth not read: not found"
	if a.Read || !strings.Contains(a.Reason, want) {
		t.Errorf("advice without the Secret: read %v, reason %q; want unread, saying %q", a.Read, a.Reason, want)
	}
	if len(a.Versions) == 0 || !strings.Contains(a.Versions[0].Error, "401 Unauthorized") {
		t.Errorf("advice without the Secret: versions %+v; want the declared version's read refused (401)", a.Versions)
	}
}

// installGitOpsCRDs makes sure the API server serves Applications, HelmReleases and
// HelmRepositories: a CRD already there (other tests share the server) is left as it is;
// otherwise Argo CD's and Flux's own, from ../shared/kube/crds beside the checkout, or a
// minimal one with the same names, as the gitops collector's tests do.
func installGitOpsCRDs(t *testing.T, dyn dynamic.Interface) {
	t.Helper()
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	dir := filepath.Join("..", "..", "..", "shared", "kube", "crds")
	for _, c := range []struct{ file, group, version, kind, plural string }{
		{"argocd/application-crd.yaml", "argoproj.io", "v1alpha1", "Application", "applications"},
		{"flux/helm.toolkit.fluxcd.io_helmreleases.yaml", "helm.toolkit.fluxcd.io", "v2", "HelmRelease", "helmreleases"},
		{"flux/source.toolkit.fluxcd.io_helmrepositories.yaml", "source.toolkit.fluxcd.io", "v1", "HelmRepository", "helmrepositories"},
	} {
		if _, err := dyn.Resource(crds).Get(context.Background(), c.plural+"."+c.group, metav1.GetOptions{}); err == nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, c.file))
		if err != nil {
			raw, _ = json.Marshal(map[string]any{
				"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": c.plural + "." + c.group},
				"spec": map[string]any{
					"group": c.group, "scope": "Namespaced",
					"names": map[string]any{"kind": c.kind, "plural": c.plural, "listKind": c.kind + "List"},
					"versions": []any{map[string]any{"name": c.version, "served": true, "storage": true,
						"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
				},
			})
		}
		if err := crd.ApplyDefinition(context.Background(), dyn, raw, "upgradescope-test"); err != nil {
			t.Fatal(err)
		}
	}
}

func createLive(t *testing.T, dyn dynamic.Interface, doc string) {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
	gvr := gv.WithResource(map[string]string{"HelmRepository": "helmrepositories", "HelmRelease": "helmreleases", "Application": "applications"}[u.GetKind()])
	if _, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
	}
}
