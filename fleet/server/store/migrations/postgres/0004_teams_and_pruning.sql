-- Team rollups: teams is the JSON object of team name → {verdict, score, blockers,
-- warnings} of an evaluation, '{}' when no namespace has a team (rows stored before this
-- migration included). fleet_cells carries its evaluation's copy, so the fleet stays one read.
ALTER TABLE evaluations ADD COLUMN teams TEXT NOT NULL DEFAULT '{}';
ALTER TABLE fleet_cells ADD COLUMN teams TEXT NOT NULL DEFAULT '{}';

-- Prune finds snapshots by age and keeps those a cluster or a fleet cell points at.
CREATE INDEX snapshots_received ON snapshots (received_at);
CREATE INDEX clusters_latest_snapshot ON clusters (latest_snapshot_id);
CREATE INDEX fleet_cells_snapshot ON fleet_cells (snapshot_id);
