-- The notification outbox. An ingest writes its message here in the transaction that stores
-- its evaluations, so a message exists exactly when the evaluations it describes do; the
-- worker delivers it afterwards. body is the webhook v1 JSON body, fixed at enqueue (its
-- deliveryId and timestamp stay the same across retries and sinks).
CREATE TABLE notify_messages (
	id BIGSERIAL PRIMARY KEY,
	cluster_id BIGINT NOT NULL REFERENCES clusters (id) ON DELETE CASCADE,
	delivery_id TEXT NOT NULL UNIQUE,
	created_at BIGINT NOT NULL,
	body BYTEA NOT NULL
);
-- Messages queued longer than the worker keeps them are dropped by age.
CREATE INDEX notify_messages_created ON notify_messages (created_at);

-- One row per message and sink still to deliver; a delivered or abandoned delivery is
-- deleted, and a message with no delivery left with it. cluster_id is the message's, kept
-- here so "is an earlier message of this cluster pending on this sink" is one index probe.
-- claimed_until is a worker's lease: a claimer that dies leaves a lease that runs out.
CREATE TABLE notify_deliveries (
	message_id BIGINT NOT NULL REFERENCES notify_messages (id) ON DELETE CASCADE,
	sink TEXT NOT NULL,
	cluster_id BIGINT NOT NULL,
	attempts BIGINT NOT NULL DEFAULT 0,
	next_at BIGINT NOT NULL,
	claimed_until BIGINT NOT NULL DEFAULT 0,
	last_error TEXT NOT NULL DEFAULT '',
	PRIMARY KEY (message_id, sink)
);
CREATE INDEX notify_deliveries_order ON notify_deliveries (cluster_id, sink, message_id);
CREATE INDEX notify_deliveries_due ON notify_deliveries (next_at);

-- A sink that answered 429 or 503 with Retry-After is held until held_until: none of its
-- deliveries is claimed before then, on any replica.
CREATE TABLE notify_sinks (
	sink TEXT PRIMARY KEY,
	held_until BIGINT NOT NULL
);

-- A target's last decided evaluation is the notification baseline an ingest reads and
-- retention keeps: found here without stepping over a run of unknown ones.
CREATE INDEX evaluations_decided ON evaluations (cluster_id, target, id) WHERE verdict IN ('ready', 'blocked');
