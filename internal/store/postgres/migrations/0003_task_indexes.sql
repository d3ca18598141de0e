-- 0003: fewer task indexes. Every task insert paid for five secondary
-- indexes (six with tasks_running), and a blocking A2A send inserts one
-- task; two of them served no query that needs them:
--
-- tasks_by_owner: no query of agentd's filters tasks by owner (only the
-- store contract's ListTasks filter does, which a scan serves).
-- tasks_by_terminal: indexed every task, while the queries it served
-- look for the few running ones (FailRunningTasks, at start, which
-- tasks_running of 0002 serves) or run in the background a few times
-- per thousand tasks (PruneTasks).

DROP INDEX tasks_by_owner;
DROP INDEX tasks_by_terminal;
