package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/upgradescope/upgradescope/charts"
	"github.com/upgradescope/upgradescope/charts/advisor"
	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/progress"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// chartFlags turn on the chart advisor (--advise-charts), which reads chart repositories
// over the network, and say where and how.
type chartFlags struct {
	advise, offline  bool
	cacheDir         string
	timeout          time.Duration
	repositoryConfig string
	repositories     map[string]string
	flags            *pflag.FlagSet
}

// adviseOnly are the flags that mean nothing without --advise-charts.
var adviseOnly = []string{"chart-offline", "chart-repo-cache", "chart-repository", "chart-timeout", "helm-repository-config"}

// check refuses a chart flag given without --advise-charts, which would otherwise be ignored
// and leave the user thinking the charts were advised offline or from their repository, and
// a --helm-repository-config that names no file: every Helm release would be "not read" for
// a typo (Helm's own default may be absent: no repository added yet).
func (f *chartFlags) check() error {
	if f.flags == nil {
		return nil
	}
	if !f.advise {
		for _, name := range adviseOnly {
			if f.flags.Changed(name) {
				return fmt.Errorf("--%s is only used with --advise-charts: add --advise-charts or drop --%s", name, name)
			}
		}
		return nil
	}
	if f.repositoryConfig != "" {
		if _, err := os.Stat(f.repositoryConfig); err != nil {
			return fmt.Errorf("--helm-repository-config: %w", err)
		}
	}
	return nil
}

func (f *chartFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	f.flags = fl
	// Checked before the command collects anything (the agent: before it starts).
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if pre != nil {
			if err := pre(cmd, args); err != nil {
				return err
			}
		}
		return f.check()
	}
	fl.BoolVar(&f.advise, "advise-charts", false, "read the chart repositories of Helm releases and GitOps charts and name, for each that blocks, the lowest chart version that works at the target (reaches the network; docs/charts.md)")
	fl.StringVar(&f.cacheDir, "chart-repo-cache", "", "directory keeping chart repository indexes and archives between runs (default: $XDG_CACHE_HOME/upgradescope/charts)")
	fl.BoolVar(&f.offline, "chart-offline", false, "read chart repositories from --chart-repo-cache only, never the network (air-gapped clusters)")
	fl.DurationVar(&f.timeout, "chart-timeout", 30*time.Second, "limit for one chart repository read (an index, a tag list, one chart archive)")
	fl.StringToStringVar(&f.repositories, "chart-repository", nil, "CHART=URL: where a Helm release of CHART is read (https://… or oci://registry/path), before Helm's repositories.yaml; repeatable; needed for charts installed from an OCI registry")
	fl.StringVar(&f.repositoryConfig, "helm-repository-config", "", "Helm's repositories.yaml, where a Helm release's chart repository is looked for (default: Helm's, $HELM_REPOSITORY_CONFIG)")
}

// reader builds the repository reader the flags describe; creds names the credentials the
// GitOps objects name for repositories Helm's configuration does not.
func (f *chartFlags) reader(creds func(string) (repo.Credentials, bool)) (*repo.Reader, error) {
	if f.timeout <= 0 {
		return nil, fmt.Errorf("--chart-timeout %s: want a positive duration", f.timeout)
	}
	dir := f.cacheDir
	if dir == "" {
		var err error
		if dir, err = repo.DefaultCacheDir(); err != nil {
			return nil, fmt.Errorf("no cache directory for chart repositories: pass --chart-repo-cache DIR: %w", err)
		}
	}
	return repo.New(repo.Options{CacheDir: dir, Offline: f.offline, Timeout: f.timeout, RepositoryConfig: f.repositoryConfig, Credentials: creds})
}

// run advises doc's charts at targets with eng, the engine the scan judges with, and shows
// the step on rep. A repository that cannot be read is said in the advice, not here.
func (f *chartFlags) run(ctx context.Context, rep *progress.Reporter, eng *engine.Engine, doc *inventory.Document, values charts.Values, targets []string, now time.Time) error {
	if !f.advise {
		return nil
	}
	if len(targets) == 0 {
		return fmt.Errorf("--advise-charts needs a target: pass --target")
	}
	r, err := f.reader(values.Credentials.Lookup)
	if err != nil {
		return err
	}
	rep.Start("advising charts")
	charts.Advise(ctx, doc, values, advisor.Options{Targets: targets, Engine: eng, Now: now, Repository: r, Repositories: f.repositories})
	rep.Done(adviceSummary(doc.ChartAdvice))
	return nil
}

// adviceSummary is the progress line: "3 charts, 1 repository not read".
func adviceSummary(advice []inventory.ChartAdvice) string {
	unread := 0
	for _, a := range advice {
		if !a.Read {
			unread++
		}
	}
	s := report.Count(len(advice), "chart")
	if unread > 0 {
		s += fmt.Sprintf(", %d not read", unread)
	}
	return s
}

// adviseTargets are the minors the advisor judges at: the scan's targets, or with --plan
// every hop of the plan.
func (f *judgeFlags) adviseTargets(doc *inventory.Document, j *judgement) ([]string, error) {
	if !f.plan {
		return j.targets, nil
	}
	_, hops, err := planHops(f.from, doc.ServerVersion, j.targets)
	return hops, err
}

// agentReaderTTL is how long the agent keeps one repository reader. A reader reads each
// index once and remembers a failure for its life: kept for ever, it would never see a new
// chart version or a repository come back; made anew every tick, it would download every
// index every tick. The cache directory carries the archives across readers.
const agentReaderTTL = time.Hour

// forAgent is the agent's advisor, nil without --advise-charts.
func (f *chartFlags) forAgent(log *slog.Logger) (func(context.Context, *engine.Engine, *inventory.Document, charts.Values, []string, time.Time), error) {
	if !f.advise {
		return nil, nil
	}
	// The reader outlives a tick; the credentials are each tick's, read with its collection.
	var creds atomic.Pointer[charts.Credentials]
	lookup := func(repository string) (repo.Credentials, bool) { return creds.Load().Lookup(repository) }
	r, err := f.reader(lookup)
	if err != nil {
		return nil, err
	}
	made := time.Now()
	return func(ctx context.Context, eng *engine.Engine, doc *inventory.Document, values charts.Values, targets []string, now time.Time) {
		creds.Store(values.Credentials)
		if time.Since(made) > agentReaderTTL {
			if fresh, err := f.reader(lookup); err == nil {
				r, made = fresh, time.Now()
			}
		}
		charts.Advise(ctx, doc, values, advisor.Options{Targets: targets, Engine: eng, Now: now, Repository: r, Repositories: f.repositories})
		log.Info("charts advised", "charts", adviceSummary(doc.ChartAdvice))
	}, nil
}
