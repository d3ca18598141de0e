-- 0004: audit indexes stored ascending, as SQLite's migration 0005 does,
-- for the same reason. Every tool call appends one audit record; with
-- (..., time DESC, id DESC) the newest key sorted first, so each insert
-- went to the leftmost leaf of every index, where B-tree pages split in
-- half. Ascending, a new record goes to the rightmost leaf, which
-- PostgreSQL inserts into without a descent (its rightmost-leaf fast
-- path) and splits leaving pages full. The queries (ORDER BY time DESC,
-- id DESC) scan the same indexes backwards. The names stay.

DROP INDEX audit_by_time;
DROP INDEX audit_by_agent;
DROP INDEX audit_by_session;
DROP INDEX audit_by_tool;
DROP INDEX audit_by_principal;
CREATE INDEX audit_by_time ON audit (time, id);
CREATE INDEX audit_by_agent ON audit (agent, time, id);
CREATE INDEX audit_by_session ON audit (session_id, time, id);
CREATE INDEX audit_by_tool ON audit (tool, time, id);
CREATE INDEX audit_by_principal ON audit (principal, time, id);
