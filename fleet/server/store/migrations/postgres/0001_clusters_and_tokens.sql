-- Cluster names and their kube-system UIDs; ingest tokens (hash and prefix only).
-- Times are Unix nanoseconds, as in SQLite.
CREATE TABLE clusters (
	id BIGSERIAL PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	uid TEXT,
	first_seen BIGINT NOT NULL,
	last_seen BIGINT NOT NULL
);

-- cluster_name is not a foreign key: a token may be minted before the cluster's first push.
CREATE TABLE ingest_tokens (
	id BIGSERIAL PRIMARY KEY,
	cluster_name TEXT NOT NULL,
	hash TEXT NOT NULL UNIQUE,
	prefix TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	revoked_at BIGINT
);
CREATE INDEX ingest_tokens_cluster_name ON ingest_tokens (cluster_name);
