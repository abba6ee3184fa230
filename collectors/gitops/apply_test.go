package gitops

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestApplyHelmCapability(t *testing.T) {
	argoChart := inventory.GitopsChart{Tool: "argocd", Namespace: "argocd", Name: "a", TargetNamespace: "x", Chart: "c"}
	release := []inventory.HelmRelease{{Name: "r", Namespace: "n", Chart: "c"}}
	tests := []struct {
		name        string
		releases    []inventory.HelmRelease
		res         Result
		wantPartial bool
		wantSkipped []string
		wantReason  string
	}{
		{name: "no release but Argo CD present names argocd", res: Result{ArgoCD: true},
			wantPartial: true, wantSkipped: []string{"argocd"}, wantReason: "helm template"},
		{name: "every Argo CD chart is a gap even beside releases", releases: release, res: Result{ArgoCD: true, Charts: []inventory.GitopsChart{argoChart}},
			wantPartial: true, wantSkipped: []string{"argocd"}},
		{name: "Argo CD naming no chart adds no gap while releases exist", releases: release, res: Result{ArgoCD: true}},
		{name: "Flux with no release at all and a HelmRelease here names flux", res: Result{Flux: true, fluxServed: true, FluxCounted: true},
			wantPartial: true, wantSkipped: []string{"flux"}},
		{name: "Flux is no gap when its HelmRelease list is served and empty", res: Result{Flux: true, fluxServed: true}},
		{name: "Flux is no gap when every HelmRelease deploys elsewhere", res: Result{Flux: true, fluxServed: true, Gaps: []string{"1 Flux HelmRelease(s) deploy to other clusters (spec.kubeConfig)"}},
			wantReason: "other clusters"},
		{name: "Flux is no gap beside Helm releases", releases: release, res: Result{Flux: true, fluxServed: true, FluxCounted: true}},
		{name: "Flux seen only on workloads with no release names flux", res: Result{Flux: true},
			wantPartial: true, wantSkipped: []string{"flux"}},
		{name: "a failed discovery names both tools", releases: release, res: Result{DiscoveryFailed: errors.New("boom")},
			wantPartial: true, wantSkipped: []string{"argocd", "flux"}, wantReason: "not known whether Argo CD or Flux is installed"},
		{name: "forbidden lists make it partial with the lists as reason", releases: release, res: Result{ArgoCD: true, Forbidden: []string{"applications"}},
			wantPartial: true, wantReason: "forbidden: list applications"},
		{name: "an unreadable OCIRepository makes it partial", releases: release, res: Result{Flux: true, fluxServed: true, FluxCounted: true, Gaps: []string{"1 Flux chartRef(s)"}, Incomplete: true},
			wantPartial: true, wantReason: "1 Flux chartRef(s)"},
		{name: "no tool leaves helm as it was", releases: release, res: Result{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := &inventory.Document{HelmReleases: tt.releases, Capabilities: map[string]inventory.Capability{inventory.CapHelm: {Available: true}}}
			Apply(doc, tt.res)
			helm := doc.Capabilities[inventory.CapHelm]
			if !helm.Available || helm.Partial != tt.wantPartial || !reflect.DeepEqual(helm.Skipped, tt.wantSkipped) {
				t.Errorf("helm = %+v, want partial %v skipping %v", helm, tt.wantPartial, tt.wantSkipped)
			}
			if !strings.Contains(helm.Reason, tt.wantReason) {
				t.Errorf("reason %q does not say %q", helm.Reason, tt.wantReason)
			}
		})
	}
}

func TestApplyUnreadableHelmStorageSaysTheChartsStillFeedAddons(t *testing.T) {
	doc := &inventory.Document{Capabilities: map[string]inventory.Capability{
		inventory.CapHelm: {Available: false, Reason: "helm: forbidden: secrets"},
	}}
	Apply(doc, Result{ArgoCD: true, Charts: []inventory.GitopsChart{{Tool: "argocd", Chart: "ingress-nginx"}}})
	helm := doc.Capabilities[inventory.CapHelm]
	if helm.Available || !strings.Contains(helm.Reason, "still feed add-on detection") || !strings.HasPrefix(helm.Reason, "helm: forbidden") {
		t.Errorf("helm = %+v, want unavailable, its reason kept and saying the charts feed add-on detection", helm)
	}
}

func TestApplyAddonsFromChartsAlone(t *testing.T) {
	charts := []inventory.GitopsChart{{Tool: "flux", Chart: "ingress-nginx"}}
	doc := &inventory.Document{Capabilities: map[string]inventory.Capability{
		inventory.CapHelm:   {Available: true},
		inventory.CapAddons: {Available: false, Reason: "addons: forbidden: pods"},
	}}
	Apply(doc, Result{Flux: true, fluxServed: true, FluxCounted: true, Charts: charts})
	if got := doc.Capabilities[inventory.CapAddons]; !got.Available || !got.Partial || !strings.Contains(got.Reason, "GitOps chart sources") {
		t.Errorf("addons = %+v, want partial, detected from the GitOps chart sources", got)
	}
	doc.Capabilities[inventory.CapAddons] = inventory.Capability{Available: false, Reason: "addons: forbidden: pods"}
	Apply(doc, Result{})
	if got := doc.Capabilities[inventory.CapAddons]; got.Available {
		t.Errorf("addons with no charts = %+v, want unavailable still", got)
	}
}
