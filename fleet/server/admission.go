package server

import (
	"context"
	"net/http"
	"sync"

	"golang.org/x/sync/semaphore"
)

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
// (Config.BodyTimeout) and the ingest's after it. Safe for concurrent use.
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

// errPushInFlight refuses a per-cluster token's second push at once: a cluster never needs
// two.
var errPushInFlight = fail(http.StatusServiceUnavailable, "a push of this cluster is already in progress, retry later")

// admit takes a turn for who, waiting at most slotWait for each bound (errBusy past it),
// and answers what gives it back.
func (p *pushTurns) admit(ctx context.Context, who pusher) (release func(), err error) {
	var held []func()
	release = func() {
		for i := len(held) - 1; i >= 0; i-- {
			held[i]()
		}
	}
	if who.tokenHash != "" {
		if !p.claim(who.tokenHash) {
			return nil, errPushInFlight
		}
		held = append(held, func() { p.unclaim(who.tokenHash) })
	}
	kind := p.shared
	if who.tokenHash != "" {
		kind = p.clusters
	}
	for _, sem := range []*semaphore.Weighted{kind, p.all} {
		if err := acquire(ctx, sem, 1, slotWait); err != nil {
			release()
			return nil, err
		}
		held = append(held, func() { sem.Release(1) })
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
