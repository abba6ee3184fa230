package rollout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// Cluster is one cluster of a dry run: where its inventory and its current judgement come
// from. A server reads both from its store; a directory of inventories judges the current
// side with the current bundle set.
type Cluster struct {
	Name string
	// Load answers the cluster's inventory and the targets it is judged at.
	Load func(ctx context.Context) (*inventory.Document, []string, error)
	// Before answers the cluster's current judgement at each target; a target without one
	// is left out of the map.
	Before func(ctx context.Context, doc *inventory.Document, targets []string, now time.Time) (map[string]*report.TargetResult, error)
}

// Options bound a dry run.
type Options struct {
	// Workers judge clusters at once (at least 1).
	Workers int
	// Budget bounds the whole run; clusters not judged by then are reported unfinished.
	Budget time.Duration
	// Now is the evaluation clock: both sides are judged at it.
	Now time.Time
	// Progress, when set, is called with each result as it is done, one call at a time.
	Progress func(outcome.Result)
	// Turn, when set, is taken before each candidate evaluation and its release called
	// after it: a server shares its evaluation slots with the pushes it takes this way.
	Turn func(ctx context.Context) (release func(), err error)
}

// errBudget marks a cluster the run had no time left for, errStopped one it was stopped
// before.
var (
	errBudget  = errors.New("not judged: the dry run's time budget ran out first")
	errStopped = errors.New("not judged: the dry run was stopped first")
)

// Run judges every cluster with candidate, the engine whose bundle set holds the candidate,
// and compares with its current judgement. Results are in the clusters' order.
func Run(ctx context.Context, clusters []Cluster, candidate *engine.Engine, opts Options) ([]outcome.Result, outcome.Summary) {
	if opts.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Budget)
		defer cancel()
	}
	results := make([]outcome.Result, len(clusters))
	jobs := make(chan int)
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for range max(opts.Workers, 1) {
		wg.Go(func() {
			for i := range jobs {
				res := judge(ctx, clusters[i], candidate, opts)
				results[i] = res
				if opts.Progress != nil {
					mu.Lock()
					opts.Progress(res)
					mu.Unlock()
				}
			}
		})
	}
	for i := range clusters {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return results, outcome.Summarize(results)
}

// judge runs one cluster; a run out of time says so rather than what the cancelled call
// failed with.
func judge(ctx context.Context, c Cluster, candidate *engine.Engine, opts Options) outcome.Result {
	res := outcome.Result{Cluster: c.Name, Targets: []outcome.Delta{}}
	fail := func(err error, byCandidate bool) outcome.Result {
		if ctx.Err() != nil {
			err, byCandidate = stopped(ctx), false
		}
		res.Error, res.Candidate = err.Error(), byCandidate
		return res
	}
	if ctx.Err() != nil {
		return fail(stopped(ctx), false)
	}
	doc, targets, err := c.Load(ctx)
	if err != nil {
		return fail(fmt.Errorf("read: %w", err), false)
	}
	if len(targets) == 0 {
		// Nothing judges this cluster, today or with the candidate: no delta to show.
		res.Skipped = "no target: the cluster's version is unknown and no target minor was given"
		return res
	}
	before, err := c.Before(ctx, doc, targets, opts.Now)
	if err != nil {
		return fail(fmt.Errorf("judge with the current bundles: %w", err), false)
	}
	if opts.Turn != nil {
		release, err := opts.Turn(ctx)
		if err != nil {
			return fail(fmt.Errorf("wait for an evaluation turn: %w", err), false)
		}
		defer release()
	}
	after, err := candidate.Evaluate(ctx, doc, targets, opts.Now)
	if err != nil {
		return fail(fmt.Errorf("judge with the candidate: %w", err), true)
	}
	for _, t := range after.Targets {
		res.Targets = append(res.Targets, Compare(before[t.Target], t))
	}
	return res
}

// stopped says why a cancelled run stopped: its budget, or its caller.
func stopped(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return errBudget
	}
	return errStopped
}
