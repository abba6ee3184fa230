-- Cluster names and their kube-system UIDs; ingest tokens (hash and prefix only).
-- Times are Unix nanoseconds. AUTOINCREMENT: an id is never reused after a delete.
CREATE TABLE clusters (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	name TEXT NOT NULL UNIQUE,
	uid TEXT,
	first_seen INTEGER NOT NULL,
	last_seen INTEGER NOT NULL
);

-- cluster_name is not a foreign key: a token may be minted before the cluster's first push.
CREATE TABLE ingest_tokens (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	cluster_name TEXT NOT NULL,
	hash TEXT NOT NULL UNIQUE,
	prefix TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	revoked_at INTEGER
);
CREATE INDEX ingest_tokens_cluster_name ON ingest_tokens (cluster_name);
