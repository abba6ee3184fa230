package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

const (
	// qTouchCluster is the cluster's row lock as well as its last-seen time: on Postgres
	// the update holds the row until commit, so a second ingest of the cluster waits here
	// and then reads the first one's latest hash; SQLite's one writer serialises anyway.
	qTouchCluster = `UPDATE clusters SET last_seen = $2, agent_bundles = $3 WHERE id = $1
RETURNING COALESCE(latest_snapshot_id, 0), COALESCE(latest_hash, '')`
	qInsertSnapshot = `INSERT INTO snapshots
(cluster_id, hash, received_at, collected_at, agent_version, kb_version, server_version, inventory)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`
	qInsertEvaluation = `INSERT INTO evaluations
(cluster_id, snapshot_id, target, verdict, score, blockers, warnings, infos, evaluated_at, bundles, bundles_key, report,
	teams, carried)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`
	qUpsertFleetCell = `INSERT INTO fleet_cells
(cluster_id, target, evaluation_id, snapshot_id, verdict, score, blockers, warnings, evaluated_at, bundles_key, teams)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
ON CONFLICT (cluster_id, target) DO UPDATE SET evaluation_id = excluded.evaluation_id,
	snapshot_id = excluded.snapshot_id, verdict = excluded.verdict, score = excluded.score,
	blockers = excluded.blockers, warnings = excluded.warnings, evaluated_at = excluded.evaluated_at,
	bundles_key = excluded.bundles_key, teams = excluded.teams`
	// qSupersededEvaluation finds the evaluation of a snapshot at a target with a bundle
	// set that a new one replaces: one no fleet cell shows (the server went back to that
	// set, a rollback, after another one's evaluation took the cell), or one made earlier
	// (the rules judge dates by the day, so an unchanged inventory is judged again each
	// day). Replaced, not updated in place: the new row's id is the cluster's newest, which
	// LatestEvaluation, the history and the fleet's version go by.
	qSupersededEvaluation = `SELECT e.id FROM evaluations e
WHERE e.snapshot_id = $1 AND e.target = $2 AND e.bundles_key = $3
	AND (e.evaluated_at < $4 OR NOT EXISTS (SELECT 1 FROM fleet_cells f WHERE f.evaluation_id = e.id))`
	qDeleteEvaluation = `DELETE FROM evaluations WHERE id = $1`
	qSetLatest        = `UPDATE clusters SET latest_snapshot_id = $2, latest_hash = $3,
	server_version = COALESCE(NULLIF(CAST($4 AS TEXT), ''), server_version) WHERE id = $1`
)

func (s *sqlStore) Ingest(ctx context.Context, in Ingest) (IngestResult, error) {
	var res IngestResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if in.TokenHash != "" {
			if err := s.checkToken(ctx, tx, in.TokenHash, in.ClusterName); err != nil {
				return err
			}
		}
		now := s.now()
		c, err := bindCluster(ctx, tx, in.ClusterName, in.ClusterUID, now)
		if err != nil {
			return err
		}
		res = IngestResult{ClusterID: c.ID}
		var latest int64
		var latestHash string
		bundles, err := json.Marshal(nonNilBundles(in.AgentBundles))
		if err != nil {
			return fmt.Errorf("encode agent bundles: %w", err)
		}
		if err := tx.QueryRowContext(ctx, qTouchCluster, c.ID, now.UnixNano(), string(bundles)).Scan(&latest, &latestHash); err != nil {
			return fmt.Errorf("lock cluster: %w", err)
		}
		if err := checkBaselines(ctx, tx, c.ID, in.Baselines); err != nil {
			return err
		}
		stored := len(in.Evaluations)
		if latest != 0 && latestHash == in.Hash {
			res.SnapshotID, res.Duplicate = latest, true
			stored, err = insertEvaluations(ctx, tx, c.ID, latest, in.Evaluations, true)
		} else {
			res.SnapshotID, err = insertSnapshot(ctx, tx, c.ID, in, now)
		}
		if err != nil || in.Notification == nil || stored == 0 {
			return err
		}
		return enqueue(ctx, tx, c.ID, in.Notification, now)
	})
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest snapshot of %q: %w", in.ClusterName, s.classify(err))
	}
	return res, nil
}

// checkToken answers nil when the ingest token hash is active and pushes as cluster. On
// Postgres the token's row stays share-locked until the ingest commits, so a revoke,
// rename or delete touching it waits for this ingest instead of racing it; those take
// token rows before the cluster's row, as Ingest does, so the two queue, never deadlock.
func (s *sqlStore) checkToken(ctx context.Context, tx *sql.Tx, hash, cluster string) error {
	var name string
	err := tx.QueryRowContext(ctx, qTokenCluster+s.d.forShare, hash).Scan(&name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrRevoked
	case err != nil:
		return fmt.Errorf("check ingest token: %w", err)
	case name != cluster:
		return conflict(ReasonTokenMoved)
	}
	return nil
}

// insertSnapshot stores in's snapshot and evaluations for cluster id, moves its fleet
// cells and its latest snapshot, and answers the snapshot's id.
func insertSnapshot(ctx context.Context, tx *sql.Tx, id int64, in Ingest, now time.Time) (int64, error) {
	var snap int64
	err := tx.QueryRowContext(ctx, qInsertSnapshot, id, in.Hash, now.UnixNano(), nullTime(in.CollectedAt),
		in.AgentVersion, in.KBVersion, in.ServerVersion, nonNil(in.Inventory)).Scan(&snap)
	if err != nil {
		return 0, fmt.Errorf("insert snapshot: %w", err)
	}
	if _, err := insertEvaluations(ctx, tx, id, snap, in.Evaluations, false); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, qSetLatest, id, snap, in.Hash, in.ServerVersion); err != nil {
		return 0, fmt.Errorf("set latest snapshot: %w", err)
	}
	return snap, nil
}

// insertEvaluations stores evals of snapshot snap and moves the cluster's fleet cells to
// them. With onlyNew, an evaluation the snapshot already has at the target with the same
// bundle set is left as it is while its fleet cell shows it and it is not older than the
// new one; otherwise it is replaced (dropSuperseded). So a duplicate push fills in what an
// earlier, failed evaluation left out, what a bundle change left outdated, or a judgement
// from an earlier day. It answers how many evaluations it stored.
func insertEvaluations(ctx context.Context, tx *sql.Tx, cluster, snap int64, evals []Evaluation, onlyNew bool) (int, error) {
	q := qInsertEvaluation + ` RETURNING id`
	if onlyNew {
		q = qInsertEvaluation + ` ON CONFLICT (snapshot_id, target, bundles_key) DO NOTHING RETURNING id`
	}
	stored := 0
	for _, e := range evals {
		bundles, err := json.Marshal(nonNilBundles(e.Bundles))
		if err != nil {
			return 0, fmt.Errorf("encode bundles: %w", err)
		}
		teams, err := encodeTeams(e.Teams)
		if err != nil {
			return 0, err
		}
		carried, err := encodeCarried(e.Carried)
		if err != nil {
			return 0, err
		}
		insert := func() (eval int64, err error) {
			err = tx.QueryRowContext(ctx, q, cluster, snap, e.Target, e.Verdict, e.Score, e.Blockers,
				e.Warnings, e.Infos, e.EvaluatedAt.UnixNano(), string(bundles), e.BundlesKey, nonNil(e.Report), teams,
				carried).Scan(&eval)
			return eval, err
		}
		eval, err := insert()
		if onlyNew && errors.Is(err, sql.ErrNoRows) {
			var replaced bool
			if replaced, err = dropSuperseded(ctx, tx, snap, e); err != nil {
				return 0, err
			}
			if !replaced {
				continue // stored and shown already
			}
			eval, err = insert()
		}
		if err != nil {
			return 0, fmt.Errorf("insert evaluation at %q: %w", e.Target, err)
		}
		if _, err := tx.ExecContext(ctx, qUpsertFleetCell, cluster, e.Target, eval, snap, e.Verdict, e.Score,
			e.Blockers, e.Warnings, e.EvaluatedAt.UnixNano(), e.BundlesKey, teams); err != nil {
			return 0, fmt.Errorf("update fleet cell at %q: %w", e.Target, err)
		}
		stored++
	}
	return stored, nil
}

// dropSuperseded deletes the evaluation of snapshot snap at e's target with e's bundle
// set when no fleet cell shows it or it was made before e, and answers whether it did, so
// e takes its place as the newest: a server rolled back to an earlier set stores that
// set's evaluation again, a new day's judgement replaces yesterday's, and the cell (its
// row goes with the evaluation it showed, ON DELETE CASCADE, and is written again), the
// latest evaluation and the notification baseline all name it. The row deleted is an
// evaluation of the same inventory with the same bundles.
func dropSuperseded(ctx context.Context, tx *sql.Tx, snap int64, e Evaluation) (bool, error) {
	var id int64
	err := tx.QueryRowContext(ctx, qSupersededEvaluation, snap, e.Target, e.BundlesKey, e.EvaluatedAt.UnixNano()).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read evaluation at %q: %w", e.Target, err)
	}
	if _, err := tx.ExecContext(ctx, qDeleteEvaluation, id); err != nil {
		return false, fmt.Errorf("replace evaluation at %q: %w", e.Target, err)
	}
	return true, nil
}

// checkBaselines answers ErrBaselineMoved unless each target's last decided evaluation is
// the one the server compared with. It runs after the cluster's row is locked, so no
// ingest of the cluster can move one before this transaction commits.
func checkBaselines(ctx context.Context, tx *sql.Tx, cluster int64, baselines map[string]int64) error {
	for target, want := range baselines {
		var got int64
		err := tx.QueryRowContext(ctx, qLastDecidedID, cluster, target).Scan(&got)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read baseline at %q: %w", target, err)
		}
		if got != want {
			return fmt.Errorf("%w: at %q", ErrBaselineMoved, target)
		}
	}
	return nil
}

const (
	qHead = `SELECT id, name, uid, server_version, COALESCE(latest_snapshot_id, 0), COALESCE(latest_hash, '')
FROM clusters WHERE name = $1`
	qLatestSnapshot = `SELECT id, cluster_id, hash, received_at, collected_at, agent_version, kb_version,
	server_version, inventory FROM snapshots WHERE cluster_id = $1 ORDER BY id DESC LIMIT 1`
	qLatestEvaluation = `SELECT id, cluster_id, snapshot_id, target, verdict, score, blockers, warnings, infos,
	evaluated_at, bundles, bundles_key, report, teams, carried
FROM evaluations WHERE cluster_id = $1 AND target = $2 ORDER BY id DESC LIMIT 1`
	qEvaluation = `SELECT id, cluster_id, snapshot_id, target, verdict, score, blockers, warnings, infos,
	evaluated_at, bundles, bundles_key, report, teams, carried
FROM evaluations WHERE id = $1`
	// decided is the verdict filter of a notification baseline.
	decided      = ` AND verdict IN ('ready', 'blocked')`
	qLastDecided = `SELECT id, cluster_id, snapshot_id, target, verdict, score, blockers, warnings, infos,
	evaluated_at, bundles, bundles_key, report, teams, carried
FROM evaluations WHERE cluster_id = $1 AND target = $2` + decided + ` ORDER BY id DESC LIMIT 1`
	qLastDecidedID = `SELECT id FROM evaluations WHERE cluster_id = $1 AND target = $2` + decided +
		` ORDER BY id DESC LIMIT 1`
	qHistory = `SELECT id, snapshot_id, target, verdict, score, blockers, warnings, infos, evaluated_at, bundles_key
FROM evaluations WHERE cluster_id = $1 AND target = $2 ORDER BY id DESC LIMIT $3`
	qFleet = `SELECT c.id, c.name, c.uid, c.last_seen, c.server_version, f.target, f.evaluation_id, f.snapshot_id,
	f.verdict, f.score, f.blockers, f.warnings, f.evaluated_at, f.bundles_key, f.teams
FROM fleet_cells f JOIN clusters c ON c.id = f.cluster_id`
	qClusterCells = qFleet + ` WHERE c.id = $1`
	qFleetVersion = `SELECT COALESCE(MAX(evaluation_id), 0), COUNT(*) FROM fleet_cells`
)

func (s *sqlStore) Head(ctx context.Context, name string) (ClusterHead, error) {
	var (
		h   ClusterHead
		uid sql.NullString
	)
	err := s.r.QueryRowContext(ctx, qHead, name).Scan(&h.ID, &h.Name, &uid, &h.ServerVersion,
		&h.LatestSnapshotID, &h.LatestHash)
	if err != nil {
		return ClusterHead{}, fmt.Errorf("read cluster %q: %w", name, s.classify(noRows(err)))
	}
	h.UID = uid.String
	return h, nil
}

func (s *sqlStore) LatestSnapshot(ctx context.Context, clusterID int64) (SnapshotRecord, error) {
	var (
		r         SnapshotRecord
		received  int64
		collected sql.NullInt64
	)
	err := s.r.QueryRowContext(ctx, qLatestSnapshot, clusterID).Scan(&r.ID, &r.ClusterID, &r.Hash, &received,
		&collected, &r.AgentVersion, &r.KBVersion, &r.ServerVersion, &r.Inventory)
	if err != nil {
		return SnapshotRecord{}, fmt.Errorf("read latest snapshot of cluster %d: %w", clusterID, s.classify(noRows(err)))
	}
	r.ReceivedAt = fromNanos(received)
	if collected.Valid {
		r.CollectedAt = fromNanos(collected.Int64)
	}
	return r, nil
}

func (s *sqlStore) LatestEvaluation(ctx context.Context, clusterID int64, target string) (EvaluationRecord, error) {
	r, err := s.evaluation(ctx, qLatestEvaluation, clusterID, target)
	if err != nil {
		return EvaluationRecord{}, fmt.Errorf("read latest evaluation of cluster %d at %q: %w", clusterID, target, err)
	}
	return r, nil
}

func (s *sqlStore) Evaluation(ctx context.Context, id int64) (EvaluationRecord, error) {
	r, err := s.evaluation(ctx, qEvaluation, id)
	if err != nil {
		return EvaluationRecord{}, fmt.Errorf("read evaluation %d: %w", id, err)
	}
	return r, nil
}

func (s *sqlStore) LastDecidedEvaluation(ctx context.Context, clusterID int64, target string) (EvaluationRecord, error) {
	r, err := s.evaluation(ctx, qLastDecided, clusterID, target)
	if err != nil {
		return EvaluationRecord{}, fmt.Errorf("read last decided evaluation of cluster %d at %q: %w", clusterID, target, err)
	}
	return r, nil
}

// evaluation reads the one evaluation q answers for args: (cluster, target) or (id).
func (s *sqlStore) evaluation(ctx context.Context, q string, args ...any) (EvaluationRecord, error) {
	var (
		r         EvaluationRecord
		evaluated int64
		bundles   string
		teams     string
		carried   sql.NullString
	)
	err := s.r.QueryRowContext(ctx, q, args...).Scan(&r.ID, &r.ClusterID, &r.SnapshotID,
		&r.Target, &r.Verdict, &r.Score, &r.Blockers, &r.Warnings, &r.Infos, &evaluated, &bundles, &r.BundlesKey,
		&r.Report, &teams, &carried)
	if err == nil {
		err = json.Unmarshal([]byte(bundles), &r.Bundles)
	}
	if err == nil && carried.Valid {
		err = json.Unmarshal([]byte(carried.String), &r.Carried)
	}
	if err == nil {
		r.Teams, err = decodeTeams(teams)
	}
	if err != nil {
		return EvaluationRecord{}, s.classify(noRows(err))
	}
	r.EvaluatedAt = fromNanos(evaluated)
	return r, nil
}

func (s *sqlStore) History(ctx context.Context, clusterID int64, target string, limit int) ([]HistoryPoint, error) {
	if limit <= 0 {
		limit = math.MaxInt32
	}
	out, err := queryAll(ctx, s.r, qHistory, func(sc scanner) (HistoryPoint, error) {
		var (
			p         HistoryPoint
			evaluated int64
		)
		err := sc.Scan(&p.EvaluationID, &p.SnapshotID, &p.Target, &p.Verdict, &p.Score, &p.Blockers, &p.Warnings,
			&p.Infos, &evaluated, &p.BundlesKey)
		p.EvaluatedAt = fromNanos(evaluated)
		return p, err
	}, clusterID, target, limit)
	if err != nil {
		return nil, fmt.Errorf("read history of cluster %d at %q: %w", clusterID, target, s.classify(err))
	}
	return out, nil
}

func (s *sqlStore) Fleet(ctx context.Context) ([]FleetRow, error) {
	out, err := s.fleetRows(ctx, qFleet)
	if err != nil {
		return nil, fmt.Errorf("read fleet: %w", err)
	}
	return out, nil
}

func (s *sqlStore) ClusterCells(ctx context.Context, clusterID int64) ([]FleetRow, error) {
	out, err := s.fleetRows(ctx, qClusterCells, clusterID)
	if err != nil {
		return nil, fmt.Errorf("read fleet cells of cluster %d: %w", clusterID, err)
	}
	return out, nil
}

func (s *sqlStore) FleetVersion(ctx context.Context) (string, error) {
	var newest, cells int64
	if err := s.r.QueryRowContext(ctx, qFleetVersion).Scan(&newest, &cells); err != nil {
		return "", fmt.Errorf("read fleet version: %w", s.classify(err))
	}
	return fmt.Sprintf("%d/%d", newest, cells), nil
}

// fleetRows runs a fleet query and orders its rows by cluster name then target.
func (s *sqlStore) fleetRows(ctx context.Context, q string, args ...any) ([]FleetRow, error) {
	out, err := queryAll(ctx, s.r, q, func(sc scanner) (FleetRow, error) {
		var (
			r                   FleetRow
			uid                 sql.NullString
			lastSeen, evaluated int64
			teams               string
		)
		err := sc.Scan(&r.ClusterID, &r.ClusterName, &uid, &lastSeen, &r.ServerVersion, &r.Target, &r.EvaluationID,
			&r.SnapshotID, &r.Verdict, &r.Score, &r.Blockers, &r.Warnings, &evaluated, &r.BundlesKey, &teams)
		if err != nil {
			return r, err
		}
		r.ClusterUID, r.LastSeen, r.EvaluatedAt = uid.String, fromNanos(lastSeen), fromNanos(evaluated)
		r.Teams, err = decodeTeams(teams)
		return r, err
	}, args...)
	if err != nil {
		return nil, s.classify(err)
	}
	// The database's collation orders names (Postgres: the locale's); settle on bytes.
	slices.SortStableFunc(out, func(a, b FleetRow) int {
		if c := strings.Compare(a.ClusterName, b.ClusterName); c != 0 {
			return c
		}
		return strings.Compare(a.Target, b.Target)
	})
	return out, nil
}

type scanner interface{ Scan(...any) error }

func queryAll[T any](ctx context.Context, db *sql.DB, q string, scan func(scanner) (T, error), args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func noRows(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// nonNil keeps a nil slice from being stored as NULL in a NOT NULL column.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func nonNilBundles(b []Bundle) []Bundle {
	if b == nil {
		return []Bundle{}
	}
	return b
}

// encodeTeams is the teams column's text: a JSON object, '{}' for none.
func encodeTeams(teams map[string]TeamCell) (string, error) {
	if len(teams) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(teams)
	if err != nil {
		return "", fmt.Errorf("encode teams: %w", err)
	}
	return string(b), nil
}

// encodeCarried is the carried column's value: a JSON array, or NULL for none computed.
func encodeCarried(carried []string) (any, error) {
	if carried == nil {
		return nil, nil
	}
	b, err := json.Marshal(carried)
	if err != nil {
		return nil, fmt.Errorf("encode carried blockers: %w", err)
	}
	return string(b), nil
}

// decodeTeams reads the teams column back; no team is nil on both backends, as Evaluation
// documents, whether the row says '{}' or predates the column.
func decodeTeams(s string) (map[string]TeamCell, error) {
	var teams map[string]TeamCell
	if err := json.Unmarshal([]byte(s), &teams); err != nil {
		return nil, fmt.Errorf("decode teams: %w", err)
	}
	if len(teams) == 0 {
		return nil, nil
	}
	return teams, nil
}
