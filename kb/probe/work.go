package probe

import (
	"fmt"
	"math/bits"
	"sync/atomic"
)

// A probe is data from a bundle, and what it matches is anybody's manifest: a wildcard over a
// map holding one large subtree through 4,000 aliases, rendered whole for each match, or an
// absent-mode path down a deep object of long keys, spelling the path of every branch that
// falls short, costs the square of the document (50 such probes over one 1 MB ConfigMap ran
// past two minutes and 14 GB). Matching is therefore counted in steps, charged as it goes (a
// value visited, a filter comparison, a few bytes of a key sorted or of a value or path
// written; a step is 10 to 45 ns on this project's 2-core machine, BenchmarkObserveSteps).
//
// What an ordinary object costs a probe is free: the first StepsPerObject steps of each
// object, which no workload's pod template comes near, so a collection's ordinary work grows
// with its objects and no repository is too large for its probes. What an object costs past
// them counts against two bounds per collection; past either, the probe stops matching and is
// not available, its reason naming the bound, so a rule reading it is not assessed and the
// verdict is unknown: never a long run, never a partial observation taken for all there is.
const (
	// StepsPerObject is what one probe may take over one object for free.
	StepsPerObject = 16 << 10
	// MaxProbeSteps bounds the steps past StepsPerObject one probe takes over the objects of
	// one collection: about 0.1 s of matching, seven 1 MB ConfigMaps of 20,000 values each.
	MaxProbeSteps = 4 << 20
	// MaxCollectionSteps bounds the steps past StepsPerObject the probes of one collection
	// take together, so 100 probes each just within MaxProbeSteps end within about a second.
	MaxCollectionSteps = 32 << 20
)

// Reasons a probe past a bound gives as its observation's reason.
var (
	reasonProbeSteps = fmt.Sprintf("matching took more than %d steps past the first %d of each object, the bound on one probe's work in one collection (probe.MaxProbeSteps): narrow its kinds or path", MaxProbeSteps, StepsPerObject)
	reasonTotalSteps = fmt.Sprintf("the probes' matching took more than %d steps together past the first %d of each object, the bound on all probes' work in one collection (probe.MaxCollectionSteps): narrow the probes' kinds or paths", MaxCollectionSteps, StepsPerObject)
)

// flushSteps is how many steps a meter counts before adding them to its work, so that workers
// sharing one work rarely touch it; a walk runs past a bound by at most this many.
const flushSteps = 4096

// work counts each probe's steps past StepsPerObject in one collection, shared by the
// observers of one walk (Observer.Fork). Whether a probe is past a bound depends only on what
// was matched, never on the order or the workers: what an object adds depends on the object
// alone, counts only grow, a walk stops only once a count is past its bound, and total sums
// each probe's count capped just past MaxProbeSteps, so a probe stopping at its own bound adds
// the same to total whenever it stops.
type work struct {
	steps []atomic.Int64
	total atomic.Int64
}

func newWork(probes int) *work { return &work{steps: make([]atomic.Int64, probes)} }

// capped is how much of a probe's count total holds.
func capped(n int64) int64 { return min(n, MaxProbeSteps+1) }

// add charges n steps to probe i.
func (w *work) add(i int, n int64) {
	after := w.steps[i].Add(n)
	if d := capped(after) - capped(after-n); d > 0 {
		w.total.Add(d)
	}
}

// reason says why probe i may take no more steps: past the bound of all probes (which then
// stops them all, so it is every probe's reason), past its own, or "" within both.
func (w *work) reason(i int) string {
	switch {
	case w.total.Load() > MaxCollectionSteps:
		return reasonTotalSteps
	case w.steps[i].Load() > MaxProbeSteps:
		return reasonProbeSteps
	}
	return ""
}

// merge adds the counts of another observer's work, as if its matching had been o's own.
func (w *work) merge(other *work) {
	for i := range w.steps {
		w.add(i, other.steps[i].Load())
	}
	if other.total.Load() > MaxCollectionSteps {
		w.total.Store(max(w.total.Load(), MaxCollectionSteps+1))
	}
}

// meter counts the steps of one probe's matching on one object and adds what passes
// StepsPerObject to the probe's work every flushSteps; once the work is past a bound every
// charge answers false, and the walk charging it stops. A meter without work has a budget of
// its own (limit), for a question whose cautious answer is cheap (Set.FindsSubtree). A nil
// meter never stops.
type meter struct {
	w       *work
	probe   int
	keys    keyOrder // nil: no keys kept
	limit   int64
	used    int64 // steps charged
	flushed int64 // steps flushed
	over    bool  // past a bound: what the walk found is not all there is
	stopped bool  // the walk has its answer
}

// charge counts n steps and says whether the walk may go on.
func (m *meter) charge(n int) bool {
	if m == nil {
		return true
	}
	m.used += int64(n)
	if m.used-m.flushed >= flushSteps {
		m.flush()
	}
	return !m.over && !m.stopped
}

// chargeBytes counts writing, quoting or hashing n bytes: a step per 4, what quoting a key
// costs (strconv.Quote's 8 ns a byte).
func (m *meter) chargeBytes(n int) bool { return m.charge(1 + n/4) }

// chargeSort counts sorting n keys of keyBytes bytes in all: about n·log2(n) comparisons,
// each a step and a step per 64 bytes compared.
func (m *meter) chargeSort(n, keyBytes int) bool {
	return m.charge((n + keyBytes/64) * bits.Len(uint(n)))
}

// done says whether the walk should stop.
func (m *meter) done() bool { return m != nil && (m.over || m.stopped) }

// stop ends the walk: it has its answer.
func (m *meter) stop() {
	if m != nil {
		m.stopped = true
	}
}

// flush adds the steps past StepsPerObject to the work, or checks them against the limit.
func (m *meter) flush() {
	if m == nil {
		return
	}
	if m.w == nil {
		m.over = m.over || m.used > m.limit
		m.flushed = m.used
		return
	}
	if past := max(m.used-StepsPerObject, 0) - max(m.flushed-StepsPerObject, 0); past > 0 {
		m.w.add(m.probe, past)
	}
	m.flushed = m.used
	m.over = m.w.reason(m.probe) != ""
}
