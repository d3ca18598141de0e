-- 0002: replicas. Several agentd processes on one database are replicas
-- of one system (see cluster.go): each says it is alive in replicas, and
-- the work each runs is marked with its id, so that when one goes silent
-- another can find that work and fail it.

-- One row per live replica. heartbeat_at is the database's clock, never a
-- replica's, so that replicas with skewed clocks agree on who is silent.
CREATE TABLE replicas (
	id           text PRIMARY KEY,
	name         text NOT NULL,
	started_at   timestamptz NOT NULL,
	heartbeat_at timestamptz NOT NULL
);

-- The replica running a task ('' for tasks written before replicas, or by
-- a process that is not one: no live replica has that id, so such a task
-- left running is failed like a dead replica's). cancel_requested_at
-- records a cancel asked through another replica, for the one running it
-- to read again should it have missed the notification.
ALTER TABLE tasks ADD COLUMN replica text NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN cancel_requested_at timestamptz;
CREATE INDEX tasks_running ON tasks (replica) WHERE NOT terminal;

-- The turn in progress of each busy session, and the replica running it:
-- a row is the session's lock, across replicas. No foreign key: a new
-- session's turn is claimed before the session is written.
CREATE TABLE session_turns (
	session_id text PRIMARY KEY,
	replica    text NOT NULL,
	started_at timestamptz NOT NULL
);
CREATE INDEX session_turns_by_replica ON session_turns (replica);

-- The key sealing MCP session ids when the operator configures none: made
-- by the first replica, read by the others. Grant this table to no one
-- else.
CREATE TABLE cluster_keys (
	id         integer PRIMARY KEY,
	key        bytea NOT NULL,
	created_at timestamptz NOT NULL
);

-- MCP sessions a client ended (DELETE): their sealed ids must not bring
-- them back on another replica. Kept until the ids expire anyway.
CREATE TABLE mcp_session_ends (
	id_hash    bytea PRIMARY KEY,
	expires_at timestamptz NOT NULL
);
CREATE INDEX mcp_session_ends_by_expiry ON mcp_session_ends (expires_at);

-- Notification payloads too large for NOTIFY (8000 bytes): the
-- notification carries the row's id, and the row goes after a few minutes.
CREATE TABLE bus_payloads (
	id         bigserial PRIMARY KEY,
	payload    text NOT NULL,
	created_at timestamptz NOT NULL
);
CREATE INDEX bus_payloads_by_created ON bus_payloads (created_at);
