package store

import (
	"context"
	"database/sql"
	"embed"
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
}

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
		ms = append(ms, migration{version: v, name: name, sql: string(body)})
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
	if _, err := tx.ExecContext(ctx, qRecordMigration, m.version, m.name, now.UnixNano()); err != nil {
		return err
	}
	return tx.Commit()
}
