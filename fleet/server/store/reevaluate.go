package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Reevaluation is a cluster's latest snapshot evaluated again with the server's current
// bundle set, and the notification those evaluations cause.
type Reevaluation struct {
	ClusterID  int64
	SnapshotID int64
	// Evaluations are one per target (distinct), made with one bundle set.
	Evaluations []Evaluation
	// Baselines and Notification are as in Ingest: checked, and enqueued only when an
	// evaluation was stored.
	Baselines    map[string]int64
	Notification *Notification
}

// ErrSuperseded: a Reevaluation's snapshot is no longer its cluster's latest (a push
// committed since it was read); nothing was stored, and the newer snapshot was evaluated
// by its own push.
var ErrSuperseded = errors.New("snapshot is no longer the cluster's latest")

const qLockCluster = `SELECT COALESCE(latest_snapshot_id, 0) FROM clusters WHERE id = $1`

// Reevaluate stores re's evaluations of its cluster's latest snapshot in one transaction
// that locks the cluster's row as Ingest does, so a push and a re-evaluation of one
// cluster queue. One already stored for the snapshot, target and bundle set (another
// replica's, a duplicate push's) is left as it is, or judged again in place when re's was
// made on a later day; one of a set rolled back to, which no fleet cell shows, is replaced. ErrSuperseded when SnapshotID is no longer the latest,
// ErrNotFound for an unknown cluster, ErrBaselineMoved as Ingest; each stores nothing.
func (s *sqlStore) Reevaluate(ctx context.Context, re Reevaluation) (int, error) {
	stored := 0
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var latest int64
		err := tx.QueryRowContext(ctx, qLockCluster+s.d.forUpdate, re.ClusterID).Scan(&latest)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return ErrNotFound
		case err != nil:
			return fmt.Errorf("lock cluster: %w", err)
		case latest != re.SnapshotID:
			return fmt.Errorf("%w: snapshot %d, latest %d", ErrSuperseded, re.SnapshotID, latest)
		}
		if err := checkBaselines(ctx, tx, re.ClusterID, re.Baselines); err != nil {
			return err
		}
		if stored, err = insertEvaluations(ctx, tx, re.ClusterID, re.SnapshotID, re.Evaluations, true); err != nil {
			return err
		}
		if re.Notification == nil || stored == 0 {
			return nil
		}
		return enqueue(ctx, tx, re.ClusterID, re.Notification, s.now())
	})
	if err != nil {
		return 0, fmt.Errorf("re-evaluate snapshot %d of cluster %d: %w", re.SnapshotID, re.ClusterID, s.classify(err))
	}
	return stored, nil
}
