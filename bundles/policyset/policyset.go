// Package policyset is the bundle set an agent or a server evaluates with: the engine
// options and bundles given at start, plus the bundles a poller delivers later, compiled
// into a new engine off the evaluating goroutines and swapped in atomically.
package policyset

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// Revision names a bundle of the active set. ActivatedAt is when the set first evaluated
// with this name, source and revision.
type Revision struct {
	Name, Revision, Source string
	ActivatedAt            time.Time
}

// Update is the outcome of the last poll that activated or failed: Err is empty once an
// update succeeds again.
type Update struct {
	Err string
	At  time.Time
}

// Base is what every set is built from: engine options (limits, tool version) and the
// bundles given at start (--bundle).
type Base struct {
	Options []engine.Option
	Bundles []*bundles.Fetched
}

// Monitor is told what a set does, for metrics: the revisions active after each swap, and
// each poll's result.
type Monitor interface {
	Active(revs []Revision)
	Observed(src, result string, failing bool)
}

// Set is the bundle set to evaluate with. A reader calls Engine once per unit of work (a
// tick, a request), so a swap lands between two of them and an evaluation in flight
// finishes on the engine it started with. Set is safe for concurrent use.
type Set struct {
	current atomic.Pointer[activeSet]
	base    Base
	now     func() time.Time // stamps activations and updates

	// last is the most recent inventory judged and its targets: a new set must judge it
	// before it is swapped in, so a pack that breaks the findings contract on real data is
	// refused rather than failing every evaluation after it.
	last atomic.Pointer[judged]

	mu      sync.Mutex // serialises activations and guards what follows
	polled  map[string]*bundle.Bundle
	polling bool
	update  Update
	monitor Monitor
	onSwap  func(*engine.Engine)
}

type judged struct {
	doc     *inventory.Document
	targets []string
}

type activeSet struct {
	eng     *engine.Engine
	bundles []Revision
}

// New builds the first engine from base: the embedded bundles, with each of base.Bundles
// replacing the built-in of its roots or added beside them.
func New(ctx context.Context, base Base) (*Set, error) {
	s := &Set{base: base, now: time.Now, polled: map[string]*bundle.Bundle{}}
	eng, err := s.build(ctx, nil, nil)
	if err != nil {
		return nil, err
	}
	s.swap(eng, nil)
	return s, nil
}

// Attach makes m the set's monitor and tells it the active revisions at once.
func (s *Set) Attach(m Monitor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.monitor = m
	m.Active(s.current.Load().bundles)
}

// OnSwap makes f be called with every engine activated from now on, after it became
// current and before the next activation starts (a server hands it to its requests).
func (s *Set) OnSwap(f func(*engine.Engine)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onSwap = f
}

// Engine is the engine to evaluate with now, and the revisions it holds.
func (s *Set) Engine() (*engine.Engine, []Revision) {
	a := s.current.Load()
	return a.eng, a.bundles
}

// Activate compiles the set with f in place of the previous bundle from its source and of
// a bundle given at start with its roots (--bundle, then updates polled), rehearses it on
// the last inventory remembered and swaps it in. On error the previous engine stays. A
// bundle with the roots another polled source holds is refused naming both: which of two
// files or URLs is newer is not the set's to guess, so each bundle is published under
// one name. It has the signature bundles.PollOptions.Activate wants.
func (s *Set) Activate(ctx context.Context, f *bundles.Fetched) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]*bundle.Bundle, len(s.polled)+1)
	for src, b := range s.polled {
		if src != f.Source && sameRoots(b, f.Bundle) {
			return fmt.Errorf("activate %s revision %s: %s already serves a bundle with its roots; publish each bundle under one name",
				f.Source, f.Bundle.Manifest.Revision, src)
		}
		next[src] = b
	}
	next[f.Source] = f.Bundle
	eng, err := s.build(ctx, next, nil)
	if err == nil {
		err = s.rehearse(ctx, eng)
	}
	if err != nil {
		return fmt.Errorf("activate %s revision %s: %w", f.Source, f.Bundle.Manifest.Revision, err)
	}
	s.polled = next
	s.swap(eng, s.current.Load())
	if s.onSwap != nil {
		s.onSwap(eng)
	}
	return nil
}

// WithCandidate builds, without activating it, the set with candidate in it: the base
// options and bundles and the polled bundles, less any bundle with candidate's roots,
// plus candidate (which replaces a built-in of its roots, or is added as a custom pack).
func (s *Set) WithCandidate(ctx context.Context, candidate *bundles.Fetched) (*engine.Engine, error) {
	s.mu.Lock()
	polled := make(map[string]*bundle.Bundle, len(s.polled))
	for src, b := range s.polled {
		if !sameRoots(b, candidate.Bundle) {
			polled[src] = b
		}
	}
	s.mu.Unlock()
	return s.build(ctx, polled, candidate)
}

// build compiles the base with polled, and candidate when set: a polled bundle or the
// candidate replaces the base bundle of its roots.
func (s *Set) build(ctx context.Context, polled map[string]*bundle.Bundle, candidate *bundles.Fetched) (*engine.Engine, error) {
	opts := slices.Clone(s.base.Options)
	for _, f := range s.base.Bundles {
		if !replaced(f.Bundle, polled, candidate) {
			opts = append(opts, engine.WithBundle(f.Source, f.Bundle, f.Signature))
		}
	}
	opts = append(opts, polledOptions(polled)...)
	if candidate != nil {
		opts = append(opts, engine.WithBundle(candidate.Source, candidate.Bundle, candidate.Signature))
	}
	return engine.New(ctx, opts...)
}

// replaced reports whether a polled bundle or the candidate has b's roots.
func replaced(b *bundle.Bundle, polled map[string]*bundle.Bundle, candidate *bundles.Fetched) bool {
	if candidate != nil && sameRoots(b, candidate.Bundle) {
		return true
	}
	for _, p := range polled {
		if sameRoots(b, p) {
			return true
		}
	}
	return false
}

// sameRoots reports whether two bundles own the same roots, so one replaces the other.
func sameRoots(a, b *bundle.Bundle) bool {
	roots := func(b *bundle.Bundle) []string {
		if b.Manifest.Roots == nil {
			return nil
		}
		return slices.Sorted(slices.Values(*b.Manifest.Roots))
	}
	return slices.Equal(roots(a), roots(b))
}

// Remember keeps an inventory just judged, and its targets, for the next activation to
// judge. doc must not be changed afterwards.
func (s *Set) Remember(doc *inventory.Document, targets []string) {
	if doc != nil && len(targets) > 0 {
		s.last.Store(&judged{doc: doc, targets: slices.Clone(targets)})
	}
}

// rehearse evaluates the last inventory remembered with a candidate engine.
func (s *Set) rehearse(ctx context.Context, eng *engine.Engine) error {
	j := s.last.Load()
	if j == nil {
		return nil
	}
	if _, err := eng.Evaluate(ctx, j.doc, j.targets, s.now()); err != nil {
		return fmt.Errorf("judging the last inventory: %w", err)
	}
	return nil
}

// polledOptions are the polled bundles in source order, so the same set always loads the
// same way. A polled bundle was verified by its poller.
func polledOptions(polled map[string]*bundle.Bundle) []engine.Option {
	srcs := make([]string, 0, len(polled))
	for src := range polled {
		srcs = append(srcs, src)
	}
	sort.Strings(srcs)
	opts := make([]engine.Option, len(srcs))
	for i, src := range srcs {
		opts[i] = engine.WithBundle(src, polled[src], report.SignatureVerified)
	}
	return opts
}

// swap makes eng current; a bundle whose name, source and revision are unchanged keeps the
// time it was first activated.
func (s *Set) swap(eng *engine.Engine, prev *activeSet) {
	at := s.now().UTC().Truncate(time.Second)
	since := map[string]time.Time{}
	if prev != nil {
		for _, b := range prev.bundles {
			since[b.Name+"\x00"+b.Source+"\x00"+b.Revision] = b.ActivatedAt
		}
	}
	var revs []Revision
	for _, b := range eng.Bundles() {
		r := Revision{Name: b.Name, Revision: b.Revision, Source: b.Source, ActivatedAt: at}
		if t, ok := since[b.Name+"\x00"+b.Source+"\x00"+b.Revision]; ok {
			r.ActivatedAt = t
		}
		revs = append(revs, r)
	}
	s.current.Store(&activeSet{eng: eng, bundles: revs})
	if s.monitor != nil {
		s.monitor.Active(revs)
	}
}

// Observed records a poll's result: the status and the metrics read it. It has the
// signature bundles.PollOptions.Observed wants.
func (s *Set) Observed(src, result string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polling = true
	switch {
	case err != nil:
		s.update = Update{Err: err.Error(), At: s.now()}
	case result == bundles.ResultActivated:
		s.update = Update{At: s.now()}
	}
	if s.monitor != nil {
		s.monitor.Observed(src, result, s.update.Err != "")
	}
}

// Describe lists revs as the logs name a set: "name revision, name revision".
func Describe(revs []Revision) string {
	parts := make([]string, len(revs))
	for i, r := range revs {
		parts[i] = r.Name + " " + r.Revision
	}
	return strings.Join(parts, ", ")
}

// Update is the last poll's outcome, or nil when nothing polls for the set.
func (s *Set) Update() *Update {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.polling {
		return nil
	}
	u := s.update
	return &u
}
