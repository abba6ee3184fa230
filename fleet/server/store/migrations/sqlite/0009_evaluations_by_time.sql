-- Retention's pass over evaluations (those a newer bundle set's evaluation of the same
-- snapshot superseded, made before the cutoff) starts from the few evaluations older than
-- the cutoff that outlived their snapshots' pruning, not from a scan of every report.
CREATE INDEX evaluations_evaluated ON evaluations (evaluated_at);
