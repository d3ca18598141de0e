-- 0007: API keys minted at runtime (POST /api/principals/{name}/keys).
-- Only the key's SHA-256 is kept; a revoked key keeps its row (who
-- revoked it, when) and no longer resolves. Principals themselves stay
-- in the config file: a key names one by name.

CREATE TABLE api_keys (
	id         TEXT NOT NULL PRIMARY KEY,
	principal  TEXT NOT NULL,
	label      TEXT NOT NULL,
	hash       BLOB NOT NULL UNIQUE,
	created_at INTEGER NOT NULL,
	created_by TEXT NOT NULL,
	revoked_at INTEGER NOT NULL DEFAULT 0,
	revoked_by TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX api_keys_by_principal ON api_keys (principal, created_at);
