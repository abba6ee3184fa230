package server

import (
	"context"
	"net/http"
	"sync"

	"golang.org/x/sync/semaphore"
)

// Turns of pushes (pushTurns).
const (
	// MaxPushesInFlight bounds the pushes read, decoded and evaluated at once; the others
	// wait for a turn, then answer 503 with Retry-After.
	MaxPushesInFlight = 3
	// MaxSharedPushes bounds the turns the shared --ingest-token holds at once: fewer than
	// every turn, so its pushes, however slowly they are sent, leave per-cluster tokens one.
	MaxSharedPushes = MaxPushesInFlight - 1
)

// pushTurns admits pushes past authentication, each credential within its own bound and
// all of them within MaxPushesInFlight: a per-cluster token one at a time, the shared token
// MaxSharedPushes at once. No credential can take every turn, so whoever holds one (a slow
// client, a leaked token) cannot stop the others' clusters from pushing; a turn is held at
// most for the body's time (Config.BodyTimeout) and the ingest's after it. Safe for
// concurrent use.
type pushTurns struct {
	all    *semaphore.Weighted
	shared *semaphore.Weighted
	mu     sync.Mutex
	busy   map[string]bool // per-cluster token hashes with a push in flight
}

func newPushTurns() *pushTurns {
	return &pushTurns{all: semaphore.NewWeighted(MaxPushesInFlight), shared: semaphore.NewWeighted(MaxSharedPushes),
		busy: map[string]bool{}}
}

// errPushInFlight refuses a per-cluster token's second push at once: a cluster never needs
// two.
var errPushInFlight = fail(http.StatusServiceUnavailable, "a push of this cluster is already in progress, retry later")

// admit takes a turn for who, waiting at most slotWait for each bound (errBusy past it),
// and answers what gives it back.
func (p *pushTurns) admit(ctx context.Context, who pusher) (release func(), err error) {
	mine, err := p.credential(ctx, who)
	if err != nil {
		return nil, err
	}
	if err := acquire(ctx, p.all, 1, slotWait); err != nil {
		mine()
		return nil, err
	}
	return func() {
		p.all.Release(1)
		mine()
	}, nil
}

// credential takes who's own turn: its cluster's for a per-cluster token, one of the shared
// token's otherwise.
func (p *pushTurns) credential(ctx context.Context, who pusher) (release func(), err error) {
	if who.tokenHash == "" {
		if err := acquire(ctx, p.shared, 1, slotWait); err != nil {
			return nil, err
		}
		return func() { p.shared.Release(1) }, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy[who.tokenHash] {
		return nil, errPushInFlight
	}
	p.busy[who.tokenHash] = true
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.busy, who.tokenHash)
	}, nil
}
