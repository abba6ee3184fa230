-- A snapshot may hold one evaluation per target and bundle set: when the server's bundles
-- change, its latest snapshot is evaluated again beside the evaluation the old set made,
-- which stays in the cluster's history. Two replicas re-evaluating one snapshot with one
-- set still store it once (ON CONFLICT on this key).
ALTER TABLE evaluations DROP CONSTRAINT evaluations_snapshot_id_target_key;
ALTER TABLE evaluations ADD CONSTRAINT evaluations_snapshot_target_bundles
	UNIQUE (snapshot_id, target, bundles_key);
