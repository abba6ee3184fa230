-- What the API server's audit webhook backend told the server about a cluster: the
-- aggregation's state (collectors/audit.State, every caller tracked unfolded so that the
-- next batch tells them apart; gzip-compressed JSON, bounded by construction), how many
-- batches built it and when the first and last arrived. One row per cluster, keyed by its
-- id: a rename carries it, a delete takes it (ON DELETE CASCADE).
-- Every batch rewrites the row under its lock (UpdateAuditCalls, SELECT ... FOR UPDATE), so
-- concurrent batches of one cluster on several replicas queue and none is lost.
CREATE TABLE audit_calls (
	cluster_id BIGINT PRIMARY KEY REFERENCES clusters (id) ON DELETE CASCADE,
	section BYTEA NOT NULL,
	batches BIGINT NOT NULL,
	first_batch_at BIGINT NOT NULL,
	last_batch_at BIGINT NOT NULL
);
