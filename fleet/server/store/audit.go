package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// AuditRecord is what the audit webhook backend's batches built for a cluster: the
// aggregated section as the server gave it (gzip JSON; the store does not read it), how
// many batches built it, and when the first and the last arrived.
type AuditRecord struct {
	ClusterID  int64
	Section    []byte
	Batches    int64
	FirstBatch time.Time
	LastBatch  time.Time
}

const (
	qClusterIDByName = `SELECT id FROM clusters WHERE name = $1`
	// qInsertAudit makes the cluster's row exist, empty (batches 0), so that the next
	// statement has a row to lock even for the first batch; a row already there is left.
	qInsertAudit = `INSERT INTO audit_calls (cluster_id, section, batches, first_batch_at, last_batch_at)
VALUES ($1, $2, 0, $3, $3) ON CONFLICT (cluster_id) DO NOTHING`
	qLockAudit   = `SELECT section, batches FROM audit_calls WHERE cluster_id = $1`
	qUpdateAudit = `UPDATE audit_calls SET section = $2, batches = batches + 1, last_batch_at = $3,
	first_batch_at = CASE WHEN batches = 0 THEN $3 ELSE first_batch_at END WHERE cluster_id = $1`
	qAuditCalls = `SELECT cluster_id, section, batches, first_batch_at, last_batch_at FROM audit_calls
WHERE cluster_id = $1 AND batches > 0`
)

// UpdateAuditCalls locks the cluster's row before it reads the section, so fn always sees
// the section the previous batch stored: on Postgres the row lock (FOR UPDATE) queues a
// second replica's batch of the cluster behind this transaction, and SQLite's one writer
// queues them anyway. fn runs holding the lock: it must be quick (decoding one batch).
func (s *sqlStore) UpdateAuditCalls(ctx context.Context, name string, fn func(section []byte) ([]byte, error)) (AuditRecord, error) {
	var rec AuditRecord
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var id int64
		if err := tx.QueryRowContext(ctx, qClusterIDByName, name).Scan(&id); err != nil {
			return noRows(err)
		}
		now := s.now().UnixNano()
		if _, err := tx.ExecContext(ctx, qInsertAudit, id, []byte{}, now); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		var (
			prev    []byte
			batches int64
		)
		if err := tx.QueryRowContext(ctx, qLockAudit+s.d.forUpdate, id).Scan(&prev, &batches); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
		if batches == 0 {
			prev = nil
		}
		next, err := fn(prev)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, qUpdateAudit, id, nonNil(next), now); err != nil {
			return fmt.Errorf("update: %w", err)
		}
		rec, err = scanAudit(tx.QueryRowContext(ctx, qAuditCalls, id))
		return err
	})
	if err != nil {
		return AuditRecord{}, fmt.Errorf("update the audit calls of cluster %q: %w", name, s.classify(err))
	}
	return rec, nil
}

func (s *sqlStore) AuditCalls(ctx context.Context, clusterID int64) (AuditRecord, error) {
	rec, err := scanAudit(s.r.QueryRowContext(ctx, qAuditCalls, clusterID))
	if err != nil {
		return AuditRecord{}, fmt.Errorf("read the audit calls of cluster %d: %w", clusterID, s.classify(err))
	}
	return rec, nil
}

func scanAudit(row scanner) (AuditRecord, error) {
	var (
		rec         AuditRecord
		first, last int64
	)
	if err := row.Scan(&rec.ClusterID, &rec.Section, &rec.Batches, &first, &last); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return AuditRecord{}, ErrNotFound
		}
		return AuditRecord{}, err
	}
	rec.FirstBatch, rec.LastBatch = fromNanos(first), fromNanos(last)
	return rec, nil
}
