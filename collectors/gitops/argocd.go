package gitops

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/inventory"
)

// inClusterServers are the destination servers that mean "this cluster" to Argo CD.
var inClusterServers = map[string]bool{
	"https://kubernetes.default.svc":                   true,
	"https://kubernetes.default.svc:443":               true,
	"https://kubernetes.default.svc.cluster.local":     true,
	"https://kubernetes.default.svc.cluster.local:443": true,
}

// appCharts is what one Application declares for this cluster.
type appCharts struct {
	charts           []inventory.GitopsChart
	values           []ChartValues // values[i] are what charts[i] renders with
	otherCluster     bool
	invalidNamespace bool
}

// fromApplication reads the charts of an argoproj.io/v1alpha1 Application: every source that
// sets chart, and every oci:// source without one that is not a ref-only values source.
func fromApplication(app *unstructured.Unstructured) appCharts {
	if !destinationIsThisCluster(app) {
		return appCharts{otherCluster: true}
	}
	return chartsOfApplication(app)
}

// chartsOfApplication reads an Application's charts whatever its destination.
func chartsOfApplication(app *unstructured.Unstructured) appCharts {
	target, _, _ := unstructured.NestedString(app.Object, "spec", "destination", "namespace")
	if target != "" && !validNamespace(target) {
		return appCharts{invalidNamespace: true}
	}
	var out appCharts
	for _, src := range applicationSources(app) {
		if c, ok := chartOfSource(src); ok {
			c.Tool = inventory.ToolArgoCD
			c.Namespace, c.Name, c.TargetNamespace = app.GetNamespace(), app.GetName(), target
			out.charts = append(out.charts, c)
			out.values = append(out.values, applicationValues(app, src))
		}
	}
	return out
}

// keep adds a's charts and their values to res.
func (a appCharts) keep(res *Result) {
	res.Charts = append(res.Charts, a.charts...)
	for i, c := range a.charts {
		res.keepValues(c, a.values[i])
	}
}

func destinationIsThisCluster(app *unstructured.Unstructured) bool {
	server, _, _ := unstructured.NestedString(app.Object, "spec", "destination", "server")
	name, _, _ := unstructured.NestedString(app.Object, "spec", "destination", "name")
	if server != "" {
		return inClusterServers[strings.TrimRight(strings.TrimSpace(server), "/")]
	}
	return name == "in-cluster"
}

// applicationSources are spec.sources, or spec.source when sources is empty, as Argo CD reads
// them.
func applicationSources(app *unstructured.Unstructured) []map[string]any {
	var out []map[string]any
	list, _, _ := unstructured.NestedSlice(app.Object, "spec", "sources")
	for _, s := range list {
		if m, ok := s.(map[string]any); ok {
			out = append(out, m)
		}
	}
	if len(out) > 0 {
		return out
	}
	if m, ok, _ := unstructured.NestedMap(app.Object, "spec", "source"); ok {
		out = append(out, m)
	}
	return out
}

func chartOfSource(src map[string]any) (inventory.GitopsChart, bool) {
	repo := SanitizeURL(stringField(src, "repoURL"))
	revision := strings.TrimSpace(stringField(src, "targetRevision"))
	c := inventory.GitopsChart{RepoURL: repo, Version: revision, VersionKind: versionKind(revision)}
	if chart := strings.TrimSpace(stringField(src, "chart")); chart != "" {
		c.Chart, c.SourceKind = chart, "helm"
		if _, oci := cutPrefixFold(repo, "oci://"); oci {
			c.SourceKind = "oci"
		}
		return c, true
	}
	if _, oci := cutPrefixFold(repo, "oci://"); !oci || onlyRef(src) {
		return inventory.GitopsChart{}, false
	}
	// A native OCI source: Argo CD reads a Helm chart from it (path "."). One holding plain
	// manifests cannot be told from a chart here, so it is read as one: that over-reports the
	// assessment gap, the safe direction.
	c.Chart, c.SourceKind = ociChartName(repo), "oci"
	return c, c.Chart != ""
}

// onlyRef is a multi-source entry that only supplies values files to another source's chart.
func onlyRef(src map[string]any) bool {
	if stringField(src, "ref") == "" {
		return false
	}
	for _, renders := range []string{"path", "helm", "kustomize", "directory", "plugin"} {
		if _, set := src[renders]; set {
			return false
		}
	}
	return true
}

func stringField(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}
