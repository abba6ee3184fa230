package advisor

import (
	"context"
	"fmt"
	"sync"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/upgradescope/upgradescope/charts/render"
	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/inventory"
)

// advisor is one Advise call's shared state.
type advisor struct {
	opts   Options
	served map[string]render.Served
}

// judgeInstalled judges every subject's installed version in one batch: a Helm release's
// stored manifest APIs as they are, a GitOps chart's declared version as it renders. With
// them it judges each subject's baseline: a release of the same chart with no version,
// appVersion, kubeVersion or API. What blocks the baseline (an add-on's retirement, whose
// registry entry names no line) blocks every version alike, so no version could fix it: those
// keys are left out of every version's Blocks (search.record), and their findings stay in
// the scan's report untouched. A Helm release no target blocks is done, with no advice.
func (a *advisor) judgeInstalled(ctx context.Context, searches []*search) {
	n := len(searches)
	versions := make([]inventory.ChartVersionJudged, 2*n)
	byTarget := make([]map[string][]string, 2*n)
	a.parallel(n, func(i int) {
		s := searches[i]
		if !s.gitops() {
			v := inventory.ChartVersionJudged{Version: s.subject.Version, AppVersion: s.subject.AppVersion, KubeVersion: s.subject.KubeVersion}
			v.APIs = sortedStrings(append([]string(nil), s.subject.InstalledAPIs...))
			versions[i] = v
			return
		}
		versions[i], byTarget[i] = a.fetchAndRender(ctx, s, s.subject.Version)
	})
	a.judge(ctx, append(searches[:n:n], searches...), versions, byTarget)
	for i, s := range searches {
		s.independent = versions[n+i].Blocks
		s.record(versions[i])
		installed := s.versions[0]
		s.advise = s.gitops() || len(installed.Blocks) > 0
		switch {
		case !s.advise:
			s.done = true
		case installed.Error != "":
			s.stop("the declared version could not be judged, so no other version was")
		case len(installed.Blocks) == 0:
			s.stop("")
		}
		if s.gitops() && installed.Error == "" {
			s.read = true
		}
	}
}

// readRepositories lists the versions each search may move to.
func (a *advisor) readRepositories(ctx context.Context, searches []*search) {
	a.parallel(len(searches), func(i int) {
		s := searches[i]
		if s.done {
			return
		}
		offered, err := a.versions(ctx, s)
		if err != nil {
			s.read = false
			s.stop(redactErr(err, s.ref.Repository))
			return
		}
		s.read = true
		s.setCandidates(offered)
	})
}

func (a *advisor) versions(ctx context.Context, s *search) ([]repo.Version, error) {
	if s.ref.Repository == "" {
		s.ref.Repository = a.opts.Repositories[s.subject.Chart]
	}
	if s.ref.Repository == "" {
		ref, err := a.opts.Repository.Locate(ctx, s.subject.Chart, s.subject.Version)
		if err != nil {
			return nil, fmt.Errorf("locate chart %s %s: %w", s.subject.Chart, s.subject.Version, err)
		}
		s.ref = ref
	}
	return a.opts.Repository.Versions(ctx, s.ref)
}

// searchRound fetches, renders and judges the next candidate of every search still going, in
// one batch, and says whether any was.
func (a *advisor) searchRound(ctx context.Context, searches []*search) bool {
	var going []*search
	var picked []string
	for _, s := range searches {
		if s.done {
			continue
		}
		if c, ok := s.next(a.opts.MaxVersions); ok {
			going = append(going, s)
			picked = append(picked, c.Version)
		}
	}
	if len(going) == 0 {
		return false
	}
	versions := make([]inventory.ChartVersionJudged, len(going))
	byTarget := make([]map[string][]string, len(going))
	a.parallel(len(going), func(i int) { versions[i], byTarget[i] = a.fetchAndRender(ctx, going[i], picked[i]) })
	a.judge(ctx, going, versions, byTarget)
	for i, s := range going {
		s.record(versions[i])
	}
	return true
}

// fetchAndRender reads one version of the subject's chart and renders it at every target:
// the APIs each target's render uses, and their union as the version's APIs. A failure is
// the version's Error and it is not judged.
func (a *advisor) fetchAndRender(ctx context.Context, s *search, version string) (inventory.ChartVersionJudged, map[string][]string) {
	v := inventory.ChartVersionJudged{Version: version}
	ch, err := a.opts.Repository.Chart(ctx, s.ref, version)
	if err != nil {
		v.Error = redactErr(fmt.Errorf("fetch chart %s %s: %w", s.subject.Chart, version, err), s.ref.Repository)
		return v, nil
	}
	v.AppVersion, v.KubeVersion = ch.Metadata.AppVersion, ch.Metadata.KubeVersion
	byTarget, err := a.render(ctx, ch, s)
	if err != nil {
		v.Error = redactErr(err, s.ref.Repository)
		return v, nil
	}
	var union []string
	for _, apis := range byTarget {
		union = append(union, apis...)
	}
	v.APIs = sortedStrings(union)
	return v, byTarget
}

// boundAPIs keeps the first inventory.MaxChartVersionAPIs APIs and counts the rest: the
// advice's bound, applied when it is written, after every API was judged.
func boundAPIs(apis []string) ([]string, int) {
	if len(apis) <= inventory.MaxChartVersionAPIs {
		return apis, 0
	}
	return apis[:inventory.MaxChartVersionAPIs], len(apis) - inventory.MaxChartVersionAPIs
}

// render renders ch at each target's capabilities: a chart choosing its APIs by
// .Capabilities renders differently at each, and each target is judged on its own render.
func (a *advisor) render(ctx context.Context, ch *chartv2.Chart, s *search) (map[string][]string, error) {
	out := make(map[string][]string, len(a.opts.Targets))
	rel := s.subject.release()
	for _, t := range a.opts.Targets {
		apis, err := render.APIs(ctx, ch, s.subject.Values, rel, t, a.served[t])
		if err != nil {
			return nil, err
		}
		out[t] = apis
	}
	return out, nil
}

// parallel runs f(0..n-1) on the advisor's workers.
func (a *advisor) parallel(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < a.opts.Workers && w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
