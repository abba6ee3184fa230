package advisor_test

import (
	"context"
	"fmt"
	"sync/atomic"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

// memRepo stands in for the network in the algorithm tests, which would otherwise each
// serve a repository and pay the Reader's reads: it holds charttest charts in
// memory and answers as charts/repo's Reader does (versions ascending, as the index states
// them). TestTheRealReaderServesTheAdvisor runs the advisor on loopback repositories.
type memRepo struct {
	url    string
	charts map[string][]charttest.Chart
	reads  atomic.Int64
	fail   error
}

func newMemRepo(charts ...charttest.Chart) *memRepo {
	r := &memRepo{url: "https://charts.example.test/stable", charts: map[string][]charttest.Chart{}}
	for _, c := range charts {
		r.charts[c.Name] = append(r.charts[c.Name], c)
	}
	return r
}

func (r *memRepo) Locate(_ context.Context, chart, version string) (repo.Ref, error) {
	r.reads.Add(1)
	if r.fail != nil {
		return repo.Ref{}, r.fail
	}
	return repo.Ref{Repository: r.url, Chart: chart}, nil
}

func (r *memRepo) Versions(_ context.Context, ref repo.Ref) ([]repo.Version, error) {
	r.reads.Add(1)
	if r.fail != nil {
		return nil, r.fail
	}
	var out []repo.Version
	for _, c := range r.charts[ref.Chart] {
		out = append(out, repo.Version{Version: c.Version, AppVersion: c.AppVersion, KubeVersion: c.KubeVersion, Known: true})
	}
	return out, nil
}

func (r *memRepo) Chart(_ context.Context, ref repo.Ref, version string) (*chartv2.Chart, error) {
	r.reads.Add(1)
	for _, c := range r.charts[ref.Chart] {
		if c.Version == version {
			return c.Build(), nil
		}
	}
	return nil, fmt.Errorf("chart %s %s not in %s", ref.Chart, version, ref.Repository)
}
