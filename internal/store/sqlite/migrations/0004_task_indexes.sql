-- 0004: fewer task indexes. Every task insert paid for five secondary
-- indexes, and a blocking A2A send inserts one task; two of them served
-- no query that needs them:
--
-- tasks_by_owner: no query of agentd's filters tasks by owner (only the
-- store contract's ListTasks filter does, which a scan serves).
-- tasks_by_terminal: indexed every task, while the queries it served
-- look for the few running ones (FailRunningTasks, at start) or run in
-- the background a few times per thousand tasks (PruneTasks, which may
-- now scan the tasks table, bounded by the A2A task store). A partial
-- index of the running tasks serves FailRunningTasks, and a task stored
-- already finished (the blocking send's) never enters it.

DROP INDEX tasks_by_owner;
DROP INDEX tasks_by_terminal;
CREATE INDEX tasks_running ON tasks (updated_at, id) WHERE terminal = 0;
