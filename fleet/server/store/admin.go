package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

const (
	qClusterName   = `SELECT name FROM clusters WHERE id = $1`
	qDeleteCluster = `DELETE FROM clusters WHERE id = $1 AND name = $2`
	qRenameCluster = `UPDATE clusters SET name = $3 WHERE id = $1 AND name = $2`
	// qPruneBatch deletes up to $2 snapshots received before $1 that are neither a
	// cluster's latest, nor a fleet cell's, nor holding a target's last decided evaluation
	// (the notification baseline, which a run of unknown passes leaves behind the fleet
	// cell); their evaluations go by cascade.
	qPruneBatch = `DELETE FROM snapshots WHERE id IN (
	SELECT s.id FROM snapshots s WHERE s.received_at < $1
	AND NOT EXISTS (SELECT 1 FROM clusters c WHERE c.latest_snapshot_id = s.id)
	AND NOT EXISTS (SELECT 1 FROM fleet_cells f WHERE f.snapshot_id = s.id)
	AND s.id NOT IN (SELECT e.snapshot_id FROM evaluations e WHERE e.id IN (
		SELECT MAX(b.id) FROM evaluations b WHERE b.verdict IN ('ready', 'blocked') GROUP BY b.cluster_id, b.target))
	ORDER BY s.id LIMIT $2)`
	// qPruneEvaluations deletes up to $2 evaluations made before $1 that a newer
	// evaluation of the same snapshot and target superseded (a bundle set's, re-evaluated
	// with the next: a cluster's latest snapshot stays, and would gather one per revision
	// for ever), unless a fleet cell or a target's last decided evaluation is one of them.
	qPruneEvaluations = `DELETE FROM evaluations WHERE id IN (
	SELECT e.id FROM evaluations e WHERE e.evaluated_at < $1
	AND EXISTS (SELECT 1 FROM evaluations n WHERE n.snapshot_id = e.snapshot_id AND n.target = e.target AND n.id > e.id)
	AND NOT EXISTS (SELECT 1 FROM fleet_cells f WHERE f.evaluation_id = e.id)
	AND e.id NOT IN (SELECT MAX(b.id) FROM evaluations b WHERE b.verdict IN ('ready', 'blocked') GROUP BY b.cluster_id, b.target)
	LIMIT $2)`
)

// pruneBatch bounds the snapshots one Prune transaction deletes, so SQLite's single
// writer is never held for long and ingests interleave with a large prune.
const pruneBatch = 500

// errClusterMoved: the cluster was renamed or deleted between reading its name and
// changing its row; the transaction is rolled back and tried again.
var errClusterMoved = errors.New("cluster changed meanwhile")

// clusterTries bounds retries on errClusterMoved: each needs a concurrent rename.
const clusterTries = 3

func (s *sqlStore) Cluster(ctx context.Context, id int64) (Cluster, error) {
	c, err := scanCluster(s.r.QueryRowContext(ctx, qClusterByID, id))
	if err != nil {
		return Cluster{}, fmt.Errorf("read cluster %d: %w", id, s.classify(err))
	}
	return c, nil
}

// DeleteCluster deletes the tokens first, then the cluster row (snapshots, evaluations,
// fleet cells and audit calls follow by ON DELETE CASCADE): Ingest locks token rows before the
// cluster's, and taking them in the same order cannot deadlock with it.
func (s *sqlStore) DeleteCluster(ctx context.Context, id int64) error {
	err := s.onCluster(ctx, id, func(tx *sql.Tx, name string) error {
		if _, err := tx.ExecContext(ctx, qDeleteTokens, name); err != nil {
			return fmt.Errorf("delete ingest tokens: %w", err)
		}
		return wantOneRow(tx.ExecContext(ctx, qDeleteCluster, id, name))
	})
	if err != nil {
		return fmt.Errorf("delete cluster %d: %w", id, s.classify(err))
	}
	return nil
}

// RenameCluster moves the tokens first, then renames the row, for DeleteCluster's reason.
// The unique name decides a race for the new name: the loser's update fails.
func (s *sqlStore) RenameCluster(ctx context.Context, id int64, name string) (Cluster, error) {
	var c Cluster
	err := s.onCluster(ctx, id, func(tx *sql.Tx, old string) error {
		if _, err := tx.ExecContext(ctx, qMoveTokens, old, name); err != nil {
			return fmt.Errorf("move ingest tokens: %w", err)
		}
		if err := wantOneRow(tx.ExecContext(ctx, qRenameCluster, id, old, name)); err != nil {
			if s.d.unique(err) {
				return conflict(ReasonNameTaken)
			}
			return err
		}
		var err error
		c, err = scanCluster(tx.QueryRowContext(ctx, qClusterByID, id))
		return err
	})
	if err != nil {
		return Cluster{}, fmt.Errorf("rename cluster %d to %q: %w", id, name, s.classify(err))
	}
	return c, nil
}

// onCluster runs fn in a write transaction with cluster id's current name; ErrNotFound
// when there is no such cluster. fn answers errClusterMoved when the row no longer has
// that name (a concurrent rename on Postgres), and the whole transaction is tried again.
func (s *sqlStore) onCluster(ctx context.Context, id int64, fn func(tx *sql.Tx, name string) error) error {
	for range clusterTries {
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			var name string
			if err := tx.QueryRowContext(ctx, qClusterName, id).Scan(&name); err != nil {
				return noRows(err)
			}
			return fn(tx, name)
		})
		if !errors.Is(err, errClusterMoved) {
			return err
		}
	}
	return errClusterMoved
}

// wantOneRow turns an Exec that changed no row into errClusterMoved.
func wantOneRow(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return errClusterMoved
	}
	return nil
}

// Prune deletes in batches, each its own transaction. The batch query re-reads which
// snapshots are latest or in a fleet cell, and an ingest only ever points those at new
// snapshots, so batches interleaved with ingests never delete a kept one.
func (s *sqlStore) Prune(ctx context.Context, cutoff time.Time) (int, error) {
	n, err := s.prune(ctx, qPruneBatch, cutoff, pruneBatch)
	if err != nil {
		return n, err
	}
	if _, err := s.prune(ctx, qPruneEvaluations, cutoff, pruneBatch); err != nil {
		return n, fmt.Errorf("prune evaluations: %w", err)
	}
	return n, nil
}

// prune runs q, deleting batch rows made before cutoff a transaction at a time, until a
// batch deletes fewer, and answers how many rows it deleted.
func (s *sqlStore) prune(ctx context.Context, q string, cutoff time.Time, batch int) (int, error) {
	total := 0
	for {
		var n int64
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, q, cutoff.UnixNano(), batch)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, fmt.Errorf("prune before %s (%d deleted): %w", cutoff.UTC().Format(time.RFC3339),
				total, s.classify(err))
		}
		total += int(n)
		if n < int64(batch) {
			return total, nil
		}
	}
}
