-- 0002: A2A push-notification configs, so that webhooks registered for a
-- task survive a restart as the task does.
--
-- No foreign key to tasks: a2a servers register a message's webhook before
-- they create its task. seq is the config's place in its task's list; an
-- INTEGER PRIMARY KEY is the rowid, which VACUUM never renumbers, and
-- replacing a config (ON CONFLICT ... DO UPDATE) keeps it.
-- config holds the protocol's JSON, webhook token and credentials
-- included: the database file is private to the user (0600).

CREATE TABLE push_configs (
	seq        INTEGER PRIMARY KEY,
	task_id    TEXT NOT NULL,
	id         TEXT NOT NULL,
	config     TEXT,
	created_at INTEGER NOT NULL,
	UNIQUE (task_id, id)
) STRICT;

-- ListPushConfigs and AllPushConfigs, filter and order.
CREATE INDEX push_configs_by_task ON push_configs (task_id, created_at, seq);
CREATE INDEX push_configs_by_created ON push_configs (created_at, seq);

-- A deleted task takes its webhooks with it, whichever statement deletes
-- it (PruneTasks today).
CREATE TRIGGER tasks_delete_push_configs AFTER DELETE ON tasks
BEGIN
	DELETE FROM push_configs WHERE task_id = OLD.id;
END;
