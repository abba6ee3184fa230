package gitops

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DeclaresCharts says whether objects of this group and kind name charts FromManifests reads.
func DeclaresCharts(group, kind string) bool {
	return group == applications.Group && kind == "Application" ||
		group == helmGroup && kind == "HelmRelease" ||
		group == sourceGroup && (kind == "OCIRepository" || kind == "HelmRepository")
}

// FromManifests reads the charts declared by Argo CD Applications and Flux HelmReleases found
// among manifests (`scan --files`), resolving chartRefs against the OCIRepositories among the
// same files, and sourceRefs against the HelmRepositories there. The files are the scope a user asked about, and a repository commonly holds
// several clusters' Applications, so every destination counts; what cannot be resolved among
// the files is a gap in the helm capability.
func FromManifests(objs []*unstructured.Unstructured) Result {
	var res Result
	repos := map[string]*unstructured.Unstructured{}
	helmRepos := map[string]string{}
	var pending []hrChart
	var invalid, helmCharts int
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		switch {
		case gvk.Group == applications.Group && gvk.Kind == "Application":
			res.ArgoCD = true
			a := chartsOfApplication(u)
			a.keep(&res)
			invalid += b2i(a.invalidNamespace)
		case gvk.Group == helmGroup && gvk.Kind == "HelmRelease":
			res.Flux, res.FluxCounted = true, true
			target := targetNamespace(u)
			if target != "" && !validNamespace(target) {
				invalid++
				continue
			}
			h := chartOfHelmRelease(u, target)
			helmCharts += b2i(h.helmChartRef)
			if h.chart != nil {
				res.keepValues(*h.chart, helmReleaseValues(u))
			}
			switch {
			case h.ociRef != "":
				pending = append(pending, h)
			case h.chart != nil:
				res.Charts = append(res.Charts, *h.chart)
			}
		case gvk.Group == sourceGroup && gvk.Kind == "OCIRepository":
			repos[u.GetNamespace()+"/"+u.GetName()] = u
		case gvk.Group == sourceGroup && gvk.Kind == "HelmRepository":
			helmRepos[u.GetNamespace()+"/"+u.GetName()] = helmRepositoryURL(u)
		}
	}
	if invalid > 0 {
		res.gap(false, fmt.Sprintf("%d Application(s) or HelmRelease(s) name a target that is no namespace name", invalid))
	}
	if helmCharts > 0 {
		res.gap(true, fmt.Sprintf("%d Flux HelmRelease(s) reference a HelmChart, which names no chart", helmCharts))
	}
	var unresolved []string
	for _, h := range pending {
		if repo, ok := repos[h.ociRef]; ok && applyOCIRepository(h.chart, repo) {
			res.Charts = append(res.Charts, *h.chart)
			continue
		}
		unresolved = append(unresolved, h.ociRef)
	}
	if len(unresolved) > 0 {
		sort.Strings(unresolved)
		res.gap(true, fmt.Sprintf("%d Flux chartRef(s) to an OCIRepository not among the files (first: %s)", len(unresolved), unresolved[0]))
	}
	applyHelmRepositories(&res, res.Charts, helmRepos)
	sort.Slice(res.Charts, func(i, j int) bool { return chartLess(res.Charts[i], res.Charts[j]) })
	return res
}
