-- What the API server's audit webhook backend told the server about a cluster: the
-- aggregation's state (collectors/audit.State, every caller tracked unfolded so that the
-- next batch tells them apart; gzip-compressed JSON, bounded by construction), how many
-- batches built it and when the first and last arrived. One row per cluster, keyed by its
-- id: a rename carries it, a delete takes it (ON DELETE CASCADE).
-- Every batch rewrites the row under its lock (UpdateAuditCalls), so concurrent batches of
-- one cluster queue and none is lost.
CREATE TABLE audit_calls (
	cluster_id INTEGER PRIMARY KEY REFERENCES clusters (id) ON DELETE CASCADE,
	section BLOB NOT NULL,
	batches INTEGER NOT NULL,
	first_batch_at INTEGER NOT NULL,
	last_batch_at INTEGER NOT NULL
);
