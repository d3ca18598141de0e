-- 0003: principals. Every session and audit record names who made it, so
-- a team's daemon can say who ran what and show each principal its own.
-- Rows from before principals have ''.

ALTER TABLE sessions ADD COLUMN principal TEXT NOT NULL DEFAULT '';
ALTER TABLE audit ADD COLUMN principal TEXT NOT NULL DEFAULT '';

CREATE INDEX sessions_by_principal ON sessions (principal, updated_at DESC, id);
CREATE INDEX audit_by_principal ON audit (principal, time DESC, id DESC);
