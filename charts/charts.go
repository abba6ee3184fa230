// Package charts joins collection to the chart advisor: it turns the inventory's Helm
// releases and GitOps charts, with the values collected beside them (which never enter the
// inventory), into the advisor's subjects, and records the advice in the inventory, where the
// engine reads the fix of each blocking chart.
package charts

import (
	"context"
	"path"
	"sort"
	"strings"

	"github.com/upgradescope/upgradescope/charts/advisor"
	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/inventory"
)

// Values are the user-supplied values collected beside an inventory. They can hold secrets:
// they are handed to the advisor to render with and go nowhere else.
type Values struct {
	// Helm are Helm releases' values by "namespace/name" (cluster.Collector.ReleaseValues).
	Helm map[string]map[string]any
	// GitOps are the values GitOps objects declare, by gitops.ValuesKey.
	GitOps map[string]gitops.ChartValues
	// Credentials are the repository credentials the GitOps objects name, read live; nil in
	// files mode. The reader is handed Credentials.Lookup; Advise adds to an unread chart's
	// reason which Secret could not be read.
	Credentials *Credentials
}

// Advise asks the advisor about every chart of doc Subjects names and sets doc.ChartAdvice.
// A repository that could not be read is said in that chart's advice, never an error: the
// findings then stay as they are.
func Advise(ctx context.Context, doc *inventory.Document, values Values, opts advisor.Options) {
	subjects := Subjects(doc, values)
	if len(subjects) == 0 {
		return
	}
	advice := advisor.Advise(ctx, subjects, opts)
	noteUnread(advice, values.Credentials)
	doc.ChartAdvice, doc.ChartAdviceOmitted = advisor.Bound(advice)
}

// Subjects are the charts the advisor can judge, in a stable order, at most
// inventory.MaxChartAdvice: every Helm release with a chart version, and every GitOps chart
// declared at an exact version in a Helm or OCI repository. A range, a digest or a Git
// source names no version to start from, and is not advised; nor is an Argo CD Application
// with more than one chart source (chartsPerObject says why). A Flux HelmRelease that
// manages a Helm release of this inventory is advised once, as that release, from the Flux
// repository.
func Subjects(doc *inventory.Document, values Values) []advisor.Subject {
	var out []advisor.Subject
	releases := map[string]int{} // "namespace/name" → index in out
	for _, r := range doc.HelmReleases {
		if r.Chart == "" || r.ChartVersion == "" {
			continue
		}
		key := r.Namespace + "/" + r.Name
		releases[key] = len(out)
		out = append(out, advisor.Subject{
			Source: inventory.ChartSourceHelm, Namespace: r.Namespace, Name: r.Name,
			Chart: r.Chart, Version: r.ChartVersion, AppVersion: r.AppVersion, KubeVersion: r.KubeVersion,
			Values: values.Helm[key], InstalledAPIs: inventory.APINames(r.ManifestAPIs),
		})
	}
	charts := chartsPerObject(doc.GitopsCharts)
	for _, c := range doc.GitopsCharts {
		key := gitops.ValuesKey(c.Tool, c.Namespace, c.Name)
		if charts[key] > 1 {
			continue
		}
		v := values.GitOps[key]
		repository, ok := repositoryOf(c, v)
		if !ok {
			continue
		}
		if i, managed := releases[v.ReleaseNamespace+"/"+v.ReleaseName]; managed && c.Tool == inventory.ToolFlux && out[i].Chart == c.Chart {
			out[i].Repository = repository
			continue
		}
		if c.VersionKind != inventory.VersionExact {
			continue
		}
		out = append(out, advisor.Subject{
			Source: c.Tool, Namespace: c.Namespace, Name: c.Name, Chart: c.Chart, Version: c.Version,
			Repository: repository, Values: v.Values, ValuesNotRead: v.NotRead,
			ReleaseName: v.ReleaseName, ReleaseNamespace: c.TargetNamespace,
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return subjectKey(out[i]) < subjectKey(out[j]) })
	if len(out) > inventory.MaxChartAdvice {
		out = out[:inventory.MaxChartAdvice]
	}
	return out
}

// chartsPerObject counts the charts each GitOps object declares, by gitops.ValuesKey. An
// Argo CD Application with more than one chart source is not advised: the values collected
// and the advice's key (source, namespace, name) are per Application, so a second chart would
// render at the first one's values and its advice could be shown on the other's finding.
func chartsPerObject(charts []inventory.GitopsChart) map[string]int {
	n := map[string]int{}
	for _, c := range charts {
		n[gitops.ValuesKey(c.Tool, c.Namespace, c.Name)]++
	}
	return n
}

// repositoryOf is where a GitOps chart's versions are read, as the repository reader names
// it: a Helm repository's URL, or the OCI path the chart is pushed under. Git and bucket
// sources have none.
func repositoryOf(c inventory.GitopsChart, v gitops.ChartValues) (string, bool) {
	url := c.RepoURL
	if url == "" {
		url = v.RepoURL
	}
	switch c.SourceKind {
	case "helm", "HelmRepository":
		// Argo CD writes a Helm repository served over OCI without a scheme
		// ("registry-1.docker.io/bitnamicharts", with chart and a repository Secret that
		// sets enableOCI); a classic repository always has http(s)://.
		if c.Tool == inventory.ToolArgoCD && url != "" && !strings.Contains(url, "://") {
			return "oci://" + url, true
		}
		return url, url != ""
	case "oci", "OCIRepository":
		// A Flux OCIRepository, and an Argo CD OCI source without chart, name the chart's
		// own path, whose last element is the chart.
		if strings.HasPrefix(url, "oci://") && path.Base(url) == c.Chart {
			url = strings.TrimSuffix(url, "/"+c.Chart)
		}
		return url, strings.HasPrefix(url, "oci://") && strings.Count(url, "/") > 2
	}
	return "", false
}

func subjectKey(s advisor.Subject) string { return s.Source + "/" + s.Namespace + "/" + s.Name }
