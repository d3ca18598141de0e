-- 0005: session, task and memory indexes with their time ascending, as
-- SQLite's migration 0006 does and 0004 did for the audit log. Their
-- queries list newest first (ORDER BY updated_at DESC, id); declared
-- (..., updated_at DESC, id), every new or updated row went to the
-- leftmost leaf of each index, where pages split in half. Declared
-- (..., updated_at, id DESC), the same indexes scanned backwards give
-- the same order, and the newest row goes to the rightmost leaf, which
-- PostgreSQL inserts into without a descent and splits leaving pages
-- full. A blocking A2A send inserts a session and a task. The names
-- stay.

DROP INDEX sessions_by_updated;
DROP INDEX sessions_by_agent;
DROP INDEX sessions_by_principal;
DROP INDEX tasks_by_updated;
DROP INDEX tasks_by_context;
DROP INDEX tasks_by_agent;
DROP INDEX memories_by_updated;
CREATE INDEX sessions_by_updated ON sessions (updated_at, id DESC);
CREATE INDEX sessions_by_agent ON sessions (agent, updated_at, id DESC);
CREATE INDEX sessions_by_principal ON sessions (principal, updated_at, id DESC);
CREATE INDEX tasks_by_updated ON tasks (updated_at, id DESC);
CREATE INDEX tasks_by_context ON tasks (context_id, updated_at, id DESC);
CREATE INDEX tasks_by_agent ON tasks (agent, updated_at, id DESC);
CREATE INDEX memories_by_updated ON memories (agent, updated_at, key DESC);
