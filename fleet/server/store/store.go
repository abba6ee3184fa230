// Package store keeps the fleet server's state: clusters bound to their kube-system UIDs,
// ingest and read tokens, inventory snapshots and the evaluations the server computed for them
// (one per target), and fleet cells, the newest stored evaluation per cluster and target.
// The store holds data only: it never evaluates, it stores what the server computed. One Store interface, two
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
	// Cluster answers one registered cluster; ErrNotFound for an unknown id.
	Cluster(ctx context.Context, id int64) (Cluster, error)
	// DeleteCluster removes the cluster, its snapshots, evaluations, fleet cells, audit
	// calls and queued notifications, and the ingest tokens minted for its name, in one
	// transaction; ErrNotFound for an unknown id.
	DeleteCluster(ctx context.Context, id int64) error
	// RenameCluster gives the cluster a new name, keeping its UID, history and audit calls,
	// and moves the ingest tokens minted for the old name to the new one; ErrNotFound for an
	// unknown id, ErrConflict (ReasonNameTaken) when another cluster has the name.
	RenameCluster(ctx context.Context, id int64, name string) (Cluster, error)
	// Prune deletes snapshots received before cutoff, with their evaluations, except each
	// cluster's latest snapshot, every snapshot a fleet cell points at (the newest
	// evaluation per target in use) and every snapshot holding a target's last decided
	// evaluation (LastDecidedEvaluation), and answers how many snapshots it deleted. On the
	// snapshots kept it also deletes evaluations made before cutoff that a newer evaluation
	// of the same snapshot and target superseded, unless a fleet cell or a target's last
	// decided evaluation is one.
	Prune(ctx context.Context, cutoff time.Time) (int, error)
	// WithLock runs fn while holding the database-wide lock called name, unless another
	// handle holds it, and answers whether fn ran. PostgreSQL takes a session advisory
	// lock, so periodic work runs on one replica at a time; a SQLite file has one server,
	// so the lock is this process's.
	WithLock(ctx context.Context, name string, fn func(ctx context.Context) error) (bool, error)

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

	// CreateReadToken stores the sha256 hex hash and prefix of a read token scoped to
	// teams (validated by the caller; stored sorted and distinct, and [AllTeams] when the
	// list holds AllTeams), and in the same transaction closes the read API for good
	// (ReadAPIClosed). A hash already stored is an ErrConflict.
	CreateReadToken(ctx context.Context, teams []string, hash, prefix string) (ReadToken, error)
	// ReadTokenTeams answers the teams a read token's hash may read ([AllTeams]: the
	// whole fleet); ErrNotFound when the hash is unknown or revoked.
	ReadTokenTeams(ctx context.Context, hash string) ([]string, error)
	// ReadTokens lists read tokens ordered by id, revoked ones included.
	ReadTokens(ctx context.Context) ([]ReadToken, error)
	// RevokeReadTokens is RevokeTokens for read tokens; it never reopens the read API.
	RevokeReadTokens(ctx context.Context, id int64, all bool) (int, error)
	// ReadAPIClosed answers true once any read token was created, on every handle on the
	// database, and stays true after every read token is revoked.
	ReadAPIClosed(ctx context.Context) (bool, error)

	// Ingest stores a pushed snapshot in one transaction, committed before it returns:
	// it binds in.ClusterName to in.ClusterUID as BindCluster does (ErrConflict, nothing
	// stored), and when in.Hash equals the cluster's latest snapshot hash answers
	// Duplicate with that snapshot's id, writing nothing but the cluster's last-seen time
	// and in.Evaluations at targets that snapshot has no evaluation at (an earlier
	// evaluation failed, or --targets grew).
	// Otherwise it stores the snapshot, one evaluation per in.Evaluations entry (targets
	// must be distinct) and moves the cluster's fleet cell for each of those targets.
	// Ingests of one cluster are serialised by the database (a lock on its row), so the
	// duplicate check is exact across handles.
	Ingest(ctx context.Context, in Ingest) (IngestResult, error)
	// Head answers the cluster registered as name with its latest snapshot, for a
	// duplicate pre-check before evaluating (Ingest checks again); ErrNotFound when the
	// name is not registered.
	Head(ctx context.Context, name string) (ClusterHead, error)
	// Reevaluate stores evaluations of a cluster's latest snapshot made with another
	// bundle set, as Ingest stores a push's, and answers how many it stored: 0, nil when
	// every one was stored and shown already (another replica's pass, or a duplicate
	// push, got there first). An evaluation stored earlier with the same set that no
	// fleet cell shows any more (the set was rolled back to) is replaced. It stores nothing when the snapshot is no longer
	// the latest (ErrSuperseded), for an unknown cluster (ErrNotFound), or when a
	// baseline moved (ErrBaselineMoved). Notification is enqueued only when it answers
	// more than 0.
	Reevaluate(ctx context.Context, re Reevaluation) (int, error)
	// LatestSnapshot answers the cluster's newest snapshot with its inventory;
	// ErrNotFound when it has none.
	LatestSnapshot(ctx context.Context, clusterID int64) (SnapshotRecord, error)
	// LatestEvaluation answers the newest stored evaluation of the cluster at target,
	// report included. It may belong to an older snapshot than the latest when the latest
	// was not evaluated at target (compare SnapshotID); ErrNotFound when there is none.
	LatestEvaluation(ctx context.Context, clusterID int64, target string) (EvaluationRecord, error)
	// Evaluation answers the stored evaluation id, report included; ErrNotFound when there
	// is none (never stored, or pruned). An id is never reused, so what it answers for an
	// id never changes: a reader may keep what it derives from it (the fleet's findings).
	Evaluation(ctx context.Context, id int64) (EvaluationRecord, error)
	// LastDecidedEvaluation answers the newest stored evaluation of the cluster at target
	// whose verdict is decided (ready or blocked), report included: the baseline a new
	// evaluation's notifications are computed against. ErrNotFound when there is none.
	LastDecidedEvaluation(ctx context.Context, clusterID int64, target string) (EvaluationRecord, error)
	// History answers the cluster's stored evaluations at target, newest first, at most
	// limit of them (limit ≤ 0: all); empty, not an error, for an unknown cluster or target.
	History(ctx context.Context, clusterID int64, target string, limit int) ([]HistoryPoint, error)
	// Fleet answers every fleet cell, one per cluster and evaluated target, ordered by
	// cluster name then target (byte order on both backends). A cluster never evaluated
	// has no row.
	Fleet(ctx context.Context) ([]FleetRow, error)
	// ClusterCells answers one cluster's fleet cells ordered by target; empty for a
	// cluster never evaluated or unknown.
	ClusterCells(ctx context.Context, clusterID int64) ([]FleetRow, error)
	// FleetVersion answers a value that changes whenever a fleet cell does: the newest
	// evaluation a cell points at and how many cells there are (evaluation ids are never
	// reused, and every change to a cell either points it at a new evaluation or deletes
	// it). A reader may keep Fleet's rows for as long as this is unchanged.
	FleetVersion(ctx context.Context) (string, error)

	// UpdateAuditCalls stores one more audit webhook batch of the cluster registered as
	// name: it calls fn with the state stored so far (nil before the first batch) and
	// stores what fn answers as the state, counting the batch, in one transaction that
	// holds the cluster's audit row, so concurrent batches of one cluster on any handles
	// queue and none is lost. It answers the record stored. ErrNotFound when no cluster has
	// the name; an error of fn stores nothing and is answered wrapped. fn runs holding the
	// row and must be quick. DeleteCluster deletes the record; RenameCluster keeps it.
	UpdateAuditCalls(ctx context.Context, name string, fn func(section []byte) ([]byte, error)) (AuditRecord, error)
	// AuditCalls answers the cluster's audit record; ErrNotFound before its first batch.
	AuditCalls(ctx context.Context, clusterID int64) (AuditRecord, error)

	Outbox
}

// Cluster is a registered cluster name and the kube-system UID bound to it ("" while none).
type Cluster struct {
	ID        int64
	Name      string
	UID       string
	FirstSeen time.Time
	LastSeen  time.Time
	// ServerVersion is the Kubernetes version its latest snapshot reported ("" before one).
	ServerVersion string
	// LatestSnapshotID is 0 before the first snapshot.
	LatestSnapshotID int64
	// AgentBundles are the bundles its agent last said it evaluates with (nil before an
	// agent that names them).
	AgentBundles []Bundle
}

// Ingest is one pushed snapshot and the evaluations the server computed for it.
type Ingest struct {
	ClusterName string
	ClusterUID  string // the kube-system UID; "" when the agent sent none
	// Hash is the inventory's canonical hash: equal hashes are duplicates.
	Hash         string
	CollectedAt  time.Time // zero when unknown
	AgentVersion string
	KBVersion    string
	// AgentBundles are the bundles the agent evaluates with; every push, duplicates
	// included, records them on the cluster.
	AgentBundles  []Bundle
	ServerVersion string // the cluster's Kubernetes version; "" keeps the last one stored
	// Inventory is the gzip-compressed push envelope holding the inventory (earlier servers
	// stored the inventory JSON alone), stored as given.
	Inventory   []byte
	Evaluations []Evaluation
	// TokenHash, when set, is the per-cluster ingest token the push presented: the
	// transaction checks again that it is active and bound to ClusterName, so a token
	// revoked mid-push stores nothing (ErrRevoked), nor one whose cluster was renamed
	// meanwhile (ErrConflict, ReasonTokenMoved). DeleteCluster deletes the cluster's
	// tokens, so a token of a deleted cluster answers ErrRevoked.
	TokenHash string
	// Baselines, when not nil, are the evaluations the server computed Notification
	// against: target → the id of the cluster's last decided evaluation there (0: none).
	// The transaction checks that each is still the last decided one, so two ingests of a
	// cluster on two replicas never announce the same change twice; when one moved it
	// stores nothing and answers ErrBaselineMoved, and the server compares again.
	Baselines map[string]int64
	// Notification, when set, is enqueued in the same transaction: it exists exactly when
	// the evaluations it describes were stored. A duplicate stores it only when it stored
	// an evaluation.
	Notification *Notification
}

// Evaluation is the server's answer for one snapshot at one target.
type Evaluation struct {
	Target      string
	Verdict     string
	Score       int
	Blockers    int
	Warnings    int
	Infos       int
	EvaluatedAt time.Time
	// Bundles produced the evaluation; BundlesKey is their canonical join, compared with
	// the server's current key to call a stored evaluation outdated.
	Bundles    []Bundle
	BundlesKey string
	// Teams is the evaluation's per-team rollup (nil when no namespace has a team); the
	// fleet's team view and team-scoped reads use it without opening the report.
	Teams map[string]TeamCell
	// Report is the report for this target, stored as given (the server compresses it).
	Report []byte
	// Carried are the identities of the blockers the evaluation carries as a notification
	// baseline (notify.Carry); nil when none were computed (no sink configured, an
	// unknown verdict, or a row from before they were stored).
	Carried []string
}

// TeamCell is one team's share of an evaluation.
type TeamCell struct {
	Verdict  string `json:"verdict"`
	Score    int    `json:"score"`
	Blockers int    `json:"blockers"`
	Warnings int    `json:"warnings"`
}

// Bundle names a policy bundle and its revision.
type Bundle struct {
	Name     string `json:"name"`
	Revision string `json:"revision"`
}

// IngestResult says where an ingest went: the new snapshot, or with Duplicate the
// cluster's latest one, which had the same hash.
type IngestResult struct {
	ClusterID  int64
	SnapshotID int64
	Duplicate  bool
}

// ClusterHead is a registered cluster and its latest snapshot (LatestSnapshotID 0 and
// LatestHash "" before the first).
type ClusterHead struct {
	ID               int64
	Name             string
	UID              string
	ServerVersion    string
	LatestSnapshotID int64
	LatestHash       string
}

// SnapshotRecord is a stored snapshot; Inventory is the gzip JSON Ingest was given.
type SnapshotRecord struct {
	ID            int64
	ClusterID     int64
	Hash          string
	ReceivedAt    time.Time
	CollectedAt   time.Time // zero when unknown
	AgentVersion  string
	KBVersion     string
	ServerVersion string
	Inventory     []byte
}

// EvaluationRecord is a stored evaluation with its report.
type EvaluationRecord struct {
	ID         int64
	ClusterID  int64
	SnapshotID int64
	Evaluation
}

// HistoryPoint is one stored evaluation without its report.
type HistoryPoint struct {
	EvaluationID int64
	SnapshotID   int64
	Target       string
	Verdict      string
	Score        int
	Blockers     int
	Warnings     int
	Infos        int
	EvaluatedAt  time.Time
	BundlesKey   string
}

// FleetRow is one fleet cell: a cluster's newest stored evaluation at one target.
type FleetRow struct {
	ClusterID     int64
	ClusterName   string
	ClusterUID    string
	LastSeen      time.Time
	ServerVersion string
	Target        string
	EvaluationID  int64
	SnapshotID    int64
	Verdict       string
	Score         int
	Blockers      int
	Warnings      int
	EvaluatedAt   time.Time
	BundlesKey    string
	Teams         map[string]TeamCell
}

// Token describes a stored ingest token: never the token, nor its hash.
type Token struct {
	ID      int64
	Cluster string
	Prefix  string
	Created time.Time
	Revoked time.Time // zero while active
}

// ReadToken describes a stored read token: never the token, nor its hash.
type ReadToken struct {
	ID      int64
	Teams   []string // sorted and distinct; [AllTeams] for the whole fleet
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
	// ErrRevoked: the ingest token an Ingest presented is no longer active (401).
	ErrRevoked = errors.New("ingest token revoked")
	// ErrBaselineMoved: an evaluation named in Ingest.Baselines is no longer the last
	// decided one (another ingest of the cluster committed first); nothing was stored.
	ErrBaselineMoved = errors.New("notification baseline moved")
)

// Reasons carried by ErrConflict.
const (
	ReasonOtherUID   = "name bound to another cluster UID"
	ReasonNoUID      = "push without a UID to a bound name"
	ReasonTokenTaken = "token hash already stored"
	ReasonNameTaken  = "name taken by another cluster"
	ReasonTokenMoved = "token's cluster was renamed or deleted"
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
