package gitops

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestChartsDeclaredInManifests(t *testing.T) {
	const (
		remoteApp = `{apiVersion: argoproj.io/v1alpha1, kind: Application, metadata: {name: eu, namespace: argocd},
			spec: {destination: {server: "https://eu.example.com", namespace: ingress}, source: {repoURL: "https://kubernetes.github.io/ingress-nginx", chart: ingress-nginx, targetRevision: 4.11.2}}}`
		noNamespaceHR = `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: dns},
			spec: {chart: {spec: {chart: external-dns, version: 1.15.0, sourceRef: {kind: HelmRepository, name: charts}}}}}`
		refHR = `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: podinfo, namespace: apps},
			spec: {chartRef: {kind: OCIRepository, name: podinfo}}}`
		repo = `{apiVersion: source.toolkit.fluxcd.io/v1, kind: OCIRepository, metadata: {name: podinfo, namespace: apps},
			spec: {url: "oci://ghcr.io/stefanprodan/charts/podinfo", ref: {tag: 6.7.0}}}`
		helmChartHR = `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: hc, namespace: apps},
			spec: {chartRef: {kind: HelmChart, name: hc}}}`
		badTarget = `{apiVersion: helm.toolkit.fluxcd.io/v2, kind: HelmRelease, metadata: {name: bad, namespace: apps},
			spec: {targetNamespace: "Not_A_Namespace", chart: {spec: {chart: x}}}}`
	)
	tests := []struct {
		name       string
		docs       []string
		wantCharts string
		wantGaps   string
		incomplete bool
	}{
		{"an Application for another cluster still counts: the files are the scope", []string{remoteApp},
			"argocd argocd/eu ingress-nginx 4.11.2", "", false},
		{"a HelmRelease without a namespace is read", []string{noNamespaceHR},
			"flux /dns external-dns 1.15.0", "", false},
		{"a chartRef resolves against an OCIRepository in the files, in any order", []string{repo, refHR},
			"flux apps/podinfo podinfo 6.7.0", "", false},
		{"a chartRef with no OCIRepository among the files is a gap", []string{refHR},
			"", "1 Flux chartRef(s) to an OCIRepository not among the files (first: apps/podinfo)", true},
		{"a HelmChart reference and a bad target namespace are gaps", []string{helmChartHR, badTarget},
			"", "1 Application(s) or HelmRelease(s) name a target that is no namespace name; 1 Flux HelmRelease(s) reference a HelmChart, which names no chart", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []*unstructured.Unstructured
			for _, d := range tt.docs {
				objs = append(objs, object(t, d))
			}
			res := FromManifests(objs)
			var charts []string
			for _, c := range res.Charts {
				charts = append(charts, c.Tool+" "+c.Namespace+"/"+c.Name+" "+c.Chart+" "+c.Version)
			}
			if got := strings.Join(charts, ", "); got != tt.wantCharts {
				t.Errorf("charts = %q, want %q", got, tt.wantCharts)
			}
			if got := strings.Join(res.Gaps, "; "); got != tt.wantGaps || res.Incomplete != tt.incomplete {
				t.Errorf("gaps = %q (incomplete %v), want %q (%v)", got, res.Incomplete, tt.wantGaps, tt.incomplete)
			}
		})
	}
}
