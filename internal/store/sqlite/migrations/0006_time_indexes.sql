-- 0006: session, task and memory indexes with their time ascending, as
-- 0005 did for the audit log. Their queries list newest first
-- (ORDER BY updated_at DESC, id), so the indexes were declared
-- (..., updated_at DESC, id): every new or updated row, the newest,
-- went to the leftmost page of each, where a full page split runs. A
-- blocking A2A send inserts a session and a task, six index entries.
-- Declared (..., updated_at, id DESC), the same indexes read backwards
-- give the same order (updated_at DESC, id), and the newest row goes
-- last, where SQLite appends to the rightmost page. The names stay; the
-- plan test in sqlite_test.go checks that each query still uses its
-- index for both filter and order.

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
