package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

const (
	qInsertMessage = `INSERT INTO notify_messages (cluster_id, delivery_id, created_at, body)
VALUES ($1, $2, $3, $4) RETURNING id`
	qInsertDelivery = `INSERT INTO notify_deliveries (message_id, sink, cluster_id, next_at) VALUES ($1, $2, $3, $4)`
	// qDueDeliveries is the head of each (cluster, sink) queue that may be tried now: $1 is
	// the worker's clock, which due times and holds are set by; $3 the store's, which
	// leases are (the database's on PostgreSQL).
	qDueDeliveries = `SELECT d.message_id, d.sink FROM notify_deliveries d
WHERE d.next_at <= $1 AND d.claimed_until <= $3
AND NOT EXISTS (SELECT 1 FROM notify_deliveries e
	WHERE e.cluster_id = d.cluster_id AND e.sink = d.sink AND e.message_id < d.message_id)
AND NOT EXISTS (SELECT 1 FROM notify_sinks h WHERE h.sink = d.sink AND h.held_until > $1)`
	// qDueOrder ends qDueDeliveries, after the claimer's sinks ("AND d.sink IN (…)").
	qDueOrder      = ` ORDER BY d.message_id, d.sink LIMIT $2`
	qClaimDelivery = `UPDATE notify_deliveries SET claimed_until = $3, claim = $4 WHERE message_id = $1 AND sink = $2
RETURNING cluster_id, attempts`
	qMessage = `SELECT delivery_id, created_at, body FROM notify_messages WHERE id = $1`
	// qLockMessage (with the dialect's FOR UPDATE) makes the completions of one message's
	// deliveries take turns: under READ COMMITTED each would otherwise miss the other's
	// delete and leave the message behind.
	qLockMessage   = `SELECT id FROM notify_messages WHERE id = $1`
	qDeleteDeliv   = `DELETE FROM notify_deliveries WHERE message_id = $1 AND sink = $2 AND claim = $3`
	qDeleteIfEmpty = `DELETE FROM notify_messages WHERE id = $1
AND NOT EXISTS (SELECT 1 FROM notify_deliveries WHERE message_id = $1)`
	qRetryDeliv = `UPDATE notify_deliveries SET attempts = attempts + 1, next_at = $3, claimed_until = 0, claim = 0,
	last_error = $4 WHERE message_id = $1 AND sink = $2 AND claim = $5`
	qHoldSink = `INSERT INTO notify_sinks (sink, held_until)
SELECT CAST($1 AS TEXT), CAST($2 AS BIGINT) WHERE EXISTS
	(SELECT 1 FROM notify_deliveries WHERE message_id = $3 AND sink = $1 AND claim = $4)
ON CONFLICT (sink) DO UPDATE SET held_until = excluded.held_until WHERE notify_sinks.held_until < excluded.held_until`
	// qLockExpired (with FOR UPDATE) takes expired messages before their deliveries, in the
	// order CompleteDelivery does, so the two never deadlock.
	qLockExpired   = `SELECT id FROM notify_messages WHERE created_at < $1 ORDER BY id`
	qDropExpired   = `DELETE FROM notify_deliveries WHERE message_id IN (SELECT id FROM notify_messages WHERE created_at < $1) RETURNING sink`
	qDeleteExpired = `DELETE FROM notify_messages WHERE created_at < $1`
	// qSweepMessages removes messages no delivery is left of (none should be; an earlier
	// release could leave some).
	qSweepMessages = `DELETE FROM notify_messages WHERE NOT EXISTS
	(SELECT 1 FROM notify_deliveries d WHERE d.message_id = notify_messages.id)`
	qQueued = `SELECT sink, COUNT(*) FROM notify_deliveries GROUP BY sink`
)

// enqueue stores n for cluster in the ingest's transaction, due at once on every sink.
func enqueue(ctx context.Context, tx *sql.Tx, cluster int64, n *Notification, now time.Time) error {
	var id int64
	if err := tx.QueryRowContext(ctx, qInsertMessage, cluster, n.DeliveryID, now.UnixNano(), nonNil(n.Body)).Scan(&id); err != nil {
		return fmt.Errorf("enqueue notification: %w", err)
	}
	for _, sink := range n.Sinks {
		if _, err := tx.ExecContext(ctx, qInsertDelivery, id, sink, cluster, now.UnixNano()); err != nil {
			return fmt.Errorf("enqueue notification to %s: %w", sink, err)
		}
	}
	return nil
}

func (s *sqlStore) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, sinks []string) ([]Delivery, error) {
	if len(sinks) == 0 {
		return nil, nil
	}
	var out []Delivery
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		clock, err := s.clock(ctx, tx)
		if err != nil {
			return err
		}
		q, args := dueQuery(now, clock, limit, sinks)
		refs, err := dueDeliveries(ctx, tx, q+s.d.skipLocked, args)
		if err != nil {
			return err
		}
		out = out[:0]
		for _, ref := range refs {
			d, err := claim(ctx, tx, ref, clock+lease.Nanoseconds())
			if err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim notifications: %w", s.classify(err))
	}
	return out, nil
}

// clock is the store's time in Unix nanoseconds, which leases are measured by: the
// database's on PostgreSQL, so replicas whose clocks disagree still agree on whether a
// lease runs; on SQLite, one process's, the only one writing.
func (s *sqlStore) clock(ctx context.Context, tx *sql.Tx) (int64, error) {
	if s.d.clock == "" {
		return s.now().UnixNano(), nil
	}
	var now int64
	if err := tx.QueryRowContext(ctx, s.d.clock).Scan(&now); err != nil {
		return 0, fmt.Errorf("read the database clock: %w", err)
	}
	return now, nil
}

// dueQuery is qDueDeliveries for the claimer's sinks, with its arguments.
func dueQuery(now time.Time, clock int64, limit int, sinks []string) (string, []any) {
	args := []any{now.UnixNano(), limit, clock}
	marks := make([]string, len(sinks))
	for i, sink := range sinks {
		args = append(args, sink)
		marks[i] = fmt.Sprintf("$%d", len(args))
	}
	return qDueDeliveries + ` AND d.sink IN (` + strings.Join(marks, ", ") + `)` + qDueOrder, args
}

func dueDeliveries(ctx context.Context, tx *sql.Tx, q string, args []any) ([]DeliveryRef, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var refs []DeliveryRef
	for rows.Next() {
		var r DeliveryRef
		if err := rows.Scan(&r.MessageID, &r.Sink); err != nil {
			return nil, err
		}
		refs = append(refs, r)
	}
	return refs, rows.Err()
}

// claim leases one delivery until until (the store's clock) under a fresh token and reads
// its message.
func claim(ctx context.Context, tx *sql.Tx, ref DeliveryRef, until int64) (Delivery, error) {
	ref.Claim = rand.Int64N(math.MaxInt64) + 1 // never 0, which is no claim
	d := Delivery{DeliveryRef: ref}
	var created int64
	if err := tx.QueryRowContext(ctx, qClaimDelivery, ref.MessageID, ref.Sink, until, ref.Claim).Scan(&d.ClusterID,
		&d.Attempts); err != nil {
		return Delivery{}, fmt.Errorf("lease delivery %d to %s: %w", ref.MessageID, ref.Sink, err)
	}
	if err := tx.QueryRowContext(ctx, qMessage, ref.MessageID).Scan(&d.DeliveryID, &created, &d.Body); err != nil {
		return Delivery{}, fmt.Errorf("read message %d: %w", ref.MessageID, err)
	}
	d.CreatedAt = fromNanos(created)
	return d, nil
}

func (s *sqlStore) CompleteDelivery(ctx context.Context, ref DeliveryRef) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, qLockMessage+s.d.forUpdate, ref.MessageID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // dropped, or its cluster deleted
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, qDeleteDeliv, ref.MessageID, ref.Sink, ref.Claim); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, qDeleteIfEmpty, ref.MessageID)
		return err
	})
	if err != nil {
		return fmt.Errorf("complete delivery %d to %s: %w", ref.MessageID, ref.Sink, s.classify(err))
	}
	return nil
}

func (s *sqlStore) RetryDelivery(ctx context.Context, ref DeliveryRef, next time.Time, lastError string) error {
	if _, err := s.w.ExecContext(ctx, qRetryDeliv, ref.MessageID, ref.Sink, next.UnixNano(), lastError, ref.Claim); err != nil {
		return fmt.Errorf("reschedule delivery %d to %s: %w", ref.MessageID, ref.Sink, s.classify(err))
	}
	return nil
}

func (s *sqlStore) HoldSink(ctx context.Context, ref DeliveryRef, until time.Time) error {
	if _, err := s.w.ExecContext(ctx, qHoldSink, ref.Sink, until.UnixNano(), ref.MessageID, ref.Claim); err != nil {
		return fmt.Errorf("hold sink %s: %w", ref.Sink, s.classify(err))
	}
	return nil
}

func (s *sqlStore) DropExpired(ctx context.Context, cutoff time.Time) (map[string]int, error) {
	counts := map[string]int{}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		clear(counts)
		if s.d.forUpdate != "" {
			if _, err := tx.ExecContext(ctx, qLockExpired+s.d.forUpdate, cutoff.UnixNano()); err != nil {
				return err
			}
		}
		// What this transaction deleted is what it counts: a replica dropping the same
		// messages at once counts none of them twice.
		rows, err := tx.QueryContext(ctx, qDropExpired, cutoff.UnixNano())
		if err != nil {
			return err
		}
		for rows.Next() {
			var sink string
			if err := rows.Scan(&sink); err != nil {
				rows.Close()
				return err
			}
			counts[sink]++
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, qDeleteExpired, cutoff.UnixNano()); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, qSweepMessages)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("drop notifications queued before %s: %w", cutoff.UTC().Format(time.RFC3339), s.classify(err))
	}
	return counts, nil
}

func (s *sqlStore) QueuedDeliveries(ctx context.Context) (map[string]int, error) {
	counts, err := sinkCounts(ctx, s.r, qQueued)
	if err != nil {
		return nil, fmt.Errorf("count queued notifications: %w", s.classify(err))
	}
	return counts, nil
}

type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// sinkCounts runs a query answering (sink, count) rows.
func sinkCounts(ctx context.Context, db querier, q string, args ...any) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var sink string
		var n int
		if err := rows.Scan(&sink, &n); err != nil {
			return nil, err
		}
		out[sink] = n
	}
	return out, rows.Err()
}
