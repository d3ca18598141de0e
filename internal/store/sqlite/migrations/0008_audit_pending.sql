-- 0008: audit records are committed first to audit_pending, a table with
-- no index, and moved into audit in bulk (auditfold.go). A gateway tool
-- call waits for its record's commit, and a commit into audit wrote seven
-- WAL pages (the table's, one per index, the AUTOINCREMENT counter's)
-- for the one to three records a commit carried; into audit_pending it
-- writes one or two. The move writes audit's pages once for many records.
-- The id here only orders the records; audit assigns the ids users see.
CREATE TABLE audit_pending (
	id          INTEGER PRIMARY KEY,
	time        INTEGER NOT NULL,
	agent       TEXT NOT NULL,
	session_id  TEXT NOT NULL,
	tool        TEXT NOT NULL,
	args_digest TEXT NOT NULL,
	decision    TEXT NOT NULL,
	outcome     TEXT NOT NULL,
	detail      TEXT NOT NULL,
	untrusted   INTEGER NOT NULL CHECK (untrusted IN (0, 1)),
	duration_ns INTEGER NOT NULL,
	principal   TEXT NOT NULL
) STRICT;
