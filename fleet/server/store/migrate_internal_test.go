package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/pgtest"
)

// seed0007 is data as a 0007 server stored it: two clusters, a pruned evaluation (so the
// id sequence is past the largest id left), teams, carried blockers and fleet cells.
const seed0007 = `
INSERT INTO clusters (id, name, uid, first_seen, last_seen, server_version, latest_snapshot_id, latest_hash)
	VALUES (1, 'prod', 'uid-1', 1, 1, 'v1.30.4', NULL, NULL), (2, 'dev', 'uid-2', 1, 1, 'v1.31.0', NULL, NULL);
INSERT INTO snapshots (id, cluster_id, hash, received_at, collected_at, agent_version, kb_version, server_version, inventory)
	VALUES (1, 1, 'h1', 1, NULL, 'v1', 'kb', 'v1.30.4', 'inv1'), (2, 2, 'h2', 1, NULL, 'v1', 'kb', 'v1.31.0', 'inv2');
UPDATE clusters SET latest_snapshot_id = id, latest_hash = 'h' || id;
INSERT INTO evaluations (id, cluster_id, snapshot_id, target, verdict, score, blockers, warnings, infos, evaluated_at,
	bundles, bundles_key, report, teams, carried) VALUES
	(1, 1, 1, '1.31', 'blocked', 40, 2, 1, 0, 5, '[]', 'core@r1', 'rep1', '{"payments":{"verdict":"blocked","score":40,"blockers":2,"warnings":1}}', '["b1","b2"]'),
	(2, 1, 1, '1.32', 'ready', 100, 0, 0, 0, 5, '[]', 'core@r1', 'rep2', '{}', NULL),
	(3, 2, 2, '1.32', 'unknown', 70, 0, 0, 1, 5, '[]', 'core@r1', 'rep3', '{}', NULL),
	(4, 2, 2, '1.33', 'ready', 100, 0, 0, 0, 5, '[]', 'core@r1', 'rep4', '{}', NULL);
DELETE FROM evaluations WHERE id = 4;
INSERT INTO fleet_cells (cluster_id, target, evaluation_id, snapshot_id, verdict, score, blockers, warnings,
	evaluated_at, bundles_key, teams) VALUES
	(1, '1.31', 1, 1, 'blocked', 40, 2, 1, 5, 'core@r1', '{}'),
	(1, '1.32', 2, 1, 'ready', 100, 0, 0, 5, 'core@r1', '{}'),
	(2, '1.32', 3, 2, 'unknown', 70, 0, 0, 5, 'core@r1', '{}');`

// TestMigrationFrom0007KeepsEvaluationsAndFleetCells migrates a database holding 0007's
// data to the per-bundle-set key: every evaluation and fleet cell survives as it was, a
// snapshot then takes a second evaluation at a target with another bundle set (but not
// the same set twice), foreign keys still cascade, and no evaluation id is reused.
func TestMigrationFrom0007KeepsEvaluationsAndFleetCells(t *testing.T) {
	for _, b := range []struct {
		name string
		open func(t *testing.T) (db *sql.DB, full func() *sqlStore)
	}{
		{"SQLite", openSQLiteAt0007},
		{"PostgreSQL", openPostgresAt0007},
	} {
		t.Run(b.name, func(t *testing.T) {
			db, full := b.open(t)
			seed := seed0007
			if b.name == "PostgreSQL" {
				seed += `SELECT setval('evaluations_id_seq', 4);`
			}
			if _, err := db.ExecContext(t.Context(), seed); err != nil {
				t.Fatalf("seed 0007 data: %v", err)
			}
			before := dumpEvaluations(t, db)
			s := full()
			if got := dumpEvaluations(t, s.w); got != before {
				t.Errorf("evaluations after migrating:\n%s\nwant as before:\n%s", got, before)
			}
			if got := dumpCells(t, s.w); got != "1/1.31→1 1/1.32→2 2/1.32→3" {
				t.Errorf("fleet cells after migrating = %s, want every cell on its evaluation", got)
			}
			checkPerBundleSetKey(t, s)
		})
	}
}

// sqliteAt0007 is a new SQLite file migrated to 0007 and a handle on it.
func sqliteAt0007(t *testing.T) (string, *sql.DB) {
	path := filepath.Join(t.TempDir(), "upgradescope.db")
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	migrateTo(t, db, "sqlite", 7)
	return path, db
}

func openSQLiteAt0007(t *testing.T) (*sql.DB, func() *sqlStore) {
	path, db := sqliteAt0007(t)
	return db, func() *sqlStore {
		_ = db.Close()
		s, err := openSQLite(t.Context(), path)
		if err != nil {
			t.Fatalf("open and migrate: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
}

func openPostgresAt0007(t *testing.T) (*sql.DB, func() *sqlStore) {
	url := pgtest.URL(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	migrateTo(t, db, "postgres", 7)
	return db, func() *sqlStore {
		s, err := OpenPostgres(t.Context(), url)
		if err != nil {
			t.Fatalf("open and migrate: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s.(*sqlStore)
	}
}

// migrateTo applies the dialect's migrations up to version on db.
func migrateTo(t *testing.T, db *sql.DB, dialect string, version int) {
	t.Helper()
	ms, err := loadMigrations(dialect)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := migrate(t.Context(), conn, ms[:version], time.Now); err != nil {
		t.Fatalf("migrate to %04d: %v", version, err)
	}
}

func checkPerBundleSetKey(t *testing.T, s *sqlStore) {
	ctx := t.Context()
	insert := func(key string) (int64, error) {
		var id int64
		err := s.w.QueryRowContext(ctx, qInsertEvaluation+` ON CONFLICT (snapshot_id, target, bundles_key) DO NOTHING RETURNING id`,
			1, 1, "1.31", "ready", 100, 0, 0, 0, 6, "[]", key, []byte("rep"), "{}", nil).Scan(&id)
		return id, err
	}
	id, err := insert("core@r2")
	if err != nil {
		t.Fatalf("a second evaluation of a snapshot at a target with another bundle set: %v", err)
	}
	if id <= 4 {
		t.Errorf("new evaluation id = %d, want past every id used before (4)", id)
	}
	if _, err := insert("core@r2"); err != sql.ErrNoRows {
		t.Errorf("the same bundle set again: %v, want nothing stored (ON CONFLICT DO NOTHING)", err)
	}
	var indexes int
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('evaluations_history', 'evaluations_decided')`
	if s.d.advisoryLocks {
		q = `SELECT count(*) FROM pg_indexes WHERE indexname IN ('evaluations_history', 'evaluations_decided')`
	}
	if err := s.w.QueryRowContext(ctx, q).Scan(&indexes); err != nil || indexes != 2 {
		t.Errorf("evaluations indexes = %d, %v; want evaluations_history and evaluations_decided", indexes, err)
	}
	// fleet_cells references the rebuilt table: deleting an evaluation takes its cell.
	if _, err := s.w.ExecContext(ctx, `DELETE FROM evaluations WHERE id = 3`); err != nil {
		t.Fatalf("delete evaluation 3: %v", err)
	}
	if got := dumpCells(t, s.w); got != "1/1.31→1 1/1.32→2" {
		t.Errorf("fleet cells after deleting evaluation 3 = %s, want its cell gone (foreign keys cascade)", got)
	}
	if err := s.DeleteCluster(ctx, 1); err != nil {
		t.Fatalf("DeleteCluster: %v", err)
	}
	if got := dumpCells(t, s.w); got != "" {
		t.Errorf("fleet cells after deleting cluster 1 = %s, want none", got)
	}
}

func dumpEvaluations(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT id, cluster_id, snapshot_id, target, verdict, score, blockers,
	warnings, infos, evaluated_at, bundles, bundles_key, report, teams, COALESCE(carried, 'NULL') FROM evaluations ORDER BY id`)
	if err != nil {
		t.Fatalf("read evaluations: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v [15]any
		ptrs := make([]any, len(v))
		for i := range v {
			ptrs[i] = &v[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, x := range v {
			if b, ok := x.([]byte); ok {
				v[i] = string(b)
			}
		}
		out = append(out, fmt.Sprint(v[:]...))
	}
	return strings.Join(out, "\n")
}

func dumpCells(t *testing.T, db *sql.DB) string {
	t.Helper()
	rows, err := db.QueryContext(context.WithoutCancel(t.Context()),
		`SELECT cluster_id, target, evaluation_id FROM fleet_cells ORDER BY cluster_id, target`)
	if err != nil {
		t.Fatalf("read fleet cells: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c, e int64
		var target string
		if err := rows.Scan(&c, &target, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%d/%s→%d", c, target, e))
	}
	return strings.Join(out, " ")
}

// TestMigrationWithADanglingReferenceFailsAndChangesNothing: a 0007 SQLite file holding a
// fleet cell whose evaluation is gone (written with foreign keys off) is refused by the
// rebuild's foreign_key_check; the migration rolls back, and the file is still at 0007.
func TestMigrationWithADanglingReferenceFailsAndChangesNothing(t *testing.T) {
	path, db := sqliteAt0007(t)
	ctx := t.Context()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`PRAGMA foreign_keys = OFF`, seed0007, `DELETE FROM evaluations WHERE id = 3`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	_ = conn.Close()
	_ = db.Close()
	s, err := openSQLite(ctx, path)
	if err == nil {
		_ = s.Close()
		t.Fatal("migrating a file with a dangling fleet cell succeeded, want foreign_key_check to refuse it")
	}
	if !strings.Contains(err.Error(), "0008") || !strings.Contains(err.Error(), "foreign_key_check") {
		t.Errorf("error = %v, want it to name migration 0008 and foreign_key_check", err)
	}
	raw, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var version int
	if err := raw.QueryRowContext(ctx, qSchemaVersion).Scan(&version); err != nil || version != 7 {
		t.Errorf("schema version after the refused migration = %d, %v; want 7", version, err)
	}
}
