// Package advisor names, for each Helm release and GitOps chart a target blocks, the lowest
// chart version at or above the installed one that no rule blocks there: it reads the
// chart's repository, renders each candidate with the Helm SDK at the release's own values
// (charts/render) and lets the engine judge it, as it judges the cluster.
package advisor

import (
	"context"
	"sort"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/upgradescope/upgradescope/charts/render"
	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
)

// Subject is one chart to advise on: a Helm release, or the chart an Argo CD Application or
// Flux HelmRelease declares.
type Subject struct {
	// Source is inventory.ChartSourceHelm, ChartSourceArgoCD or ChartSourceFlux; Namespace
	// and Name name the release or the GitOps object.
	Source, Namespace, Name string
	// Chart and Version are the installed (Helm) or declared exact (GitOps) chart version.
	Chart, Version string
	// AppVersion and KubeVersion are a Helm release's; for GitOps they are read from the
	// declared version's chart.
	AppVersion, KubeVersion string
	// Repository is where the chart is read; "" for a Helm release, whose repository is
	// located among those Helm's configuration names (Repository.Locate).
	Repository string
	// Values are the user-supplied values the chart is rendered at: never logged or stored.
	Values map[string]any
	// ValuesNotRead names the parts of the values that could not be read ("valuesFrom"):
	// the advice records them, and the chart is judged without them.
	ValuesNotRead []string
	// InstalledAPIs are a Helm release's stored manifest APIs ("apiVersion Kind"); nil for
	// GitOps, whose declared version is rendered.
	InstalledAPIs []string
	// ReleaseName and ReleaseNamespace are what the chart renders as .Release.Name and
	// .Release.Namespace when they differ from Name and Namespace: a GitOps object deploys
	// its chart under its own release name into its target namespace.
	ReleaseName, ReleaseNamespace string
}

// release is the release the subject's chart renders as.
func (s Subject) release() render.Release {
	r := render.Release{Name: s.ReleaseName, Namespace: s.ReleaseNamespace}
	if r.Name == "" {
		r.Name = s.Name
	}
	if r.Namespace == "" {
		r.Namespace = s.Namespace
	}
	return r
}

// Repository reads chart repositories; *repo.Reader satisfies it. Versions lists them
// ascending by semver, and the advisor relies on that order.
type Repository interface {
	Versions(ctx context.Context, ref repo.Ref) ([]repo.Version, error)
	Chart(ctx context.Context, ref repo.Ref, version string) (*chartv2.Chart, error)
	Locate(ctx context.Context, chart, version string) (repo.Ref, error)
}

// Options configure Advise.
type Options struct {
	// Targets are every target of the scan and every hop of --plan.
	Targets []string
	// Engine judges each version: the same loaded bundles as the scan.
	Engine *engine.Engine
	Now    time.Time
	// Repository reads the charts.
	Repository Repository
	// Repositories name, by chart, where a Helm release of that chart is read, before
	// Repository.Locate looks among Helm's repositories: the only way to a chart installed
	// from an OCI registry, which Helm's repositories.yaml never lists.
	Repositories map[string]string
	// Workers fetch and render in parallel, and evaluate batches; 0 means 2.
	Workers int
	// MaxVersions bounds the versions judged per subject after the installed one; 0 means
	// inventory.MaxChartVersionsJudged-1.
	MaxVersions int
}

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = 2
	}
	if o.MaxVersions <= 0 || o.MaxVersions > inventory.MaxChartVersionsJudged-1 {
		o.MaxVersions = inventory.MaxChartVersionsJudged - 1
	}
	o.Targets = append([]string(nil), o.Targets...)
	sort.Strings(o.Targets)
	return o
}

// Advise judges each subject's installed version at every target and, where a target blocks
// it, searches the versions above it, in ascending order, for the lowest that no rule blocks
// at every target; the versions judged on the way show the lowest for each target. A Helm
// release no target blocks gets no advice and its repository is not read; a GitOps chart
// always gets one, since its declared version is judged only here. The result is sorted by
// source, namespace and name, and is the same for the same repositories, values and bundles.
//
// Candidates are never pre-releases unless the installed version is one; then any
// pre-release above it may be named, whatever its line, since a user on a release candidate
// has chosen that channel. A version whose kubeVersion admits none of the targets still
// blocked (once each target has its own lowest version: not every target) is passed over
// unfetched and unrecorded.
func Advise(ctx context.Context, subjects []Subject, opts Options) []inventory.ChartAdvice {
	opts = opts.withDefaults()
	a := &advisor{opts: opts, served: servedByTarget(opts.Engine.KB(), opts.Targets)}
	searches := make([]*search, len(subjects))
	for i, s := range subjects {
		searches[i] = newSearch(s, opts.Targets)
	}
	sort.Slice(searches, func(i, j int) bool { return searches[i].less(searches[j]) })
	a.judgeInstalled(ctx, searches)
	a.readRepositories(ctx, searches)
	for a.searchRound(ctx, searches) {
	}
	var out []inventory.ChartAdvice
	for _, s := range searches {
		if s.advise {
			out = append(out, s.advice())
		}
	}
	return out
}
