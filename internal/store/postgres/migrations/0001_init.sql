-- 0001: the initial schema, equivalent to SQLite's migrations 0001-0003.
--
-- Types, and why:
-- - Times are timestamptz: an instant, microsecond precision (what the
--   SQLite backend keeps too), independent of the session's TimeZone.
-- - JSON payloads are json, not jsonb. json keeps the text as given
--   (validated, not re-encoded on every read of a long history), and it
--   accepts the escape \u0000, which jsonb refuses: a tool's output of a
--   binary file carries it, and the turn storing it must not fail.
-- - Free text that comes from users, models and tools (session titles,
--   memory keys and values, audit details) is bytea: PostgreSQL's text
--   cannot hold a NUL byte or invalid UTF-8, which SQLite stores and agentd
--   produces (an error message cut at 200 bytes, mid-character). The store
--   contract wants them back byte for byte. Memory search happens in Go
--   (store.Memory.Matches), so nothing needs them as text in SQL; to read
--   them in psql: convert_from(title, 'UTF8').
-- - Identifiers (names, ids, states) are text: they come from protocols
--   and configs, and a NUL there is refused with a clear error.
-- - Generated ids are bigserial, never reused.

CREATE TABLE agents (
	name       text PRIMARY KEY,
	manifest   json,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);

CREATE TABLE sessions (
	id         text PRIMARY KEY,
	agent      text NOT NULL,
	title      bytea NOT NULL,
	origin     text NOT NULL,
	principal  text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	-- last_seq is the Seq of the newest message. AppendMessages reserves
	-- Seqs by bumping it in the statement that checks the session exists;
	-- the row lock that takes orders concurrent appends, across processes
	-- too, and keeps Seqs gapless without scanning messages.
	last_seq   bigint NOT NULL DEFAULT 0
);

CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, id);
CREATE INDEX sessions_by_agent ON sessions (agent, updated_at DESC, id);
CREATE INDEX sessions_by_principal ON sessions (principal, updated_at DESC, id);

CREATE TABLE messages (
	session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq        bigint NOT NULL,
	role       text NOT NULL,
	content    json,
	created_at timestamptz NOT NULL,
	PRIMARY KEY (session_id, seq)
);

CREATE TABLE tasks (
	id         text PRIMARY KEY,
	context_id text NOT NULL,
	agent      text NOT NULL,
	state      text NOT NULL,
	terminal   boolean NOT NULL,
	owner      text NOT NULL,
	data       json,
	version    bigint NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL
);

CREATE INDEX tasks_by_updated ON tasks (updated_at DESC, id);
CREATE INDEX tasks_by_context ON tasks (context_id, updated_at DESC, id);
CREATE INDEX tasks_by_agent ON tasks (agent, updated_at DESC, id);
CREATE INDEX tasks_by_owner ON tasks (owner, updated_at DESC, id);
-- Serves PruneTasks (oldest terminal first) and FailRunningTasks.
CREATE INDEX tasks_by_terminal ON tasks (terminal, updated_at, id);

-- A2A push-notification configs. No foreign key to tasks: a2a servers
-- register a message's webhook before they create its task; PruneTasks
-- deletes the configs of the tasks it deletes. seq is the config's place
-- in its task's list, kept when the config is replaced. config holds the
-- webhook's token and credentials: grant this table to no one else.
CREATE TABLE push_configs (
	seq        bigserial PRIMARY KEY,
	task_id    text NOT NULL,
	id         text NOT NULL,
	config     json,
	created_at timestamptz NOT NULL,
	UNIQUE (task_id, id)
);

CREATE INDEX push_configs_by_task ON push_configs (task_id, created_at, seq);
CREATE INDEX push_configs_by_created ON push_configs (created_at, seq);

CREATE TABLE memories (
	agent      text NOT NULL,
	key        bytea NOT NULL,
	value      bytea NOT NULL,
	created_at timestamptz NOT NULL,
	updated_at timestamptz NOT NULL,
	PRIMARY KEY (agent, key)
);

CREATE INDEX memories_by_updated ON memories (agent, updated_at DESC, key);

CREATE TABLE audit (
	id          bigserial PRIMARY KEY,
	time        timestamptz NOT NULL,
	agent       text NOT NULL,
	session_id  text NOT NULL,
	tool        text NOT NULL,
	args_digest text NOT NULL,
	decision    text NOT NULL,
	outcome     text NOT NULL,
	detail      bytea NOT NULL,
	untrusted   boolean NOT NULL,
	duration_ns bigint NOT NULL,
	principal   text NOT NULL DEFAULT ''
);

CREATE INDEX audit_by_time ON audit (time DESC, id DESC);
CREATE INDEX audit_by_agent ON audit (agent, time DESC, id DESC);
CREATE INDEX audit_by_session ON audit (session_id, time DESC, id DESC);
CREATE INDEX audit_by_tool ON audit (tool, time DESC, id DESC);
CREATE INDEX audit_by_principal ON audit (principal, time DESC, id DESC);

CREATE TABLE mcp_servers (
	name       text PRIMARY KEY,
	config     json,
	created_at timestamptz NOT NULL
);
