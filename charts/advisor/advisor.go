// Package advisor is a PLACEHOLDER in branch i36-wire only, with the signatures the advisor
// helper announced, so that charts and the CLI compile; the real package replaces it.
package advisor

import (
	"context"
	"time"

	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
)

type Subject struct {
	Source, Namespace, Name string
	Chart, Version          string
	AppVersion, KubeVersion string
	Repository              string
	Values                  map[string]any
	ValuesNote              string
	InstalledAPIs           []string
}

type Repository = *repo.Reader

type Options struct {
	Targets              []string
	Engine               *engine.Engine
	Now                  time.Time
	Repository           Repository
	Workers, MaxVersions int
}

func Advise(ctx context.Context, subjects []Subject, opts Options) []inventory.ChartAdvice {
	out := make([]inventory.ChartAdvice, 0, len(subjects))
	for _, s := range subjects {
		out = append(out, inventory.ChartAdvice{Source: s.Source, Namespace: s.Namespace, Name: s.Name, Chart: s.Chart,
			Installed: s.Version, Reason: "placeholder advisor", Targets: opts.Targets})
	}
	return out
}
