package store

import (
	"context"
	"time"
)

// Outbox is the notification queue: Ingest enqueues a message with one delivery per sink,
// and workers (one per replica) claim, deliver and finish them. Everything that decides
// who delivers what lives in the database, so workers on several handles deliver each
// claimed delivery once per claim and a claimer that dies is replaced when its lease ends.
//
// Leases are measured by the store's clock: the database's on PostgreSQL, so replicas
// whose clocks disagree still agree on who holds a delivery; on SQLite, the one process's.
// Each claim carries a token (DeliveryRef.Claim) that CompleteDelivery, RetryDelivery and
// HoldSink require: once a lease has run out and another worker claimed the delivery, the
// first claimer's late outcome changes nothing (it was sent at least once; it may be sent
// again). Due times, holds and message ages are the callers' clocks: a skew between
// replicas moves a retry by the skew, but never lets two workers hold one delivery.
type Outbox interface {
	// ClaimDeliveries leases up to limit due deliveries to one of sinks (the caller's) for
	// lease, by the store's clock, and answers them, oldest message first. A delivery is
	// due when its next attempt time has come by now (the caller's clock), no lease on it
	// is running by the store's clock, its sink is not held at now, and no earlier message
	// of its cluster is still queued on its sink (messages of a cluster go out in order). Deliveries to other sinks are left to replicas that have them (a
	// rolling update adding one). On PostgreSQL concurrent claimers skip each other's rows
	// (FOR UPDATE SKIP LOCKED).
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, sinks []string) ([]Delivery, error)
	// CompleteDelivery removes a delivery (delivered, or given up), and its message with
	// the last one. A delivery already gone, or claimed since under another token, is left
	// as it is, and is not an error.
	CompleteDelivery(ctx context.Context, ref DeliveryRef) error
	// RetryDelivery counts a failed attempt, ends the lease and makes the delivery due
	// again at next; lastError is kept for operators. A stale claim changes nothing.
	RetryDelivery(ctx context.Context, ref DeliveryRef, next time.Time, lastError string) error
	// HoldSink keeps every delivery to ref's sink unclaimed until until (the Retry-After
	// of ref's attempt); an earlier hold is only ever extended. A stale claim holds nothing.
	HoldSink(ctx context.Context, ref DeliveryRef, until time.Time) error
	// DropExpired removes every delivery of a message enqueued before cutoff, and those
	// messages, and answers how many deliveries it removed per sink: replicas dropping at
	// once count each delivery once between them.
	DropExpired(ctx context.Context, cutoff time.Time) (map[string]int, error)
	// QueuedDeliveries answers how many deliveries are queued per sink.
	QueuedDeliveries(ctx context.Context) (map[string]int, error)
}

// Notification is one message an Ingest enqueues: the webhook v1 body, fixed at enqueue,
// and the sinks it goes to.
type Notification struct {
	// DeliveryID is unique across the database: the same id is sent on every retry and
	// to every sink.
	DeliveryID string
	Body       []byte
	Sinks      []string
}

// DeliveryRef names one delivery, a message to one sink, as one claim of it holds it.
type DeliveryRef struct {
	MessageID int64
	Sink      string
	// Claim is the token ClaimDeliveries leased the delivery under.
	Claim int64
}

// Delivery is a claimed delivery with its message.
type Delivery struct {
	DeliveryRef
	ClusterID  int64
	DeliveryID string
	Body       []byte
	// Attempts are the failed attempts before this claim.
	Attempts  int
	CreatedAt time.Time
}
