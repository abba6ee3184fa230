// Package admission decides which work a fleet server runs and when: pushes, decodes,
// evaluations, the background re-evaluation, dry runs, report reads and what-ifs. Handlers
// and background loops ask a Turns for a turn and give it back with the release it
// answers; none of them sees the bounds behind it.
package admission

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Turns decides which work runs on this server and when; every handler and background loop
// asks it for a turn and gives the turn back with the release it answers. What a server
// keeps in memory only bounds its own work (correctness lives in the store), so these
// bounds are per process. The policy, every rule and why:
//
//  1. Pushes (Push): past authentication, a push waits for a turn of its credential's kind
//     and one of maxPushTurns in all (pushTurns: the shared --ingest-token's pushes
//     MaxPushesInFlight at once, the per-cluster tokens' MaxPushesInFlight together, one
//     at a time for each token). Each push holds its body, its decoded inventory and its
//     evaluation until it is answered, so this bounds the memory ingest may take; neither
//     kind can take every turn from the other.
//  2. Decodes (Decode, DecodeInBackground): validating and decoding JSON takes about eleven
//     times its size in memory, so decodes share a budget of one --max-snapshot-bytes, each
//     taking its size but at least half of it: two decodes run at once, a large one alone.
//     Work no one waits for (re-evaluation, dry runs, rehearsal) waits for its share like a
//     push, so it never adds a large decode to those of the pushes in flight.
//  3. Evaluations (Evaluation): two at once. A push waiting for one is counted, so the
//     background re-evaluation can see it.
//  4. Background re-evaluation (BackgroundEvaluation) takes an evaluation slot only while no
//     push waits for one and fewer pushes are past their turn than the process has cores:
//     pushes come first, the pass uses a core they leave idle, and one cluster at a time it
//     holds at most one slot, so a push never waits behind more than one re-evaluation.
//  5. Dry runs (DryRun): one at a time, since each takes two workers for minutes and reads
//     a body of up to bundles.MaxSize only once admitted. Its workers take evaluation slots
//     in line with pushes (DryRunEvaluation), bounded only by the run's budget.
//  6. Per-cluster report reads (Report): two stored reports or inventories decoded at once;
//     each may be tens of megabytes.
//  7. What-if evaluations (WhatIf: an unstored report, a team-scoped share, a gate): one at
//     a time, since nothing bounds what readers ask for.
//  8. Audit webhook batches (AuditBatch): MaxAuditBatchesInFlight read and counted at once,
//     each holding its body (at most --max-audit-batch-bytes) and its cluster's section. They
//     take no push's turn: an API server's batches, however many, never delay a push.
//
// A turn that cannot be had within its wait (slotWait, evalWait, whatIfWait, dryRunWait)
// is refused (a *Refusal: the server answers 503 with Retry-After) rather than queueing
// without bound; work no one waits for waits as long as its context lets it. Safe for
// concurrent use.
type Turns struct {
	pushes *pushTurns
	// decodes is a budget of bytes (decodeBudget) of JSON being decoded at once.
	decodes      *semaphore.Weighted
	decodeBudget int
	evals        *semaphore.Weighted
	reports      *semaphore.Weighted
	whatIfs      *semaphore.Weighted
	dryRuns      *semaphore.Weighted
	auditBatches *semaphore.Weighted
	// evalWaiters counts pushes waiting for an evaluation slot, pushesActive those past
	// their turn (reading, decoding, evaluating, storing): rule 4 reads both.
	evalWaiters  atomic.Int32
	pushesActive atomic.Int32
	// cores is how many pushes past their turn leave no core to the background (rule 4).
	cores func() int
}

// A Refusal is a turn not given within its wait: the server answers 503 with its message
// and Retry-After.
type Refusal struct{ msg string }

func (r *Refusal) Error() string { return r.msg }

var (
	// ErrBusy refuses a turn not free within its wait.
	ErrBusy = &Refusal{"the server is busy, retry later"}
	// ErrPushInFlight refuses a per-cluster token's second push at once: a cluster never
	// needs two.
	ErrPushInFlight = &Refusal{"a push of this cluster is already in progress, retry later"}
	// ErrDryRunBusy refuses a dry run while another runs.
	ErrDryRunBusy = &Refusal{"another dry run is in progress on this server, retry later"}
)

// Waits before work that cannot get its turn is refused (503 with Retry-After).
const (
	slotWait   = 10 * time.Second
	evalWait   = 20 * time.Second
	whatIfWait = 30 * time.Second
	// dryRunWait is how long a dry run waits for another one to finish.
	dryRunWait = 2 * time.Second
	// slotPoll is how often the background re-evaluation looks for a slot no push wants.
	slotPoll = 20 * time.Millisecond
)

// New is the policy for a server whose pushes are at most maxSnapshotBytes.
func New(maxSnapshotBytes int) *Turns {
	return &Turns{pushes: newPushTurns(), decodes: semaphore.NewWeighted(int64(maxSnapshotBytes)),
		decodeBudget: maxSnapshotBytes, evals: semaphore.NewWeighted(2), reports: semaphore.NewWeighted(2),
		whatIfs: semaphore.NewWeighted(1), dryRuns: semaphore.NewWeighted(1),
		auditBatches: semaphore.NewWeighted(MaxAuditBatchesInFlight),
		cores:        func() int { return runtime.GOMAXPROCS(0) }}
}

// Push admits a push, of the shared ingest token when tokenHash is "", else of the
// per-cluster token of that hash (rule 1); it counts as past its turn until released.
func (a *Turns) Push(ctx context.Context, tokenHash string) (release func(), err error) {
	turn, err := a.pushes.admit(ctx, tokenHash)
	if err != nil {
		return nil, err
	}
	a.pushesActive.Add(1)
	return func() {
		a.pushesActive.Add(-1)
		turn()
	}, nil
}

// Decode takes a push's share of the decode budget for size bytes of JSON (rule 2).
func (a *Turns) Decode(ctx context.Context, size int) (release func(), err error) {
	return take(ctx, a.decodes, a.decodeWeight(size), slotWait, ErrBusy)
}

// DecodeInBackground is Decode for work no one waits for: it waits as long as ctx lets it.
func (a *Turns) DecodeInBackground(ctx context.Context, size int) (release func(), err error) {
	w := a.decodeWeight(size)
	if err := a.decodes.Acquire(ctx, w); err != nil {
		return nil, err
	}
	return func() { a.decodes.Release(w) }, nil
}

func (a *Turns) decodeWeight(size int) int64 {
	return int64(min(max(size, a.decodeBudget/2), a.decodeBudget))
}

// Evaluation takes an evaluation slot for a push (rule 3).
func (a *Turns) Evaluation(ctx context.Context) (release func(), err error) {
	a.evalWaiters.Add(1)
	release, err = take(ctx, a.evals, 1, evalWait, ErrBusy)
	a.evalWaiters.Add(-1)
	return release, err
}

// BackgroundEvaluation takes an evaluation slot for the re-evaluation (rule 4), waiting as
// long as ctx lets it.
func (a *Turns) BackgroundEvaluation(ctx context.Context) (release func(), err error) {
	var poll *time.Ticker
	for a.evalWaiters.Load() > 0 || int(a.pushesActive.Load()) >= a.cores() || !a.evals.TryAcquire(1) {
		if poll == nil {
			poll = time.NewTicker(slotPoll)
			defer poll.Stop()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-poll.C:
		}
	}
	return func() { a.evals.Release(1) }, nil
}

// DryRun admits a dry run (rule 5).
func (a *Turns) DryRun(ctx context.Context) (release func(), err error) {
	return take(ctx, a.dryRuns, 1, dryRunWait, ErrDryRunBusy)
}

// DryRunEvaluation takes an evaluation slot for one candidate evaluation (rule 5). It waits
// in line with the pushes (the semaphore is first come, first served), never longer than
// the run's budget (ctx): a push waiting for a slot gets the next one a worker frees.
func (a *Turns) DryRunEvaluation(ctx context.Context) (release func(), err error) {
	if err := a.evals.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	return func() { a.evals.Release(1) }, nil
}

// Report takes a turn to decode a stored report or inventory for a read (rule 6).
func (a *Turns) Report(ctx context.Context) (release func(), err error) {
	return take(ctx, a.reports, 1, whatIfWait, ErrBusy)
}

// WhatIf takes the turn of an evaluation nothing stores (rule 7).
func (a *Turns) WhatIf(ctx context.Context) (release func(), err error) {
	return take(ctx, a.whatIfs, 1, whatIfWait, ErrBusy)
}

// MaxAuditBatchesInFlight bounds the audit webhook batches read and counted at once (rule 8).
const MaxAuditBatchesInFlight = 4

// AuditBatch admits an audit webhook batch (rule 8).
func (a *Turns) AuditBatch(ctx context.Context) (release func(), err error) {
	return take(ctx, a.auditBatches, 1, slotWait, ErrBusy)
}

// take takes n of sem, waiting at most wait, else fails with busy.
func take(ctx context.Context, sem *semaphore.Weighted, n int64, wait time.Duration, busy error) (func(), error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := sem.Acquire(ctx, n); err != nil {
		return nil, busy
	}
	return func() { sem.Release(n) }, nil
}

// Turns of pushes (pushTurns).
const (
	// MaxPushesInFlight bounds the pushes of one kind of credential read, decoded and
	// evaluated at once: the shared --ingest-token's, or the per-cluster tokens' together.
	// The others wait for a turn, then answer 503 with Retry-After.
	MaxPushesInFlight = 3
	// maxPushTurns bounds them in all: one more than either kind may hold, so neither kind
	// can take every turn from the other, however slowly its pushes are sent.
	maxPushTurns = MaxPushesInFlight + 1
)

// pushTurns admits pushes past authentication, each credential within its own bound and
// all of them within maxPushTurns: a per-cluster token one at a time, per-cluster tokens
// MaxPushesInFlight at once, and the shared token as many. A fleet pushing with one kind of
// token has the turns it always had; pushes of the other kind keep one while it holds all
// of its own (a slow client, a leaked token). A turn is held at most for the body's time
// (the server's --body-timeout) and the ingest's after it. Safe for concurrent use.
type pushTurns struct {
	all      *semaphore.Weighted
	shared   *semaphore.Weighted
	clusters *semaphore.Weighted
	mu       sync.Mutex
	busy     map[string]bool // per-cluster token hashes with a push in flight
}

func newPushTurns() *pushTurns {
	return &pushTurns{all: semaphore.NewWeighted(maxPushTurns), shared: semaphore.NewWeighted(MaxPushesInFlight),
		clusters: semaphore.NewWeighted(MaxPushesInFlight), busy: map[string]bool{}}
}

// admit takes a turn for a push of the per-cluster token tokenHash ("" for the shared
// token), waiting at most slotWait for each bound (ErrBusy past it), and answers what
// gives it back.
func (p *pushTurns) admit(ctx context.Context, tokenHash string) (release func(), err error) {
	var held []func()
	release = func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	if tokenHash != "" {
		if !p.claim(tokenHash) {
			return nil, ErrPushInFlight
		}
		held = append(held, func() { p.unclaim(tokenHash) })
	}
	kind := p.shared
	if tokenHash != "" {
		kind = p.clusters
	}
	for _, sem := range []*semaphore.Weighted{kind, p.all} {
		give, err := take(ctx, sem, 1, slotWait, ErrBusy)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, give)
	}
	return release, nil
}

// claim marks a per-cluster token as pushing; false when it already is.
func (p *pushTurns) claim(hash string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy[hash] {
		return false
	}
	p.busy[hash] = true
	return true
}

func (p *pushTurns) unclaim(hash string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.busy, hash)
}
