-- Snapshots, their evaluations (one per target), and fleet_cells: the newest stored
-- evaluation per (cluster, target), upserted by each ingest so the fleet is one read.
-- clusters gains what an ingest's duplicate check and the fleet need without a join.
ALTER TABLE clusters ADD COLUMN server_version TEXT NOT NULL DEFAULT '';
ALTER TABLE clusters ADD COLUMN latest_snapshot_id INTEGER;
ALTER TABLE clusters ADD COLUMN latest_hash TEXT;

-- inventory is gzip-compressed JSON, stored as the server gave it.
CREATE TABLE snapshots (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	cluster_id INTEGER NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
	hash TEXT NOT NULL,
	received_at INTEGER NOT NULL,
	collected_at INTEGER,
	agent_version TEXT NOT NULL,
	kb_version TEXT NOT NULL,
	server_version TEXT NOT NULL,
	inventory BLOB NOT NULL
);
CREATE INDEX snapshots_cluster ON snapshots (cluster_id, id);

-- bundles is a JSON list of {name, revision}; bundles_key its canonical join, compared
-- with the server's current bundles to call an evaluation outdated.
CREATE TABLE evaluations (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	cluster_id INTEGER NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
	snapshot_id INTEGER NOT NULL REFERENCES snapshots (id) ON DELETE CASCADE,
	target TEXT NOT NULL,
	verdict TEXT NOT NULL,
	score INTEGER NOT NULL,
	blockers INTEGER NOT NULL,
	warnings INTEGER NOT NULL,
	infos INTEGER NOT NULL,
	evaluated_at INTEGER NOT NULL,
	bundles TEXT NOT NULL,
	bundles_key TEXT NOT NULL,
	report BLOB NOT NULL,
	UNIQUE (snapshot_id, target)
);
CREATE INDEX evaluations_history ON evaluations (cluster_id, target, id);

CREATE TABLE fleet_cells (
	cluster_id INTEGER NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
	target TEXT NOT NULL,
	evaluation_id INTEGER NOT NULL REFERENCES evaluations (id) ON DELETE CASCADE,
	snapshot_id INTEGER NOT NULL,
	verdict TEXT NOT NULL,
	score INTEGER NOT NULL,
	blockers INTEGER NOT NULL,
	warnings INTEGER NOT NULL,
	evaluated_at INTEGER NOT NULL,
	bundles_key TEXT NOT NULL,
	PRIMARY KEY (cluster_id, target)
);
CREATE INDEX fleet_cells_evaluation ON fleet_cells (evaluation_id);
