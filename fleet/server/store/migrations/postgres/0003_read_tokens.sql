-- Read tokens (hash and prefix only) and their teams, a JSON list of team names, sorted
-- and distinct; ["*"] reads the whole fleet. server_state holds settings every replica
-- shares: read_api_closed is 'true' once a read token was minted, and is never unset.
CREATE TABLE read_tokens (
	id BIGSERIAL PRIMARY KEY,
	teams TEXT NOT NULL,
	hash TEXT NOT NULL UNIQUE,
	prefix TEXT NOT NULL,
	created_at BIGINT NOT NULL,
	revoked_at BIGINT
);

CREATE TABLE server_state (
	key TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
