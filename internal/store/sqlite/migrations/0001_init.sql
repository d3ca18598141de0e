-- 0001: the initial schema.
--
-- Times are INTEGER microseconds since the Unix epoch, UTC: exact, cheap to
-- compare and index, and the precision PostgreSQL's timestamptz keeps.
-- JSON payloads are TEXT so that the sqlite3 shell and its JSON functions
-- can read them. STRICT makes SQLite reject values of the wrong type
-- instead of silently storing them.

CREATE TABLE agents (
	name       TEXT NOT NULL PRIMARY KEY,
	manifest   TEXT,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE sessions (
	id         TEXT NOT NULL PRIMARY KEY,
	agent      TEXT NOT NULL,
	title      TEXT NOT NULL,
	origin     TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	-- last_seq is the Seq of the newest message. AppendMessages reserves
	-- Seqs by bumping it in the same statement that checks the session
	-- exists, which keeps Seqs gapless without scanning messages.
	last_seq   INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, id);
CREATE INDEX sessions_by_agent ON sessions (agent, updated_at DESC, id);

CREATE TABLE messages (
	session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	role       TEXT NOT NULL,
	content    TEXT,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq)
) STRICT;

CREATE TABLE tasks (
	id         TEXT NOT NULL PRIMARY KEY,
	context_id TEXT NOT NULL,
	agent      TEXT NOT NULL,
	state      TEXT NOT NULL,
	terminal   INTEGER NOT NULL CHECK (terminal IN (0, 1)),
	owner      TEXT NOT NULL,
	data       TEXT,
	version    INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
) STRICT;

CREATE INDEX tasks_by_updated ON tasks (updated_at DESC, id);
CREATE INDEX tasks_by_context ON tasks (context_id, updated_at DESC, id);
CREATE INDEX tasks_by_agent ON tasks (agent, updated_at DESC, id);
CREATE INDEX tasks_by_owner ON tasks (owner, updated_at DESC, id);
-- Serves PruneTasks (oldest terminal first) and FailRunningTasks.
CREATE INDEX tasks_by_terminal ON tasks (terminal, updated_at, id);

CREATE TABLE memories (
	agent      TEXT NOT NULL,
	key        TEXT NOT NULL,
	value      TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (agent, key)
) STRICT;

CREATE INDEX memories_by_updated ON memories (agent, updated_at DESC, key);

-- AUTOINCREMENT so that IDs are never reused, even if old records are one
-- day trimmed from the end of the log.
CREATE TABLE audit (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	time        INTEGER NOT NULL,
	agent       TEXT NOT NULL,
	session_id  TEXT NOT NULL,
	tool        TEXT NOT NULL,
	args_digest TEXT NOT NULL,
	decision    TEXT NOT NULL,
	outcome     TEXT NOT NULL,
	detail      TEXT NOT NULL,
	untrusted   INTEGER NOT NULL CHECK (untrusted IN (0, 1)),
	duration_ns INTEGER NOT NULL
) STRICT;

CREATE INDEX audit_by_time ON audit (time DESC, id DESC);
CREATE INDEX audit_by_agent ON audit (agent, time DESC, id DESC);
CREATE INDEX audit_by_session ON audit (session_id, time DESC, id DESC);
CREATE INDEX audit_by_tool ON audit (tool, time DESC, id DESC);

CREATE TABLE mcp_servers (
	name       TEXT NOT NULL PRIMARY KEY,
	config     TEXT,
	created_at INTEGER NOT NULL
) STRICT;
