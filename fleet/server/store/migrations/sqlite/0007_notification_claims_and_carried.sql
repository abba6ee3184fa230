-- claim is the token of the lease claimed_until measures, set at each claim (0 when no
-- worker holds the delivery): a worker finishing, retrying or holding its sink names it,
-- so a claimer whose lease ran out and was taken by another worker changes nothing.
ALTER TABLE notify_deliveries ADD COLUMN claim BIGINT NOT NULL DEFAULT 0;

-- carried is a JSON array of the blocker identities an evaluation carries as a notification
-- baseline: its own, plus its baseline's when it could not assess a capability (what a pass
-- could not see is carried, not resolved). NULL where none was computed: the evaluation's
-- own blockers then.
ALTER TABLE evaluations ADD COLUMN carried TEXT;
