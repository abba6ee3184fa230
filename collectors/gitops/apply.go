package gitops

import (
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
)

// Apply records the charts in doc and says in the helm and addons capabilities what they
// could not assess. It runs after the Helm and add-on steps, whose capabilities it amends.
func Apply(doc *inventory.Document, res Result) {
	doc.GitopsCharts = res.Charts
	doc.Capabilities[inventory.CapHelm] = helmCapability(doc.Capabilities[inventory.CapHelm], doc, res)
	if addons, ok := doc.Capabilities[inventory.CapAddons]; ok && !addons.Available && len(res.Charts) > 0 {
		doc.Capabilities[inventory.CapAddons] = inventory.Capability{
			Available: true, Partial: true,
			Reason: "detected from the GitOps chart sources only; " + addons.Reason,
		}
	}
}

func helmCapability(helm inventory.Capability, doc *inventory.Document, res Result) inventory.Capability {
	var reasons []string
	if helm.Reason != "" {
		reasons = append(reasons, helm.Reason)
	}
	if res.DiscoveryFailed != nil {
		helm.Partial = helm.Available
		helm.Skipped = appendUnique(helm.Skipped, inventory.ToolArgoCD, inventory.ToolFlux)
		reasons = append(reasons, "not known whether Argo CD or Flux is installed: "+res.DiscoveryFailed.Error())
		helm.Reason = strings.Join(reasons, "; ")
		return helm
	}
	noRelease := len(doc.HelmReleases) == 0
	if res.ArgoCD && (noRelease || hasTool(res.Charts, inventory.ToolArgoCD)) {
		helm.Skipped = appendUnique(helm.Skipped, inventory.ToolArgoCD)
		reasons = append(reasons, "charts Argo CD renders with helm template leave no release: their kubeVersion and stored manifest are not assessed")
	}
	// helm-controller leaves ordinary release records, so Flux is a gap only where there are
	// none, and not where its HelmReleases are all elsewhere or there are none to read.
	if res.Flux && noRelease && (res.FluxCounted || !fluxListRead(res)) {
		helm.Skipped = appendUnique(helm.Skipped, inventory.ToolFlux)
		reasons = append(reasons, "no Helm release records Flux's charts")
	}
	if len(res.Forbidden) > 0 {
		reasons = append(reasons, "forbidden: list "+strings.Join(res.Forbidden, ", "))
	}
	reasons = append(reasons, res.Gaps...)
	if helm.Available && (len(helm.Skipped) > 0 || len(res.Forbidden) > 0 || res.Incomplete) {
		helm.Partial = true
	}
	if !helm.Available && len(res.Charts) > 0 {
		reasons = append(reasons, "the GitOps chart sources were read and still feed add-on detection")
	}
	helm.Reason = strings.Join(reasons, "; ")
	return helm
}

// fluxListRead: the HelmRelease list was served and read (it may be empty).
func fluxListRead(res Result) bool {
	for _, f := range res.Forbidden {
		if f == "helmreleases" {
			return false
		}
	}
	return res.fluxServed
}

func hasTool(charts []inventory.GitopsChart, tool string) bool {
	for _, c := range charts {
		if c.Tool == tool {
			return true
		}
	}
	return false
}

func appendUnique(list []string, items ...string) []string {
	for _, it := range items {
		found := false
		for _, l := range list {
			found = found || l == it
		}
		if !found {
			list = append(list, it)
		}
	}
	return list
}
