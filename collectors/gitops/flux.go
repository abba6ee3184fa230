package gitops

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/inventory"
)

// hrChart is what one HelmRelease declares, or why it declares nothing this scan can use.
type hrChart struct {
	chart            *inventory.GitopsChart
	otherCluster     bool // spec.kubeConfig: it deploys to another cluster
	invalidNamespace bool
	helmChartRef     bool // a chartRef to a HelmChart, which names no chart here
	// ociRef is the OCIRepository a chartRef points to (namespace/name), resolved afterwards.
	ociRef string
}

// fromHelmRelease reads a helm.toolkit.fluxcd.io HelmRelease's spec.chart.spec or spec.chartRef.
func fromHelmRelease(hr *unstructured.Unstructured) hrChart {
	if kc, ok, _ := unstructured.NestedFieldNoCopy(hr.Object, "spec", "kubeConfig"); ok && kc != nil {
		return hrChart{otherCluster: true}
	}
	target := targetNamespace(hr)
	if !validNamespace(target) {
		return hrChart{invalidNamespace: true}
	}
	return chartOfHelmRelease(hr, target)
}

// targetNamespace is where a HelmRelease installs: spec.targetNamespace, else its own.
func targetNamespace(hr *unstructured.Unstructured) string {
	target, _, _ := unstructured.NestedString(hr.Object, "spec", "targetNamespace")
	if target == "" {
		target = hr.GetNamespace()
	}
	return target
}

// chartOfHelmRelease reads the chart a HelmRelease declares, whatever cluster it targets.
func chartOfHelmRelease(hr *unstructured.Unstructured, target string) hrChart {
	base := inventory.GitopsChart{
		Tool: inventory.ToolFlux, Namespace: hr.GetNamespace(), Name: hr.GetName(), TargetNamespace: target,
	}
	if ref, ok, _ := unstructured.NestedMap(hr.Object, "spec", "chartRef"); ok {
		if stringField(ref, "kind") != "OCIRepository" {
			return hrChart{helmChartRef: true}
		}
		ns := stringField(ref, "namespace")
		if ns == "" {
			ns = hr.GetNamespace()
		}
		base.SourceKind = "OCIRepository"
		return hrChart{chart: &base, ociRef: ns + "/" + stringField(ref, "name")}
	}
	spec, _, _ := unstructured.NestedMap(hr.Object, "spec", "chart", "spec")
	chart := strings.TrimSpace(stringField(spec, "chart"))
	kind, _, _ := unstructured.NestedString(spec, "sourceRef", "kind")
	if kind == "GitRepository" || kind == "Bucket" {
		chart = lastPathElement(chart) // a path in the source; its last element names the chart
	}
	if chart == "" {
		return hrChart{}
	}
	version := strings.TrimSpace(stringField(spec, "version"))
	base.Chart, base.SourceKind, base.Version, base.VersionKind = chart, kind, version, versionKind(version)
	return hrChart{chart: &base}
}

// applyOCIRepository completes a chartRef's chart from its OCIRepository: the chart is the
// repository's last path element, and the version follows Flux's own precedence, digest over
// semver over tag. A digest is no chart version; a semver range stays a range; no ref at all
// (Flux follows latest) records none.
func applyOCIRepository(c *inventory.GitopsChart, repo *unstructured.Unstructured) bool {
	url, _, _ := unstructured.NestedString(repo.Object, "spec", "url")
	c.RepoURL = SanitizeURL(url)
	c.Chart = ociChartName(c.RepoURL)
	ref, _, _ := unstructured.NestedStringMap(repo.Object, "spec", "ref")
	switch {
	case strings.TrimSpace(ref["digest"]) != "":
		c.Version, c.VersionKind = strings.TrimSpace(ref["digest"]), inventory.VersionDigest
	case strings.TrimSpace(ref["semver"]) != "":
		c.Version = strings.TrimSpace(ref["semver"])
		c.VersionKind = versionKind(c.Version)
	case strings.TrimSpace(ref["tag"]) != "":
		c.Version = strings.TrimSpace(ref["tag"])
		if versionKind(c.Version) == inventory.VersionExact {
			c.VersionKind = inventory.VersionExact
		}
	}
	return c.Chart != ""
}
