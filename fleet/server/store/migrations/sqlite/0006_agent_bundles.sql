-- The bundles (name and revision) a cluster's agent last said it evaluates with, as a JSON
-- array; '[]' for agents that say nothing (before the push envelope named them).
ALTER TABLE clusters ADD COLUMN agent_bundles TEXT NOT NULL DEFAULT '[]';
