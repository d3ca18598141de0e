-- 0006: API keys minted at runtime, as SQLite's migration 0007. Only the
-- key's SHA-256 is kept; a revoked key keeps its row and no longer
-- resolves. Every replica reads this one table on each request made with
-- a minted key, so a revocation holds on the next request wherever it
-- lands. Labels are text: the API refuses control characters in them.

CREATE TABLE api_keys (
	id         text PRIMARY KEY,
	principal  text NOT NULL,
	label      text NOT NULL,
	hash       bytea NOT NULL UNIQUE,
	created_at timestamptz NOT NULL,
	created_by text NOT NULL,
	revoked_at timestamptz,
	revoked_by text NOT NULL DEFAULT ''
);

CREATE INDEX api_keys_by_principal ON api_keys (principal, created_at);
