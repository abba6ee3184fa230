-- migrate: foreign_keys off
-- A snapshot may hold one evaluation per target and bundle set: when the server's bundles
-- change, its latest snapshot is evaluated again beside the evaluation the old set made,
-- which stays in the cluster's history. Two servers re-evaluating one snapshot with one
-- set still store it once (ON CONFLICT on this key).
--
-- SQLite cannot drop a table constraint: the table is rebuilt as its documentation says
-- (https://sqlite.org/lang_altertable.html#otheralter), with foreign keys off on the
-- migrating connection (the marker above), so dropping the old table does not cascade to
-- fleet_cells; the runner checks foreign_key_check is empty before committing.
CREATE TABLE evaluations_new (
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
	teams TEXT NOT NULL DEFAULT '{}',
	carried TEXT,
	UNIQUE (snapshot_id, target, bundles_key)
);
INSERT INTO evaluations_new (id, cluster_id, snapshot_id, target, verdict, score, blockers, warnings, infos,
	evaluated_at, bundles, bundles_key, report, teams, carried)
SELECT id, cluster_id, snapshot_id, target, verdict, score, blockers, warnings, infos,
	evaluated_at, bundles, bundles_key, report, teams, carried FROM evaluations;
-- Evaluation ids are never reused (FleetVersion relies on it): the new table continues the
-- old one's sequence, which may be past the largest id left after pruning.
INSERT INTO sqlite_sequence (name, seq)
SELECT 'evaluations_new', seq FROM sqlite_sequence WHERE name = 'evaluations'
	AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'evaluations_new');
UPDATE sqlite_sequence SET seq = MAX(seq, (SELECT seq FROM sqlite_sequence WHERE name = 'evaluations'))
WHERE name = 'evaluations_new' AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'evaluations');
DROP TABLE evaluations;
ALTER TABLE evaluations_new RENAME TO evaluations;
CREATE INDEX evaluations_history ON evaluations (cluster_id, target, id);
CREATE INDEX evaluations_decided ON evaluations (cluster_id, target, id) WHERE verdict IN ('ready', 'blocked');
