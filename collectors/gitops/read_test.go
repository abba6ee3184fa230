package gitops_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/inventory"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// gitopsObjects are the scenario's Applications, HelmReleases and OCIRepositories, in the
// namespaces gitops-argo and gitops-flux.
var gitopsObjects = []string{
	`{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: single, namespace: gitops-argo}, spec: {project: default, destination: {server: "https://kubernetes.default.svc", namespace: ingress-nginx}, source: {repoURL: "https://user:tok@kubernetes.github.io/ingress-nginx", chart: ingress-nginx, targetRevision: 4.11.2}}}`,
	`{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: multi, namespace: gitops-argo}, spec: {project: default, destination: {name: in-cluster, namespace: monitoring}, sources: [{repoURL: "https://prometheus-community.github.io/helm-charts", chart: kube-prometheus-stack, targetRevision: "65.*"}, {repoURL: "https://github.com/acme/values.git", targetRevision: main, ref: values}]}}`,
	`{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: oci, namespace: gitops-argo}, spec: {project: default, destination: {server: "https://kubernetes.default.svc.cluster.local:443", namespace: cert-manager}, source: {repoURL: "oci://quay.io/jetstack/charts/cert-manager", path: ".", targetRevision: 1.16.1}}}`,
	`{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: oci-path, namespace: gitops-argo}, spec: {project: default, destination: {server: "https://kubernetes.default.svc", namespace: web}, source: {repoURL: "oci://ghcr.io/acme/manifests", path: deploy, targetRevision: 2.0.0}}}`,
	`{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: from-appset, namespace: gitops-argo, ownerReferences: [{apiVersion: argoproj.io/v1alpha1, kind: ApplicationSet, name: clusters, uid: 6b1d3c1e-0000-4000-8000-000000000001, controller: true}]}, spec: {project: default, destination: {server: "https://kubernetes.default.svc", namespace: external-dns}, source: {repoURL: "https://kubernetes-sigs.github.io/external-dns/", chart: external-dns, targetRevision: 1.15.0}}}`,
	`{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: remote, namespace: gitops-argo}, spec: {project: default, destination: {server: "https://prod.example.com:6443", namespace: web}, source: {repoURL: "https://charts.example.com", chart: remote-chart}}}`,
	`{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: git-path, namespace: gitops-argo}, spec: {project: default, destination: {server: "https://kubernetes.default.svc", namespace: web}, source: {repoURL: "git@github.com:acme/deploy.git", path: charts/web, targetRevision: HEAD}}}`,
	`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: from-repo, namespace: gitops-flux}, spec: {interval: 10m, chart: {spec: {chart: traefik, version: 33.0.0, sourceRef: {kind: HelmRepository, name: traefik}}}}}`,
	`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: from-git, namespace: gitops-flux}, spec: {interval: 10m, targetNamespace: ingress, chart: {spec: {chart: ./charts/ingress-nginx, version: ">=4.0.0 <5.0.0", sourceRef: {kind: GitRepository, name: platform}}}}}`,
	`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: oci-digest, namespace: gitops-flux}, spec: {interval: 10m, chartRef: {kind: OCIRepository, name: podinfo-digest}}}`,
	`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: oci-semver, namespace: gitops-flux}, spec: {interval: 10m, chartRef: {kind: OCIRepository, name: podinfo-semver}}}`,
	`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: oci-tag, namespace: gitops-flux}, spec: {interval: 10m, chartRef: {kind: OCIRepository, name: podinfo-tag}}}`,
	`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: oci-none, namespace: gitops-flux}, spec: {interval: 10m, chartRef: {kind: OCIRepository, name: podinfo-none}}}`,
	`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: oci-missing, namespace: gitops-flux}, spec: {interval: 10m, chartRef: {kind: OCIRepository, name: not-there}}}`,
	`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: helmchart, namespace: gitops-flux}, spec: {interval: 10m, chartRef: {kind: HelmChart, name: podinfo}}}`,
	`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: remote, namespace: gitops-flux}, spec: {interval: 10m, kubeConfig: {secretRef: {name: remote}}, chart: {spec: {chart: remote, sourceRef: {kind: HelmRepository, name: r}}}}}`,
	`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: bad-target, namespace: gitops-flux}, spec: {interval: 10m, targetNamespace: "Bad_NS", chart: {spec: {chart: bad, sourceRef: {kind: HelmRepository, name: r}}}}}`,
	`{apiVersion: source.toolkit.fluxcd.io/v1, kind: OCIRepository, metadata: {name: podinfo-digest, namespace: gitops-flux}, spec: {interval: 10m, url: "oci://ghcr.io/stefanprodan/charts/podinfo", ref: {digest: "` + digest + `", tag: 6.5.0}}}`,
	`{apiVersion: source.toolkit.fluxcd.io/v1, kind: OCIRepository, metadata: {name: podinfo-semver, namespace: gitops-flux}, spec: {interval: 10m, url: "oci://ghcr.io/stefanprodan/charts/podinfo", ref: {semver: ">=6.0.0", tag: 6.5.0}}}`,
	`{apiVersion: source.toolkit.fluxcd.io/v1, kind: OCIRepository, metadata: {name: podinfo-tag, namespace: gitops-flux}, spec: {interval: 10m, url: "oci://ghcr.io/stefanprodan/charts/podinfo", ref: {tag: 6.5.0}}}`,
	`{apiVersion: source.toolkit.fluxcd.io/v1, kind: OCIRepository, metadata: {name: podinfo-none, namespace: gitops-flux}, spec: {interval: 10m, url: "oci://ghcr.io/stefanprodan/charts/podinfo"}}`,
}

func setUpScenario(t *testing.T) (dynamic.Interface, *gitops.Reader) {
	t.Helper()
	cfg := restConfig(t, "admin")
	dyn := dynamic.NewForConfigOrDie(cfg)
	kube := kubernetes.NewForConfigOrDie(cfg)
	installCRDs(t, dyn)
	ctx := context.Background()
	for _, ns := range []string{"gitops-argo", "gitops-flux"} {
		_, _ = kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	}
	for _, doc := range gitopsObjects {
		createObject(t, dyn, doc)
	}
	return dyn, gitops.NewReader(dyn, kube.Discovery(), metadata.NewForConfigOrDie(cfg))
}

func decode(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func resourceOf(u *unstructured.Unstructured) schema.GroupVersionResource {
	gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
	return gv.WithResource(map[string]string{
		"Application": "applications", "HelmRelease": "helmreleases", "OCIRepository": "ocirepositories",
	}[u.GetKind()])
}

func ours(charts []inventory.GitopsChart) []inventory.GitopsChart {
	var out []inventory.GitopsChart
	for _, c := range charts {
		if strings.HasPrefix(c.Namespace, "gitops-") {
			out = append(out, c)
		}
	}
	return out
}

func TestGitOpsChartsOnARealAPIServer(t *testing.T) {
	_, reader := setUpScenario(t)
	res := reader.Read(context.Background())
	argo := func(name, target, chart, repo, kind, version, vkind string) inventory.GitopsChart {
		return inventory.GitopsChart{Tool: "argocd", Namespace: "gitops-argo", Name: name, TargetNamespace: target, Chart: chart, RepoURL: repo, SourceKind: kind, Version: version, VersionKind: vkind}
	}
	flux := func(name, target, chart, repo, kind, version, vkind string) inventory.GitopsChart {
		return inventory.GitopsChart{Tool: "flux", Namespace: "gitops-flux", Name: name, TargetNamespace: target, Chart: chart, RepoURL: repo, SourceKind: kind, Version: version, VersionKind: vkind}
	}
	const podinfo = "oci://ghcr.io/stefanprodan/charts/podinfo"
	want := []inventory.GitopsChart{
		argo("from-appset", "external-dns", "external-dns", "https://kubernetes-sigs.github.io/external-dns/", "helm", "1.15.0", "exact"),
		argo("multi", "monitoring", "kube-prometheus-stack", "https://prometheus-community.github.io/helm-charts", "helm", "65.*", "range"),
		argo("oci", "cert-manager", "cert-manager", "oci://quay.io/jetstack/charts/cert-manager", "oci", "1.16.1", "exact"),
		argo("oci-path", "web", "manifests", "oci://ghcr.io/acme/manifests", "oci", "2.0.0", "exact"),
		argo("single", "ingress-nginx", "ingress-nginx", "https://kubernetes.github.io/ingress-nginx", "helm", "4.11.2", "exact"),
		flux("from-git", "ingress", "ingress-nginx", "", "GitRepository", ">=4.0.0 <5.0.0", "range"),
		flux("from-repo", "gitops-flux", "traefik", "", "HelmRepository", "33.0.0", "exact"),
		flux("oci-digest", "gitops-flux", "podinfo", podinfo, "OCIRepository", digest, "digest"),
		flux("oci-none", "gitops-flux", "podinfo", podinfo, "OCIRepository", "", ""),
		flux("oci-semver", "gitops-flux", "podinfo", podinfo, "OCIRepository", ">=6.0.0", "range"),
		flux("oci-tag", "gitops-flux", "podinfo", podinfo, "OCIRepository", "6.5.0", "exact"),
	}
	if got := ours(res.Charts); !reflect.DeepEqual(got, want) {
		t.Errorf("charts:\n got %+v\nwant %+v", got, want)
	}
	if !res.ArgoCD || !res.Flux || !res.FluxCounted {
		t.Errorf("ArgoCD, Flux, FluxCounted = %v, %v, %v; want all true", res.ArgoCD, res.Flux, res.FluxCounted)
	}
	reason := strings.Join(res.Gaps, "; ")
	for _, want := range []string{
		"1 Argo CD Application(s) deploy to other clusters",
		"1 Flux HelmRelease(s) deploy to other clusters",
		"1 Flux HelmRelease(s) name a targetNamespace that is no namespace name",
		"1 Flux HelmRelease(s) reference a HelmChart",
		"1 Flux chartRef(s) to an OCIRepository that could not be read: ocirepository gitops-flux/not-there not found",
	} {
		if !strings.Contains(reason, want) {
			t.Errorf("gaps %q do not say %q", reason, want)
		}
	}
	if strings.Contains(reason, "user:tok") {
		t.Errorf("gaps leak a credential: %q", reason)
	}
}

func TestGitOpsGapsMakeHelmPartialWithoutReleases(t *testing.T) {
	_, reader := setUpScenario(t)
	doc := &inventory.Document{Capabilities: map[string]inventory.Capability{
		inventory.CapHelm:   {Available: true},
		inventory.CapAddons: {Available: false, Reason: "pods: forbidden"},
	}}
	gitops.Apply(doc, reader.Read(context.Background()))
	helm := doc.Capabilities[inventory.CapHelm]
	if !helm.Partial || !reflect.DeepEqual(helm.Skipped, []string{"argocd", "flux"}) {
		t.Errorf("helm = %+v, want partial skipping argocd and flux", helm)
	}
	addons := doc.Capabilities[inventory.CapAddons]
	if !addons.Available || !addons.Partial || !strings.Contains(addons.Reason, "GitOps chart sources") {
		t.Errorf("addons = %+v, want partial, detected from the GitOps chart sources", addons)
	}
}
