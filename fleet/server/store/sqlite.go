package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Every connection: wait up to 5 s for the file lock, write-ahead log, enforce foreign
// keys, fsync the log on commit (a stored snapshot survives a power cut, not only a crash).
const sqlitePragmas = "_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)" +
	"&_pragma=synchronous(FULL)"

// OpenSQLite opens (creating it if missing) the SQLite database at path, taken literally
// ('%', '?' and '#' are part of the name), and applies pending migrations. A missing
// directory is created 0700; the file, its -wal and -shm are 0600, an existing file is
// tightened to 0600.
func OpenSQLite(ctx context.Context, path string) (Store, error) {
	if path == "" {
		return nil, errors.New("open SQLite database: empty path")
	}
	if strings.ContainsRune(path, 0) {
		return nil, fmt.Errorf("open SQLite database %q: the path contains a NUL byte", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open SQLite database %q: %w", path, err)
	}
	if err := prepareSQLiteFile(abs); err != nil {
		return nil, fmt.Errorf("open SQLite database %q: %w", path, err)
	}
	s, err := openSQLite(ctx, abs)
	if err != nil {
		return nil, fmt.Errorf("open SQLite database %q: %w", path, err)
	}
	return s, nil
}

func openSQLite(ctx context.Context, abs string) (*sqlStore, error) {
	// Writes go through one connection whose transactions start with BEGIN IMMEDIATE:
	// SQLite has one writer per file anyway, and a deferred transaction that reads then
	// writes fails with SQLITE_BUSY instead of waiting.
	w, err := sql.Open("sqlite", sqliteDSN(abs)+"&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	r, err := sql.Open("sqlite", sqliteDSN(abs))
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	s := &sqlStore{w: w, r: r, d: sqliteDialect, now: time.Now}
	if err := s.migrateSQLite(ctx); err != nil {
		_ = s.Close()
		return nil, s.classify(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Chmod(abs+suffix, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = s.Close()
			return nil, fmt.Errorf("restrict %s: %w", suffix, err)
		}
	}
	return s, nil
}

func (s *sqlStore) migrateSQLite(ctx context.Context) error {
	ms, err := loadMigrations("sqlite")
	if err != nil {
		return err
	}
	// Two processes opening one new file at once can both be switching it to WAL, which
	// SQLite answers with SQLITE_BUSY without calling the busy handler: retry for as long
	// as busy_timeout would have waited.
	deadline := time.Now().Add(openBusyWait)
	for {
		err = s.migrateOnce(ctx, ms)
		if err == nil || !sqliteDialect.unavailable(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// openBusyWait is busy_timeout in sqlitePragmas.
const openBusyWait = 5 * time.Second

func (s *sqlStore) migrateOnce(ctx context.Context, ms []migration) error {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return migrate(ctx, conn, ms, s.now)
}

// prepareSQLiteFile creates the directory (0700) and the file (0600) before SQLite does,
// so neither is ever more open than that, and tightens an existing file. SQLite creates
// -wal and -shm with the database file's mode.
func prepareSQLiteFile(abs string) error {
	dir := filepath.Dir(abs)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create directory: %w", err)
		}
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(abs, 0o600); err != nil {
		return fmt.Errorf("restrict: %w", err)
	}
	return nil
}

// sqliteDSN is a file: URI naming abs literally: SQLite decodes %XX in URIs, and '?' and
// '#' would end the path.
func sqliteDSN(abs string) string {
	escaped := strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(abs)
	return "file:" + escaped + "?" + sqlitePragmas
}

var sqliteDialect = dialect{
	name: "SQLite",
	unavailable: func(err error) bool {
		if errors.Is(err, driver.ErrBadConn) {
			return true
		}
		var se *sqlite.Error
		if errors.As(err, &se) {
			switch se.Code() & 0xff {
			case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
				return true
			}
		}
		return false
	},
	unique: func(err error) bool {
		var se *sqlite.Error
		return errors.As(err, &se) &&
			(se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
	},
}
