package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

//go:embed migrations
var migrationFiles embed.FS

// migration is one embedded migrations/<dialect>/NNNN_name.sql file. Released
// migrations are never edited: a change is a new file.
type migration struct {
	version int
	name    string
	sql     string
	// foreignKeysOff: the migration rebuilds a table others reference (SQLite), so it runs
	// with foreign keys off on its connection and must leave foreign_key_check empty.
	foreignKeysOff bool
}

// foreignKeysOffMarker, as a migration's first line, sets foreignKeysOff.
const foreignKeysOffMarker = "-- migrate: foreign_keys off"

func loadMigrations(dialect string) ([]migration, error) {
	dir := path.Join("migrations", dialect)
	entries, err := fs.ReadDir(migrationFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s/%s: not NNNN_name.sql", dir, e.Name())
		}
		body, err := fs.ReadFile(migrationFiles, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration: %w", err)
		}
		ms = append(ms, migration{version: v, name: name, sql: string(body),
			foreignKeysOff: strings.HasPrefix(string(body), foreignKeysOffMarker+"\n")})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migrations %s: version %d where %d was expected", dir, m.version, i+1)
		}
	}
	return ms, nil
}

type schemaTooNewError struct{ have, knows int }

func (e *schemaTooNewError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this binary (knows %d): run a newer upgradescope",
		e.have, e.knows)
}

func (e *schemaTooNewError) Is(target error) bool { return target == ErrSchemaTooNew }

const (
	qCreateMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version INTEGER PRIMARY KEY,
	name TEXT NOT NULL,
	applied_at BIGINT NOT NULL
)`
	qSchemaVersion   = `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`
	qMigrationExists = `SELECT count(*) FROM schema_migrations WHERE version = $1`
	qRecordMigration = `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`
)

// migrate applies the migrations conn's database lacks, in order, each in its own
// transaction with its bookkeeping row, so a failed one leaves no trace and a re-run is a
// no-op. The caller serialises concurrent migrators (Postgres: an advisory lock held on
// conn; SQLite: conn's transactions are BEGIN IMMEDIATE, and each re-checks its row).
func migrate(ctx context.Context, conn *sql.Conn, ms []migration, now func() time.Time) error {
	if _, err := conn.ExecContext(ctx, qCreateMigrations); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var have int
	if err := conn.QueryRowContext(ctx, qSchemaVersion).Scan(&have); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if have > len(ms) {
		return &schemaTooNewError{have: have, knows: len(ms)}
	}
	for _, m := range ms[have:] {
		if err := applyMigration(ctx, conn, m, now()); err != nil {
			return fmt.Errorf("apply migration %04d_%s: %w", m.version, m.name, err)
		}
	}
	return nil
}

func applyMigration(ctx context.Context, conn *sql.Conn, m migration, now time.Time) error {
	if m.foreignKeysOff {
		return withoutForeignKeys(ctx, conn, func() error { return applyMigrationTx(ctx, conn, m, now, true) })
	}
	return applyMigrationTx(ctx, conn, m, now, false)
}

// withoutForeignKeys runs fn with SQLite's foreign keys off on conn: the pragma is a no-op
// inside a transaction, so it is set around fn's. A connection whose keys could not be
// turned back on never returns to the pool.
func withoutForeignKeys(ctx context.Context, conn *sql.Conn, fn func() error) error {
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return fmt.Errorf("turn foreign keys off: %w", err)
	}
	err := fn()
	if _, onErr := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`); onErr != nil {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		return errors.Join(err, fmt.Errorf("turn foreign keys back on: %w", onErr))
	}
	return err
}

// checkForeignKeys fails when a row references one that does not exist, naming the first.
func checkForeignKeys(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return fmt.Errorf("foreign_key_check: %w", err)
	}
	defer rows.Close()
	if rows.Next() {
		var table, parent string
		var rowid sql.NullInt64
		var fk int64
		if err := rows.Scan(&table, &rowid, &parent, &fk); err != nil {
			return fmt.Errorf("foreign_key_check: %w", err)
		}
		return fmt.Errorf("foreign_key_check: row %d of %s references a missing row of %s", rowid.Int64, table, parent)
	}
	return rows.Err()
}

func applyMigrationTx(ctx context.Context, conn *sql.Conn, m migration, now time.Time, checkKeys bool) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }() // a no-op after Commit
	var done int
	if err := tx.QueryRowContext(ctx, qMigrationExists, m.version).Scan(&done); err != nil {
		return err
	}
	if done > 0 {
		return nil // another process applied it since we read the version
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	if checkKeys {
		if err := checkForeignKeys(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, qRecordMigration, m.version, m.name, now.UnixNano()); err != nil {
		return err
	}
	return tx.Commit()
}
