package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

// Delivery policy.
const (
	// DefaultBackoff is the wait after a first failed attempt; each further one doubles it.
	DefaultBackoff = 30 * time.Second
	// MaxAttempts bounds the attempts at one delivery (30 s … 32 min apart, about an hour
	// in all); after the last it is given up and counted as failed.
	MaxAttempts = 8
	// MaxQueued is how long a message may wait: older ones are dropped, whatever their
	// attempts, and counted as dropped.
	MaxQueued = 8 * time.Hour
	// RequestTimeout bounds one attempt, connection to last byte.
	RequestTimeout = 2 * time.Second
	// MaxRetryAfter caps how long a sink's Retry-After may hold it.
	MaxRetryAfter = time.Hour
	// Parallel is how many deliveries one worker makes at once.
	Parallel = 4
	// lease is how long a claim keeps other workers off a delivery: several request
	// timeouts, so a live worker always finishes first, and short enough that a dead one's
	// deliveries are soon someone else's.
	lease = 15 * time.Second
	// defaultPoll is how often an idle worker looks for due deliveries.
	defaultPoll = 2 * time.Second
)

// Worker drains the outbox to its sinks. Run one per server; several on one database
// (replicas on PostgreSQL) share the work through the store's leases.
type Worker struct {
	store   store.Outbox
	sinks   map[string]Sink
	names   []string // the sinks' names: what this worker claims
	client  *http.Client
	now     func() time.Time
	backoff time.Duration
	poll    time.Duration
	log     *slog.Logger
	wake    chan struct{}
	metrics *workerMetrics
}

// Option adjusts a Worker.
type Option func(*Worker)

// WithClock sets the clock deliveries are scheduled by (time.Now by default); tests pin it
// and move it on instead of waiting.
func WithClock(now func() time.Time) Option { return func(w *Worker) { w.now = now } }

// WithBackoff sets the wait after a first failure (DefaultBackoff by default).
func WithBackoff(base time.Duration) Option {
	return func(w *Worker) { w.backoff = max(base, time.Nanosecond) }
}

// WithPoll sets how often an idle Run looks for due deliveries.
func WithPoll(d time.Duration) Option { return func(w *Worker) { w.poll = max(d, time.Millisecond) } }

// WithLogger sets where delivery failures are logged.
func WithLogger(l *slog.Logger) Option { return func(w *Worker) { w.log = l } }

// NewWorker builds a worker delivering st's queue to sinks, one per Name.
func NewWorker(st store.Outbox, sinks []Sink, opts ...Option) *Worker {
	w := &Worker{store: st, sinks: map[string]Sink{}, now: time.Now, backoff: DefaultBackoff,
		poll: defaultPoll, log: slog.New(slog.DiscardHandler), wake: make(chan struct{}, 1),
		client: &http.Client{Timeout: RequestTimeout,
			// A sink that redirects is misconfigured, and following it could send the
			// signed body somewhere else: the 3xx is the answer, and a failure.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
	for _, s := range sinks {
		w.sinks[s.Name] = s
		w.names = append(w.names, s.Name)
	}
	for _, o := range opts {
		o(w)
	}
	w.metrics = newWorkerMetrics(st, sinks)
	return w
}

// Wake asks Run for a pass now (a message was enqueued); it never blocks.
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends: a pass, then a wait for Wake or the poll interval.
func (w *Worker) Run(ctx context.Context) {
	for {
		if err := w.Pass(ctx); err != nil && ctx.Err() == nil {
			w.log.Error("notifications: the outbox could not be read; trying again", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-w.wake:
		case <-time.After(w.poll):
		}
	}
}

// Pass drops expired messages, then claims and delivers due deliveries, Parallel at a
// time, until none is due at the worker's clock.
func (w *Worker) Pass(ctx context.Context) error {
	dropped, err := w.store.DropExpired(ctx, w.now().Add(-MaxQueued))
	if err != nil {
		return err
	}
	for sink, n := range dropped {
		w.metrics.count(sink, "dropped", n)
		w.log.Warn("notifications: dropped messages queued for too long", "sink", sink, "dropped", n, "after", MaxQueued)
	}
	for {
		ds, err := w.store.ClaimDeliveries(ctx, w.now(), lease, Parallel, w.names)
		if err != nil || len(ds) == 0 {
			return err
		}
		var wg sync.WaitGroup
		errs := make([]error, len(ds))
		for i, d := range ds {
			wg.Go(func() { errs[i] = w.deliver(ctx, d) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
}

// recordTimeout bounds writing an attempt's outcome. The write outlives a cancelled ctx:
// a message a stopping server delivered is not sent again by the next one.
const recordTimeout = 5 * time.Second

// deliver makes one attempt at d and records its outcome in the store.
func (w *Worker) deliver(ctx context.Context, d store.Delivery) error {
	sink := w.sinks[d.Sink] // claimed only for one of w.names
	retryAfter, err := w.send(ctx, sink, d)
	if err != nil && ctx.Err() != nil {
		return ctx.Err() // stopping: not the sink's failure; the lease runs out and it is tried again
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err == nil {
		w.metrics.count(sink.Name, "delivered", 1)
		return w.store.CompleteDelivery(ctx, d.DeliveryRef)
	}
	attempts := d.Attempts + 1
	if attempts >= MaxAttempts {
		w.metrics.count(sink.Name, "failed", 1)
		w.log.Error("notifications: giving up on a message", "sink", sink.Name, "url", Redacted(sink.URL),
			"delivery", d.DeliveryID, "attempts", attempts, "err", err)
		return w.store.CompleteDelivery(ctx, d.DeliveryRef)
	}
	now := w.now()
	next := now.Add(w.backoff << (attempts - 1))
	if retryAfter > 0 {
		next = now.Add(retryAfter)
		if err := w.store.HoldSink(ctx, d.DeliveryRef, next); err != nil {
			return err
		}
	}
	w.log.Warn("notifications: delivery failed; retrying", "sink", sink.Name, "url", Redacted(sink.URL),
		"delivery", d.DeliveryID, "attempt", attempts, "next", next.UTC().Format(time.RFC3339), "err", err)
	return w.store.RetryDelivery(ctx, d.DeliveryRef, next, err.Error())
}

// send POSTs d to sink and answers nil for a 2xx; otherwise the error, and how long the
// sink asked to be left alone (a 429 or 503 with Retry-After).
func (w *Worker) send(ctx context.Context, sink Sink, d store.Delivery) (time.Duration, error) {
	req, err := sink.request(ctx, d.DeliveryID, d.Body)
	if err != nil {
		return 0, err
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, errors.New(redactErr(err, sink.URL))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return 0, nil
	case code >= 300 && code < 400:
		return 0, fmt.Errorf("HTTP %d: the sink redirects, and redirects are not followed", code)
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return retryAfter(resp.Header.Get("Retry-After"), w.now()), fmt.Errorf("HTTP %d", code)
	default:
		return 0, fmt.Errorf("HTTP %d", code)
	}
}
