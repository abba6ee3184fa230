package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// The default bounds of one evaluation. The largest evaluation the benchmarks know (a
// 2,000-node cluster judged for four targets) takes under 0.1 s and allocates 14 MB
// (docs/performance.md): a margin of fifty times in time and nine in memory, while a rule
// that runs away still ends in seconds, under 256 MiB of RSS for the whole process.
const (
	DefaultTimeout = 5 * time.Second
	DefaultMemory  = 128 << 20
)

// Limits bound each evaluation: Timeout its wall time, Memory the bytes the heap may grow by
// while it runs. Zero means the default.
type Limits struct {
	Timeout time.Duration
	Memory  uint64
}

// WithLimits bounds every evaluation, the one New runs to probe the bundles included.
func WithLimits(l Limits) Option { return func(c *config) { c.limits = l } }

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	return l
}

// Limit names the bound an evaluation crossed.
type Limit string

const (
	LimitTimeout Limit = "timeout"
	LimitMemory  Limit = "memory"
)

// LimitError is an evaluation stopped at one of its Limits. It names the custom pack whose
// rule was running, and where, so its author knows what to fix; an evaluation stopped in the
// built-in rules has no Pack.
type LimitError struct {
	Limit Limit
	// Bound is the limit as set: "5s", "128 MiB"; for a builtin call, its share ("16 MiB").
	Bound string
	// Pack is the custom pack's name (upgradescope.custom.<name>), "" for the built-in rules.
	// Two packs whose bundles hold a module of the same path are both named: "a or b".
	Pack string
	// At is the file:row of the innermost expression of Pack being evaluated.
	At string
	// Builtin is the builtin refused before it ran because it would have built more than
	// Bound in one call (a memory limit: the share is an eighth of Limits.Memory).
	Builtin string
	// Input is, for the built-in rules stopped at a bound, what in the evaluation's input is
	// large; nil when nothing is.
	Input *LargeInput
}

// WithLimitFlag adds to err, when it is an evaluation stopped at a bound, the flag that
// raises that bound: every command that evaluates (scan, eval, agent, serve, mcp) takes the
// same two, --policy-timeout and --policy-memory. Any other error is returned as it is.
func WithLimitFlag(err error) error {
	var le *LimitError
	if !errors.As(err, &le) {
		return err
	}
	flag := "--policy-timeout"
	if le.Limit == LimitMemory {
		flag = "--policy-memory"
	}
	return fmt.Errorf("%w (%s)", err, flag)
}

func (e *LimitError) Error() string {
	who := "built-in rules"
	if e.Pack != "" {
		who = fmt.Sprintf("policy pack %q", e.Pack)
	}
	if e.At != "" {
		who += " (" + e.At + ")"
	}
	if e.Builtin != "" {
		return fmt.Sprintf("%s: %s would build more than %s in one call", who, e.Builtin, e.Bound)
	}
	what := e.Bound
	if e.Limit == LimitMemory {
		what += " of heap"
	}
	if e.Input != nil {
		what += " over " + e.Input.String()
	}
	return fmt.Sprintf("%s: evaluation exceeded %s", who, what)
}

// errTimedOut and errOverMemory are the causes the guard cancels an evaluation with, so a
// cancellation by the caller (a signal, a shutdown) is not taken for a bound.
var (
	errTimedOut   = errors.New("evaluation timed out")
	errOverMemory = errors.New("evaluation over its memory bound")
)

// heapSampleEvery is how often the guard reads the heap: a rule overshoots the bound by
// what it allocates in that time, a few MB at most.
const heapSampleEvery = 5 * time.Millisecond

// heapMetric counts live objects and garbage not yet swept: what the heap holds now, read
// without stopping the world (runtime.ReadMemStats would stop it).
const heapMetric = "/memory/classes/heap/objects:bytes"

// guard derives the context an evaluation runs under: cancelled at the deadline and when the
// heap has grown by more than the memory bound since the evaluation started. OPA checks the
// context before every expression and inside the builtins that build large values
// (numbers.range), so either stops a runaway rule within milliseconds. stop must be called.
func (l Limits) guard(ctx context.Context) (context.Context, func()) {
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, l.Timeout, errTimedOut)
	ctx, stop := GuardHeap(ctx, l.Memory)
	return ctx, func() {
		stop()
		cancelTimeout()
	}
}

// GuardHeap is Evaluate's memory guard for evaluations the engine does not run itself
// (policy test's): the context is cancelled once the heap has grown by more than limit
// bytes, and OverMemory then says so. It also bounds what one builtin call may build to an
// eighth of limit, which the guard could not interrupt (see BuildLimitError). stop must be
// called.
func GuardHeap(ctx context.Context, limit uint64) (guarded context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(withCallBudget(ctx, limit))
	go watchHeap(ctx, limit, func() { cancel(errOverMemory) })
	return ctx, func() { cancel(nil) }
}

// OverMemory says whether ctx, from GuardHeap, was cancelled by its guard.
func OverMemory(ctx context.Context) bool { return context.Cause(ctx) == errOverMemory }

// watchHeap calls over once the heap has grown by more than limit bytes, or returns when ctx
// is done.
func watchHeap(ctx context.Context, limit uint64, over func()) {
	sample := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	tick := time.NewTicker(heapSampleEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			metrics.Read(sample)
			if now := sample[0].Value.Uint64(); now > base && now-base > limit && !garbage(sample, base, limit) {
				over()
				return
			}
		}
	}
}

// garbage collects and says whether the heap is back within the bound: the metric counts
// garbage not yet swept, and a process with a large live heap (an agent's caches) lets the
// garbage of a legitimate evaluation grow past the bound before the collector runs. Only a
// heap that stays past the bound once collected is a rule running away.
func garbage(sample []metrics.Sample, base, limit uint64) bool {
	runtime.GC()
	metrics.Read(sample)
	now := sample[0].Value.Uint64()
	return now <= base || now-base <= limit
}

// limitError turns an evaluation error caused by the guard into a LimitError naming the pack
// from the stack OPA recorded; any other error is returned as it is.
func (e *Engine) limitError(ctx context.Context, err error) error {
	var ble *BuildLimitError
	if errors.As(err, &ble) {
		le := &LimitError{Limit: LimitMemory, Bound: mebibytes(ble.Bound), Builtin: ble.Builtin}
		if ble.Location != nil {
			le.Pack, le.At = e.packs.find(topdown.StackTrace{{Location: ble.Location}})
		}
		return le
	}
	var l Limit
	var bound string
	switch context.Cause(ctx) {
	case errTimedOut:
		l, bound = LimitTimeout, e.limits.Timeout.String()
	case errOverMemory:
		l, bound = LimitMemory, fmt.Sprintf("%d MiB", e.limits.Memory>>20)
	default:
		return err
	}
	le := &LimitError{Limit: l, Bound: bound}
	var te *topdown.Error
	if errors.As(err, &te) {
		le.Pack, le.At = e.packs.find(te.StackTrace)
	}
	return le
}

// packFiles maps the file of each custom module, as OPA's locations spell it, to its pack.
type packFiles map[string]string

// addBundle records the modules of a custom bundle under the pack their package names.
func (p packFiles) addBundle(l loaded) {
	for _, m := range l.b.Modules {
		if m.Parsed == nil || m.Parsed.Package.Location == nil {
			continue
		}
		name, file := customPack(m.Parsed.Package.Path), m.Parsed.Package.Location.File
		switch prev, seen := p[file]; {
		case name == "" || prev == name:
		case seen:
			// Two bundles may each hold a /rules.rego: name both rather than the wrong one.
			p[file] = prev + " or " + name
		default:
			p[file] = name
		}
	}
}

// customPack is <name> of a package upgradescope.custom.<name>[.…], else "".
func customPack(path ast.Ref) string {
	if len(path) < 4 || path[1].Value.Compare(ast.String("upgradescope")) != 0 ||
		path[2].Value.Compare(ast.String("custom")) != 0 {
		return ""
	}
	s, _ := path[3].Value.(ast.String)
	return string(s)
}

// find is the pack of the innermost frame in a custom module, and that frame's file:row.
func (p packFiles) find(st topdown.StackTrace) (string, string) {
	for _, f := range st {
		if f.Location == nil {
			continue
		}
		if name, ok := p[f.Location.File]; ok {
			return name, fmt.Sprintf("%s:%d", f.Location.File, f.Location.Row)
		}
	}
	return "", ""
}
