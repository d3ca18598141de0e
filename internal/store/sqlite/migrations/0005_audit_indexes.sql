-- 0005: audit indexes stored ascending. Every tool call appends one audit
-- record, and the five indexes were declared (..., time DESC, id DESC):
-- a new record, the newest, sorted first, so each insert went to the
-- leftmost page of every index, where a full page split runs (half-empty
-- pages, more pages written to the WAL per commit). Ascending, a new
-- record goes last, where SQLite appends to the rightmost page cheaply
-- and fills pages. The queries (ORDER BY time DESC, id DESC) read the
-- same indexes backwards; sqlite_test.go's plan test checks that no sort
-- step appears. The names stay. On a large audit table the upgrade
-- rebuilds the five indexes once, at the first start of this version.

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
