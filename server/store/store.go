// Package store keeps the fleet server's state: clusters bound to their kube-system UIDs,
// ingest tokens, and (in later slices) snapshots and evaluations. One Store interface, two
// backends on database/sql — SQLite (modernc.org/sqlite) and PostgreSQL (pgx) — and one
// conformance suite, storetest.Run, that both must pass.
//
// Nothing that decides correctness lives in a Store's memory: several handles on one
// database (server replicas on one Postgres, or a restart) behave as one.
package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Store is safe for concurrent use by many goroutines and by many handles on one database.
// Every method answers ErrUnavailable (wrapped) when the database cannot be reached.
type Store interface {
	// Ping answers nil when the database answers.
	Ping(ctx context.Context) error
	// Close releases the handle; the database is left as it is.
	Close() error

	// BindCluster registers name bound to uid on its first call and returns the cluster.
	// The same uid again returns it. Another uid, or "" for a bound name, is an
	// ErrConflict; a name registered with uid "" is bound by the first non-empty uid after
	// it, and two UID-less callers share the name. Decided by the database (a unique name
	// and a conditional update), so callers racing on several handles get exactly one
	// winning uid.
	BindCluster(ctx context.Context, name, uid string) (Cluster, error)
	// Clusters lists every registered cluster ordered by id.
	Clusters(ctx context.Context) ([]Cluster, error)

	// CreateIngestToken stores the sha256 hex hash and the first characters (prefix) of a
	// token that may push only as cluster, which need not be registered yet. The token
	// itself is never given to the store. A hash already stored is an ErrConflict.
	CreateIngestToken(ctx context.Context, cluster, hash, prefix string) (Token, error)
	// IngestTokenCluster answers the cluster name a token's hash pushes as; ErrNotFound
	// when the hash is unknown or revoked.
	IngestTokenCluster(ctx context.Context, hash string) (string, error)
	// Tokens lists ingest tokens ordered by id, revoked ones included.
	Tokens(ctx context.Context) ([]Token, error)
	// RevokeTokens revokes token id, or every active token when all is set (id is then
	// ignored), and answers how many it revoked; revoking a revoked token answers 0.
	// An unknown id is ErrNotFound.
	RevokeTokens(ctx context.Context, id int64, all bool) (int, error)
}

// Cluster is a registered cluster name and the kube-system UID bound to it ("" while none).
type Cluster struct {
	ID        int64
	Name      string
	UID       string
	FirstSeen time.Time
	LastSeen  time.Time
}

// Token describes a stored ingest token: never the token, nor its hash.
type Token struct {
	ID      int64
	Cluster string
	Prefix  string
	Created time.Time
	Revoked time.Time // zero while active
}

// Errors a Store answers, wrapped; test with errors.Is.
var (
	// ErrNotFound: no such record.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the database refused the change; the wrapping error names the reason.
	ErrConflict = errors.New("conflict")
	// ErrSchemaTooNew: the database was migrated by a newer binary.
	ErrSchemaTooNew = errors.New("database schema is newer than this binary")
	// ErrUnavailable: the database could not be reached or is busy; retrying later may
	// succeed (servers answer 503).
	ErrUnavailable = errors.New("database unavailable")
)

// Reasons carried by ErrConflict.
const (
	ReasonOtherUID   = "name bound to another cluster UID"
	ReasonNoUID      = "push without a UID to a bound name"
	ReasonTokenTaken = "token hash already stored"
)

func conflict(reason string) error { return fmt.Errorf("%w: %s", ErrConflict, reason) }

// Open opens the database dsn names and applies pending migrations: a postgres:// or
// postgresql:// URL opens PostgreSQL, anything else is a SQLite file path (a leading
// "file:" is dropped; the rest is a path taken literally).
func Open(ctx context.Context, dsn string) (Store, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return OpenPostgres(ctx, dsn)
	}
	return OpenSQLite(ctx, strings.TrimPrefix(dsn, "file:"))
}
