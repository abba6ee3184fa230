package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// OpenPostgres connects to the PostgreSQL database url names and applies pending
// migrations under an advisory lock, so replicas starting together migrate once. The
// pool reconnects by itself after the server restarts.
func OpenPostgres(ctx context.Context, url string) (Store, error) {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return nil, fmt.Errorf("open PostgreSQL database: %w", err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(4)
	db.SetConnMaxIdleTime(time.Minute)
	s := &sqlStore{w: db, r: db, d: postgresDialect, now: time.Now}
	if err := s.migratePostgres(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open PostgreSQL database: %w", s.classify(err))
	}
	return s, nil
}

const (
	qMigrateLock   = `SELECT pg_advisory_lock(hashtext('upgradescope:migrate'))`
	qMigrateUnlock = `SELECT pg_advisory_unlock(hashtext('upgradescope:migrate'))`
)

func (s *sqlStore) migratePostgres(ctx context.Context) error {
	ms, err := loadMigrations("postgres")
	if err != nil {
		return err
	}
	// The lock belongs to the session: hold it on one connection for the whole run.
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, qMigrateLock); err != nil {
		return fmt.Errorf("lock migrations: %w", err)
	}
	defer func() {
		// On a failed unlock the session may be gone, which frees the lock too; a
		// connection still holding it must not go back to the pool.
		if _, err := conn.ExecContext(context.WithoutCancel(ctx), qMigrateUnlock); err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	return migrate(ctx, conn, ms, s.now)
}

var postgresDialect = dialect{
	name:       "PostgreSQL",
	forShare:   " FOR SHARE",
	skipLocked: " FOR UPDATE OF d SKIP LOCKED",
	forUpdate:  " FOR UPDATE",
	// clock_timestamp, not now(): a lease set late in a long transaction is measured from
	// when it was set.
	clock:         `SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000000 AS BIGINT)`,
	advisoryLocks: true,
	unavailable: func(err error) bool {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			// Class 08 connection exceptions; admin/crash shutdown, cannot connect now;
			// too many connections.
			return strings.HasPrefix(pe.Code, "08") ||
				pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03" || pe.Code == "53300"
		}
		var ce *pgconn.ConnectError
		var ne net.Error
		return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) ||
			errors.Is(err, io.ErrUnexpectedEOF)
	},
	unique: func(err error) bool {
		var pe *pgconn.PgError
		return errors.As(err, &pe) && pe.Code == "23505"
	},
}
