package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// dialect holds what differs between the backends beyond DDL: which failures are
// connection-class and which are unique-constraint violations. DML is shared: both
// drivers bind $N placeholders by ordinal.
type dialect struct {
	name        string
	unavailable func(error) bool
	unique      func(error) bool
	// forShare ends a SELECT that must hold the rows it read until commit (Postgres);
	// SQLite's single writer serialises write transactions already, and has no such clause.
	forShare string
	// skipLocked ends the outbox's claim query: concurrent claimers on PostgreSQL skip the
	// rows another one is leasing instead of queueing behind it; SQLite has one writer.
	skipLocked string
	// forUpdate ends a SELECT that takes the rows it read for an update to come (Postgres).
	forUpdate string
	// clock is the query answering the database's time in Unix nanoseconds, which outbox
	// leases are measured by; empty on SQLite, whose one writing process's clock serves.
	clock string
	// advisoryLocks: WithLock takes a database-wide lock (Postgres) rather than this
	// handle's own.
	advisoryLocks bool
}

// sqlStore is the Store both backends share. w takes every write (and, on SQLite, is one
// connection with BEGIN IMMEDIATE, so writers queue in Go rather than on the file lock);
// r serves reads and is w itself on Postgres.
type sqlStore struct {
	w, r  *sql.DB
	d     dialect
	now   func() time.Time
	locks localLocks // WithLock's locks where the dialect has no advisory locks
}

// SQLDB is the handle's write pool, for tests and repair tools that must reach past the
// Store interface (the conformance suite plants a future schema version with it). It is
// not part of Store, and what it reads and writes is not an API.
func (s *sqlStore) SQLDB() *sql.DB { return s.w }

// classify wraps connection-class failures with ErrUnavailable; other errors pass as
// they are.
func (s *sqlStore) classify(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || errors.Is(err, ErrConflict) ||
		errors.Is(err, ErrNotFound) || errors.Is(err, ErrSchemaTooNew) {
		return err
	}
	if s.d.unavailable(err) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

func (s *sqlStore) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Ping asks the read pool, so a readiness probe does not queue behind SQLite's writer.
func (s *sqlStore) Ping(ctx context.Context) error {
	if err := s.r.PingContext(ctx); err != nil {
		return fmt.Errorf("ping %s: %w", s.d.name, s.classify(err))
	}
	return nil
}

func (s *sqlStore) Close() error {
	err := s.w.Close()
	if s.r != s.w {
		err = errors.Join(err, s.r.Close())
	}
	return err
}

const (
	qInsertCluster = `INSERT INTO clusters (name, uid, first_seen, last_seen) VALUES ($1, $2, $3, $3)
ON CONFLICT (name) DO NOTHING`
	// clusterColumns are what scanCluster reads.
	clusterColumns = `id, name, uid, first_seen, last_seen, server_version, COALESCE(latest_snapshot_id, 0), agent_bundles`
	qClusterByName = `SELECT ` + clusterColumns + ` FROM clusters WHERE name = $1`
	qClusterByID   = `SELECT ` + clusterColumns + ` FROM clusters WHERE id = $1`
	qBindUID       = `UPDATE clusters SET uid = $2 WHERE id = $1 AND uid IS NULL`
	qClusters      = `SELECT ` + clusterColumns + ` FROM clusters ORDER BY id`
)

func (s *sqlStore) BindCluster(ctx context.Context, name, uid string) (Cluster, error) {
	var c Cluster
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		c, err = bindCluster(ctx, tx, name, uid, s.now())
		return err
	})
	if err != nil {
		return Cluster{}, fmt.Errorf("bind cluster %q: %w", name, s.classify(err))
	}
	return c, nil
}

// bindCluster runs inside a write transaction (BindCluster's, or Ingest's). The unique
// name decides who registers a name: a racing insert waits for the winner's commit and
// then does nothing; a UID-less row is bound by a conditional update, and the loser of
// that race re-reads the winner's UID.
func bindCluster(ctx context.Context, tx *sql.Tx, name, uid string, now time.Time) (Cluster, error) {
	if _, err := tx.ExecContext(ctx, qInsertCluster, name, nullString(uid), now.UnixNano()); err != nil {
		return Cluster{}, fmt.Errorf("insert: %w", err)
	}
	for range 2 {
		c, err := scanCluster(tx.QueryRowContext(ctx, qClusterByName, name))
		if err != nil {
			return Cluster{}, err
		}
		switch {
		case c.UID == uid:
			return c, nil
		case uid == "":
			return Cluster{}, conflict(ReasonNoUID)
		case c.UID != "":
			return Cluster{}, conflict(ReasonOtherUID)
		}
		res, err := tx.ExecContext(ctx, qBindUID, c.ID, uid)
		if err != nil {
			return Cluster{}, fmt.Errorf("bind uid: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return Cluster{}, fmt.Errorf("bind uid: %w", err)
		} else if n == 1 {
			c.UID = uid
			return c, nil
		}
		// Bound by another transaction since we read it: read again and compare.
	}
	return Cluster{}, fmt.Errorf("cluster %q changed twice while binding", name)
}

func (s *sqlStore) Clusters(ctx context.Context) ([]Cluster, error) {
	rows, err := s.r.QueryContext(ctx, qClusters)
	if err != nil {
		return nil, fmt.Errorf("list clusters: %w", s.classify(err))
	}
	defer rows.Close()
	var out []Cluster
	for rows.Next() {
		c, err := scanCluster(rows)
		if err != nil {
			return nil, fmt.Errorf("list clusters: %w", s.classify(err))
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list clusters: %w", s.classify(err))
	}
	return out, nil
}

func scanCluster(row interface{ Scan(...any) error }) (Cluster, error) {
	var (
		c           Cluster
		uid         sql.NullString
		first, last int64
		bundles     string
	)
	if err := row.Scan(&c.ID, &c.Name, &uid, &first, &last, &c.ServerVersion, &c.LatestSnapshotID, &bundles); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Cluster{}, ErrNotFound
		}
		return Cluster{}, err
	}
	c.UID = uid.String
	c.FirstSeen, c.LastSeen = fromNanos(first), fromNanos(last)
	if err := json.Unmarshal([]byte(bundles), &c.AgentBundles); err != nil {
		return Cluster{}, fmt.Errorf("decode agent bundles: %w", err)
	}
	if len(c.AgentBundles) == 0 {
		c.AgentBundles = nil
	}
	return c, nil
}

const (
	qInsertToken = `INSERT INTO ingest_tokens (cluster_name, hash, prefix, created_at) VALUES ($1, $2, $3, $4)
RETURNING id`
	qTokenCluster = `SELECT cluster_name FROM ingest_tokens WHERE hash = $1 AND revoked_at IS NULL`
	qDeleteTokens = `DELETE FROM ingest_tokens WHERE cluster_name = $1`
	qMoveTokens   = `UPDATE ingest_tokens SET cluster_name = $2 WHERE cluster_name = $1`
	qTokens       = `SELECT id, cluster_name, prefix, created_at, revoked_at FROM ingest_tokens ORDER BY id`
	qRevokeAll    = `UPDATE ingest_tokens SET revoked_at = $1 WHERE revoked_at IS NULL`
	qRevokeOne    = `UPDATE ingest_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`
	qTokenExists  = `SELECT count(*) FROM ingest_tokens WHERE id = $1`
)

func (s *sqlStore) CreateIngestToken(ctx context.Context, cluster, hash, prefix string) (Token, error) {
	t := Token{Cluster: cluster, Prefix: prefix, Created: fromNanos(s.now().UnixNano())}
	err := s.w.QueryRowContext(ctx, qInsertToken, cluster, hash, prefix, t.Created.UnixNano()).Scan(&t.ID)
	if err != nil {
		if s.d.unique(err) {
			err = conflict(ReasonTokenTaken)
		}
		return Token{}, fmt.Errorf("create ingest token for %q: %w", cluster, s.classify(err))
	}
	return t, nil
}

func (s *sqlStore) IngestTokenCluster(ctx context.Context, hash string) (string, error) {
	var name string
	if err := s.r.QueryRowContext(ctx, qTokenCluster, hash).Scan(&name); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			err = ErrNotFound
		}
		return "", fmt.Errorf("look up ingest token: %w", s.classify(err))
	}
	return name, nil
}

func (s *sqlStore) Tokens(ctx context.Context) ([]Token, error) {
	rows, err := s.r.QueryContext(ctx, qTokens)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", s.classify(err))
	}
	defer rows.Close()
	var out []Token
	for rows.Next() {
		var (
			t       Token
			created int64
			revoked sql.NullInt64
		)
		if err := rows.Scan(&t.ID, &t.Cluster, &t.Prefix, &created, &revoked); err != nil {
			return nil, fmt.Errorf("list tokens: %w", s.classify(err))
		}
		t.Created = fromNanos(created)
		if revoked.Valid {
			t.Revoked = fromNanos(revoked.Int64)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tokens: %w", s.classify(err))
	}
	return out, nil
}

func (s *sqlStore) RevokeTokens(ctx context.Context, id int64, all bool) (int, error) {
	return s.revoke(ctx, revokeQueries{all: qRevokeAll, one: qRevokeOne, exists: qTokenExists, kind: "token"}, id, all)
}

// revokeQueries are one token table's statements: revoke every active token, revoke one by
// id, and tell whether an id exists.
type revokeQueries struct{ all, one, exists, kind string }

// revoke revokes token id, or every active token when all is set, in one transaction, and
// answers how many it revoked. An id that revoked nothing is ErrNotFound unless it exists
// (already revoked answers 0).
func (s *sqlStore) revoke(ctx context.Context, q revokeQueries, id int64, all bool) (int, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var (
			res sql.Result
			err error
		)
		if all {
			res, err = tx.ExecContext(ctx, q.all, s.now().UnixNano())
		} else {
			res, err = tx.ExecContext(ctx, q.one, id, s.now().UnixNano())
		}
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil || n > 0 || all {
			return err
		}
		var exists int
		if err := tx.QueryRowContext(ctx, q.exists, id).Scan(&exists); err != nil {
			return err
		}
		if exists == 0 {
			return fmt.Errorf("%s id %d: %w", q.kind, id, ErrNotFound)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("revoke %ss: %w", q.kind, s.classify(err))
	}
	return int(n), nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Times are stored as integer Unix nanoseconds in both backends and read back in UTC.
func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }
