package gitops

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/inventory"
)

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestApplicationCharts(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want []inventory.GitopsChart
		// otherCluster and invalid say why nothing was read.
		otherCluster, invalid bool
	}{
		{
			name: "a single chart source is read with its repository and revision",
			spec: `{destination: {server: "https://kubernetes.default.svc", namespace: ingress}, source: {repoURL: "https://kubernetes.github.io/ingress-nginx", chart: ingress-nginx, targetRevision: 4.11.2}}`,
			want: []inventory.GitopsChart{{TargetNamespace: "ingress", Chart: "ingress-nginx", RepoURL: "https://kubernetes.github.io/ingress-nginx", SourceKind: "helm", Version: "4.11.2", VersionKind: "exact"}},
		},
		{
			name: "a constraint is recorded as a range",
			spec: `{destination: {name: in-cluster, namespace: ingress}, source: {repoURL: "https://charts.example.com", chart: ingress-nginx, targetRevision: "4.*"}}`,
			want: []inventory.GitopsChart{{TargetNamespace: "ingress", Chart: "ingress-nginx", RepoURL: "https://charts.example.com", SourceKind: "helm", Version: "4.*", VersionKind: "range"}},
		},
		{
			name: "sources win over source and a ref-only entry names no chart",
			spec: `{destination: {server: "https://kubernetes.default.svc.cluster.local:443", namespace: mon}, source: {repoURL: "https://ignored.example.com", chart: ignored}, sources: [{repoURL: "https://prometheus-community.github.io/helm-charts", chart: kube-prometheus-stack, targetRevision: 65.1.0}, {repoURL: "oci://ghcr.io/acme/values", targetRevision: main, ref: values}]}`,
			want: []inventory.GitopsChart{{TargetNamespace: "mon", Chart: "kube-prometheus-stack", RepoURL: "https://prometheus-community.github.io/helm-charts", SourceKind: "helm", Version: "65.1.0", VersionKind: "exact"}},
		},
		{
			name: "an empty sources list falls back to source",
			spec: `{destination: {server: "https://kubernetes.default.svc:443", namespace: a}, sources: [], source: {repoURL: "https://c.example.com", chart: app, targetRevision: 1.0.0}}`,
			want: []inventory.GitopsChart{{TargetNamespace: "a", Chart: "app", RepoURL: "https://c.example.com", SourceKind: "helm", Version: "1.0.0", VersionKind: "exact"}},
		},
		{
			name: "an OCI source without chart is the last path element, credentials cut first",
			spec: `{destination: {server: "https://kubernetes.default.svc", namespace: ingress}, source: {repoURL: "oci://robot:tok@ghcr.io/acme/charts/ingress-nginx?x=1", path: ".", targetRevision: 4.11.2}}`,
			want: []inventory.GitopsChart{{TargetNamespace: "ingress", Chart: "ingress-nginx", RepoURL: "oci://ghcr.io/acme/charts/ingress-nginx", SourceKind: "oci", Version: "4.11.2", VersionKind: "exact"}},
		},
		{
			name: "an OCI source with a path is still read as the repository's chart",
			spec: `{destination: {server: "https://kubernetes.default.svc", namespace: web}, source: {repoURL: "oci://ghcr.io/acme/manifests", path: deploy/prod, targetRevision: 1.2.0}}`,
			want: []inventory.GitopsChart{{TargetNamespace: "web", Chart: "manifests", RepoURL: "oci://ghcr.io/acme/manifests", SourceKind: "oci", Version: "1.2.0", VersionKind: "exact"}},
		},
		{
			name: "an OCI source naming only a registry host names no chart",
			spec: `{destination: {server: "https://kubernetes.default.svc", namespace: web}, source: {repoURL: "oci://ghcr.io", targetRevision: 1.2.0}}`,
		},
		{
			name: "a path source in Git names no chart",
			spec: `{destination: {server: "https://kubernetes.default.svc", namespace: web}, source: {repoURL: "git@github.com:acme/deploy.git", path: charts/ingress-nginx, targetRevision: HEAD}}`,
		},
		{
			name:         "an Application for another cluster is counted, not read",
			spec:         `{destination: {server: "https://prod.example.com:6443", namespace: web}, source: {repoURL: "https://c.example.com", chart: app}}`,
			otherCluster: true,
		},
		{
			name:         "a destination name other than in-cluster is another cluster",
			spec:         `{destination: {name: prod-eu, namespace: web}, source: {repoURL: "https://c.example.com", chart: app}}`,
			otherCluster: true,
		},
		{
			name:    "a destination namespace that is no namespace name is not counted",
			spec:    `{destination: {server: "https://kubernetes.default.svc", namespace: "Not_A Namespace"}, source: {repoURL: "https://c.example.com", chart: app}}`,
			invalid: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := object(t, `{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {namespace: argocd, name: app}, spec: `+tt.spec+`}`)
			got := fromApplication(app)
			for i := range tt.want {
				tt.want[i].Tool, tt.want[i].Namespace, tt.want[i].Name = "argocd", "argocd", "app"
			}
			if !reflect.DeepEqual(got.charts, tt.want) {
				t.Errorf("charts = %+v\nwant %+v", got.charts, tt.want)
			}
			if got.otherCluster != tt.otherCluster || got.invalidNamespace != tt.invalid {
				t.Errorf("otherCluster, invalid = %v, %v; want %v, %v", got.otherCluster, got.invalidNamespace, tt.otherCluster, tt.invalid)
			}
		})
	}
}

func TestHelmReleaseCharts(t *testing.T) {
	tests := []struct {
		name string
		spec string
		want hrChart
	}{
		{
			name: "a chart from a HelmRepository keeps its name and version",
			spec: `{chart: {spec: {chart: ingress-nginx, version: 4.11.2, sourceRef: {kind: HelmRepository, name: ingress}}}}`,
			want: hrChart{chart: &inventory.GitopsChart{TargetNamespace: "apps", Chart: "ingress-nginx", SourceKind: "HelmRepository", Version: "4.11.2", VersionKind: "exact"}},
		},
		{
			name: "a chart from a GitRepository is a path whose last element names it",
			spec: `{targetNamespace: ingress, chart: {spec: {chart: ./charts/ingress-nginx/, version: ">=4.0.0 <5.0.0", sourceRef: {kind: GitRepository, name: platform}}}}`,
			want: hrChart{chart: &inventory.GitopsChart{TargetNamespace: "ingress", Chart: "ingress-nginx", SourceKind: "GitRepository", Version: ">=4.0.0 <5.0.0", VersionKind: "range"}},
		},
		{
			name: "a chart from a Bucket is a path too",
			spec: `{chart: {spec: {chart: charts/cert-manager, sourceRef: {kind: Bucket, name: b}}}}`,
			want: hrChart{chart: &inventory.GitopsChart{TargetNamespace: "apps", Chart: "cert-manager", SourceKind: "Bucket"}},
		},
		{
			name: "a chartRef to an OCIRepository is resolved later, in the release's namespace by default",
			spec: `{chartRef: {kind: OCIRepository, name: podinfo}}`,
			want: hrChart{chart: &inventory.GitopsChart{TargetNamespace: "apps", SourceKind: "OCIRepository"}, ociRef: "apps/podinfo"},
		},
		{
			name: "a chartRef names the OCIRepository's namespace when it sets one",
			spec: `{chartRef: {kind: OCIRepository, name: podinfo, namespace: flux-system}}`,
			want: hrChart{chart: &inventory.GitopsChart{TargetNamespace: "apps", SourceKind: "OCIRepository"}, ociRef: "flux-system/podinfo"},
		},
		{
			name: "a chartRef to a HelmChart names no chart",
			spec: `{chartRef: {kind: HelmChart, name: podinfo}}`,
			want: hrChart{helmChartRef: true},
		},
		{
			name: "a kubeConfig deploys to another cluster",
			spec: `{kubeConfig: {secretRef: {name: remote}}, chart: {spec: {chart: app, sourceRef: {kind: HelmRepository, name: r}}}}`,
			want: hrChart{otherCluster: true},
		},
		{
			name: "a targetNamespace that is no namespace name is not counted",
			spec: `{targetNamespace: "-bad-", chart: {spec: {chart: app, sourceRef: {kind: HelmRepository, name: r}}}}`,
			want: hrChart{invalidNamespace: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hr := object(t, `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {namespace: apps, name: rel}, spec: `+tt.spec+`}`)
			if tt.want.chart != nil {
				tt.want.chart.Tool, tt.want.chart.Namespace, tt.want.chart.Name = "flux", "apps", "rel"
			}
			if got := fromHelmRelease(hr); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v (chart %+v)\nwant %+v (chart %+v)", got, got.chart, tt.want, tt.want.chart)
			}
		})
	}
}

func TestOCIRepositoryVersionFollowsFluxPrecedence(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		name, ref, wantVersion, wantKind string
	}{
		{"a digest wins over a tag and is no chart version", `{digest: "` + digest + `", tag: 6.5.0}`, digest, "digest"},
		{"a semver range is recorded as the range whatever the tag says", `{semver: ">=6.0.0", tag: 6.5.0}`, ">=6.0.0", "range"},
		{"a semver of one version is exact", `{semver: 6.5.0}`, "6.5.0", "exact"},
		{"a tag alone is the version", `{tag: 6.5.0}`, "6.5.0", "exact"},
		{"a tag that is no version is recorded without a kind", `{tag: latest}`, "latest", ""},
		{"no ref records no version", `{}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := object(t, `{spec: {url: "oci://user:pw@ghcr.io/stefanprodan/charts/podinfo", ref: `+tt.ref+`}}`)
			var c inventory.GitopsChart
			if !applyOCIRepository(&c, repo) {
				t.Fatal("applyOCIRepository named no chart")
			}
			if c.Chart != "podinfo" || c.RepoURL != "oci://ghcr.io/stefanprodan/charts/podinfo" {
				t.Errorf("chart, url = %q, %q", c.Chart, c.RepoURL)
			}
			if c.Version != tt.wantVersion || c.VersionKind != tt.wantKind {
				t.Errorf("version = %q (%q), want %q (%q)", c.Version, c.VersionKind, tt.wantVersion, tt.wantKind)
			}
		})
	}
}
