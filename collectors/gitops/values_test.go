package gitops

import (
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestValuesDeclaredBesideTheCharts(t *testing.T) {
	const app = `{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: web, namespace: argocd},
		spec: {destination: {server: "https://kubernetes.default.svc", namespace: apps}, source: {repoURL: "https://charts.example.com", chart: web, targetRevision: 1.0.0, helm: %s}}}`
	tests := []struct {
		name      string
		docs      []string
		key       string
		want      ChartValues
		wantChart string // the chart's repoURL in the inventory
	}{
		{"an Application's valuesObject is taken whole, the release named after the Application",
			[]string{fmt.Sprintf(app, `{valuesObject: {image: {tag: "1.2"}, replicas: 2}}`)}, "argocd/argocd/web",
			ChartValues{Values: map[string]any{"image": map[string]any{"tag": "1.2"}, "replicas": float64(2)}, ReleaseName: "web", ReleaseNamespace: "apps"},
			"https://charts.example.com"},
		{"helm.values is YAML, and parameters apply on top as --set, forceString as --set-string",
			[]string{fmt.Sprintf(app, `{releaseName: site, values: "a: 1\nb: {c: x}\n", parameters: [{name: b.c, value: "y,z"}, {name: count, value: "5", forceString: true}, {name: m, value: "5"}]}`)},
			"argocd/argocd/web",
			ChartValues{Values: map[string]any{"a": float64(1), "b": map[string]any{"c": "y,z"}, "count": "5", "m": int64(5)}, ReleaseName: "site", ReleaseNamespace: "apps"},
			"https://charts.example.com"},
		{"values that are not YAML and valueFiles are noted, never quoted",
			[]string{fmt.Sprintf(app, `{values: "secret: [unclosed", valueFiles: [values-prod.yaml]}`)}, "argocd/argocd/web",
			ChartValues{Values: map[string]any{}, ReleaseName: "web", ReleaseNamespace: "apps", NotRead: []string{"helm.values (not a YAML map)", "valueFiles"}},
			"https://charts.example.com"},
		{"a HelmRelease's values, its release name after the target namespace, and its HelmRepository's URL from the same files",
			[]string{
				`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: dns, namespace: flux-system},
					spec: {targetNamespace: infra, values: {provider: aws}, valuesFrom: [{kind: Secret, name: s}], chart: {spec: {chart: external-dns, version: 1.15.0, sourceRef: {kind: HelmRepository, name: charts}}}}}`,
				`{apiVersion: source.toolkit.fluxcd.io/v1, kind: HelmRepository, metadata: {name: charts, namespace: flux-system}, spec: {url: "https://user:pw@charts.example.com/stable?token=x"}}`,
			},
			"flux/flux-system/dns",
			ChartValues{Values: map[string]any{"provider": "aws"}, ReleaseName: "infra-dns", ReleaseNamespace: "flux-system", NotRead: []string{"valuesFrom"},
				HelmRepository: "flux-system/charts", RepoURL: "https://charts.example.com/stable"},
			"https://charts.example.com/stable"},
		{"a HelmRelease's chart valuesFiles, which replace the chart's values.yaml, are noted as not read",
			[]string{
				`{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: dns, namespace: flux-system},
					spec: {values: {provider: aws}, valuesFrom: [{kind: Secret, name: s}], chart: {spec: {chart: external-dns, version: 1.15.0, valuesFiles: [values-prod.yaml], sourceRef: {kind: HelmRepository, name: charts}}}}}`,
				`{apiVersion: source.toolkit.fluxcd.io/v1, kind: HelmRepository, metadata: {name: charts, namespace: flux-system}, spec: {url: "https://charts.example.com/stable"}}`,
			},
			"flux/flux-system/dns",
			ChartValues{Values: map[string]any{"provider": "aws"}, ReleaseName: "dns", ReleaseNamespace: "flux-system", NotRead: []string{"valuesFrom", "valuesFiles"},
				HelmRepository: "flux-system/charts", RepoURL: "https://charts.example.com/stable"},
			"https://charts.example.com/stable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			for _, d := range tt.docs {
				objs = append(objs, object(t, d))
			}
			res := FromManifests(objs)
			got, _ := json.Marshal(res.Values[tt.key])
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Errorf("values = %s\nwant     %s", got, want)
			}
			if len(res.Charts) != 1 || res.Charts[0].RepoURL != tt.wantChart {
				t.Errorf("charts = %+v, want one from %s", res.Charts, tt.wantChart)
			}
		})
	}
}
