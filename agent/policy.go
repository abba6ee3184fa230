package agent

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/bundle"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// Policy is the bundle set the agent evaluates with. A new bundle is compiled into a new
// engine on the poller's goroutine, off the tick path, and swapped in atomically; a tick
// reads the engine once when it starts, so a swap lands between ticks and an evaluation in
// flight finishes on the engine it started with.
type Policy struct {
	current atomic.Pointer[activeSet]
	// build makes an engine from the agent's fixed options plus the polled bundles.
	build func(ctx context.Context, polled []engine.Option) (*engine.Engine, error)
	now   func() time.Time

	// last is the most recent tick's inventory and targets: a new set must judge it before it
	// is swapped in, so a pack that breaks the findings contract on this cluster's data is
	// refused rather than failing every tick.
	last atomic.Pointer[judged]

	mu      sync.Mutex // serialises activations and guards what follows
	polled  map[string]*bundle.Bundle
	polling bool
	update  crd.BundleUpdate
	metrics *bundleMetrics
}

type judged struct {
	doc     *inventory.Document
	targets []string
}

type activeSet struct {
	eng     *engine.Engine
	bundles []crd.BundleRevision
}

// NewPolicy starts from eng (the embedded bundles and any --bundle given at start); build
// makes the engine for a later set.
func NewPolicy(eng *engine.Engine, build func(ctx context.Context, polled []engine.Option) (*engine.Engine, error), now func() time.Time) *Policy {
	if now == nil {
		now = time.Now
	}
	p := &Policy{build: build, now: now, polled: map[string]*bundle.Bundle{}}
	p.swap(eng, nil)
	return p
}

func (p *Policy) attach(m *bundleMetrics) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.metrics = m
	m.active(p.current.Load().bundles)
}

// Engine is the engine to evaluate with now, and the revisions it holds.
func (p *Policy) Engine() (*engine.Engine, []crd.BundleRevision) {
	a := p.current.Load()
	return a.eng, a.bundles
}

// Activate compiles the current set with f in place of the previous bundle from its URL and
// swaps it in. On error the previous engine stays.
func (p *Policy) Activate(ctx context.Context, f *bundles.Fetched) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := make(map[string]*bundle.Bundle, len(p.polled)+1)
	for src, b := range p.polled {
		next[src] = b
	}
	next[f.Source] = f.Bundle
	eng, err := p.build(ctx, options(next))
	if err == nil {
		err = p.rehearse(ctx, eng)
	}
	if err != nil {
		return fmt.Errorf("activate %s revision %s: %w", f.Source, f.Bundle.Manifest.Revision, err)
	}
	p.polled = next
	p.swap(eng, p.current.Load())
	return nil
}

// Remember keeps a tick's inventory and targets for the next activation to judge.
func (p *Policy) Remember(doc *inventory.Document, targets []string) {
	if doc != nil && len(targets) > 0 {
		p.last.Store(&judged{doc: doc, targets: targets})
	}
}

// rehearse evaluates the last tick's inventory with a candidate engine.
func (p *Policy) rehearse(ctx context.Context, eng *engine.Engine) error {
	j := p.last.Load()
	if j == nil {
		return nil
	}
	if _, err := eng.Evaluate(ctx, j.doc, j.targets, p.now()); err != nil {
		return fmt.Errorf("judging the last tick's inventory: %w", err)
	}
	return nil
}

// options are the polled bundles in URL order, so the same set always loads the same way.
func options(polled map[string]*bundle.Bundle) []engine.Option {
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
func (p *Policy) swap(eng *engine.Engine, prev *activeSet) {
	at := metav1.NewTime(p.now().UTC().Truncate(time.Second))
	since := map[string]*metav1.Time{}
	if prev != nil {
		for _, b := range prev.bundles {
			since[b.Name+"\x00"+b.Source+"\x00"+b.Revision] = b.ActivatedAt
		}
	}
	var revs []crd.BundleRevision
	for _, b := range eng.Bundles() {
		r := crd.BundleRevision{Name: b.Name, Revision: b.Revision, Source: b.Source, ActivatedAt: &at}
		if t, ok := since[b.Name+"\x00"+b.Source+"\x00"+b.Revision]; ok {
			r.ActivatedAt = t
		}
		revs = append(revs, r)
	}
	p.current.Store(&activeSet{eng: eng, bundles: revs})
	if p.metrics != nil {
		p.metrics.active(revs)
	}
}

// Observed records a poll's result: the status condition and the metrics read it.
func (p *Policy) Observed(src, result string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.polling = true
	switch {
	case err != nil:
		p.update = crd.BundleUpdate{Err: err.Error(), At: p.now()}
	case result == bundles.ResultActivated:
		p.update = crd.BundleUpdate{At: p.now()}
	}
	if p.metrics != nil {
		p.metrics.observed(src, result, p.update.Err != "")
	}
}

// Update is the last poll's outcome for the status, or nil when the agent polls nothing.
func (p *Policy) Update() *crd.BundleUpdate {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.polling {
		return nil
	}
	u := p.update
	return &u
}
