package charts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/inventory"
)

func TestSubjects(t *testing.T) {
	release := inventory.HelmRelease{Namespace: "infra", Name: "dns", Chart: "external-dns", ChartVersion: "1.15.0", KubeVersion: ">=1.19-0 <1.36-0",
		ManifestAPIs: []inventory.APIUsage{{Group: "networking.k8s.io", Version: "v1beta1", Kind: "Ingress"}, {Version: "v1", Kind: "ConfigMap"}}}
	fluxDNS := inventory.GitopsChart{Tool: inventory.ToolFlux, Namespace: "flux-system", Name: "dns", Chart: "external-dns", SourceKind: "HelmRepository", Version: "1.x", VersionKind: inventory.VersionRange}
	argo := func(name, repo, kind, version, vk string) inventory.GitopsChart {
		return inventory.GitopsChart{Tool: inventory.ToolArgoCD, Namespace: "argocd", Name: name, Chart: "web", RepoURL: repo, SourceKind: kind, Version: version, VersionKind: vk}
	}
	tests := []struct {
		name   string
		doc    inventory.Document
		values Values
		want   []string
	}{
		{"a Helm release carries its values and its manifest's APIs, and is located by Helm's repositories",
			inventory.Document{HelmReleases: []inventory.HelmRelease{release}},
			Values{Helm: map[string]map[string]any{"infra/dns": {"k": "v"}}},
			[]string{`helm/infra/dns external-dns@1.15.0 repo="" values=map[k:v] notRead=[] apis=[networking.k8s.io/v1beta1 Ingress v1 ConfigMap]`}},
		{"a Flux HelmRelease managing that release is advised once, as the release, from the Flux repository",
			inventory.Document{HelmReleases: []inventory.HelmRelease{release}, GitopsCharts: []inventory.GitopsChart{fluxDNS}},
			Values{GitOps: map[string]gitops.ChartValues{"flux/flux-system/dns": {ReleaseNamespace: "infra", ReleaseName: "dns", RepoURL: "https://charts.example.com"}}},
			[]string{`helm/infra/dns external-dns@1.15.0 repo="https://charts.example.com" values=map[] notRead=[] apis=[networking.k8s.io/v1beta1 Ingress v1 ConfigMap]`}},
		{"Argo CD charts at an exact version in a Helm or OCI repository are advised, ranges, digests and Git sources are not",
			inventory.Document{GitopsCharts: []inventory.GitopsChart{
				argo("a", "https://charts.example.com", "helm", "1.0.0", inventory.VersionExact),
				argo("b", "oci://registry.example.com/charts/web", "oci", "1.0.0", inventory.VersionExact),
				argo("c", "oci://registry.example.com/charts", "oci", "1.0.0", inventory.VersionExact),
				argo("d", "https://charts.example.com", "helm", "1.*", inventory.VersionRange),
				argo("e", "https://git.example.com/repo.git", "git", "1.0.0", inventory.VersionExact),
			}},
			Values{GitOps: map[string]gitops.ChartValues{"argocd/argocd/a": {Values: map[string]any{"x": 1}, NotRead: []string{"valueFiles"}}}},
			[]string{
				`argocd/argocd/a web@1.0.0 repo="https://charts.example.com" values=map[x:1] notRead=["valueFiles"] apis=[]`,
				`argocd/argocd/b web@1.0.0 repo="oci://registry.example.com/charts" values=map[] notRead=[] apis=[]`,
				`argocd/argocd/c web@1.0.0 repo="oci://registry.example.com/charts" values=map[] notRead=[] apis=[]`,
			}},
		{"an Argo CD Helm source written without a scheme, as Argo CD writes an OCI Helm repository, is read over OCI",
			inventory.Document{GitopsCharts: []inventory.GitopsChart{
				argo("nginx", "registry-1.docker.io/bitnamicharts", "helm", "15.9.0", inventory.VersionExact),
			}},
			Values{},
			[]string{`argocd/argocd/nginx web@15.9.0 repo="oci://registry-1.docker.io/bitnamicharts" values=map[] notRead=[] apis=[]`}},
		{"an Argo CD Application declaring two chart sources is not advised; one with one chart is",
			inventory.Document{GitopsCharts: []inventory.GitopsChart{
				argo("multi", "https://charts.example.com", "helm", "1.0.0", inventory.VersionExact),
				argo("multi", "oci://registry.example.com/charts", "oci", "2.0.0", inventory.VersionExact),
				argo("single", "https://charts.example.com", "helm", "1.0.0", inventory.VersionExact),
			}},
			Values{},
			[]string{`argocd/argocd/single web@1.0.0 repo="https://charts.example.com" values=map[] notRead=[] apis=[]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range Subjects(&tt.doc, tt.values) {
				got = append(got, fmt.Sprintf("%s/%s/%s %s@%s repo=%q values=%v notRead=%q apis=%v", s.Source, s.Namespace, s.Name, s.Chart, s.Version, s.Repository, s.Values, s.ValuesNotRead, s.InstalledAPIs))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("subjects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
