// An upstream MCP server with tasks (SEP-1686), on the TypeScript SDK's
// experimental server tasks, for agentd's MCP client to call over
// Streamable HTTP. Its task store is shared by every session and ignores
// the session a request came on, so that a task outlives the session that
// created it (tasks bound to an authorization context rather than to a
// transport session, as SEP-1686 allows): agentd, reconnecting under a
// call, follows the same task on its new session.
//
// Tools:
//   slow_report {topic, steps, step_ms, fail, ask, answer_delay_ms}
//                                               taskSupport "required";
//                                               answer_delay_ms holds the
//                                               task's handle back after
//                                               the task exists
//               ask: after step 1 the task turns input_required and asks
//               its client (elicitation/create, delivered on tasks/result)
//               which tide; the report names the answer
//   quick_sum   {a, b, delay_ms}                taskSupport "optional"
//   plain_echo  {message}                       no tasks
//
// Test controls (plain HTTP, loopback only):
//   GET  /events  what the store saw: [{ev, task, session}]
//                 ev: create, get, result, cancel, stopped, completed,
//                 asked, answered:ACTION
//   POST /cancel?task=ID  cancels a task as another client would
//   POST /drop    closes every session (the server "restarts its
//                 connections"): their ids are answered 404 from then on
//
// Usage: node mcp-tasks-upstream.mjs PORT [stdio]
// With stdio, MCP is spoken on stdin/stdout (one session) and PORT serves
// the test controls only.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';

const port = Number(process.argv[2]);
const stdio = process.argv[3] === 'stdio';
const events = [];
const log = (ev, task, session) => events.push({ ev, task, session: session ?? null });

// SharedTaskStore serves every task to every session, and logs what the
// SDK's task handlers ask of it with the session they asked for.
class SharedTaskStore extends InMemoryTaskStore {
  async createTask(params, requestId, request, sessionId) {
    const t = await super.createTask(params, requestId, request, undefined);
    log('create', t.taskId, sessionId);
    return t;
  }
  async getTask(taskId, sessionId) {
    if (sessionId !== undefined) log('get', taskId, sessionId);
    return super.getTask(taskId);
  }
  async getTaskResult(taskId, sessionId) {
    log('result', taskId, sessionId);
    return super.getTaskResult(taskId);
  }
  async updateTaskStatus(taskId, status, message, sessionId) {
    if (status === 'cancelled') log('cancel', taskId, sessionId);
    return super.updateTaskStatus(taskId, status, message);
  }
  async storeTaskResult(taskId, status, result, sessionId) {
    return super.storeTaskResult(taskId, status, result);
  }
  async listTasks(cursor, sessionId) {
    return super.listTasks(cursor);
  }
}

const store = new SharedTaskStore();
const queue = new InMemoryTaskMessageQueue();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// run is a task's work, outside any session: steps of step_ms, a status
// message each, until done or cancelled.
async function run(taskId, args, sendRequest) {
  const steps = args.steps ?? 4;
  let topic = args.topic;
  for (let i = 1; i <= steps; i++) {
    const t = await store.getTask(taskId);
    if (!t || t.status === 'cancelled') {
      log('stopped', taskId);
      return;
    }
    await store.updateTaskStatus(taskId, 'working', `step ${i} of ${steps}`);
    await sleep(args.step_ms ?? 500);
    if (i === 1 && args.ask) {
      await store.updateTaskStatus(taskId, 'input_required', 'which tide?');
      log('asked', taskId);
      const r = await sendRequest({
        method: 'elicitation/create',
        params: {
          message: 'Which tide?',
          requestedSchema: { type: 'object', properties: { tide: { type: 'string' } }, required: ['tide'] },
        },
      }, ElicitResultSchema, { relatedTask: { taskId } });
      log(`answered:${r.action}`, taskId);
      topic = r.action === 'accept' ? `${topic} (${r.content?.tide})` : `${topic} (${r.action})`;
      await store.updateTaskStatus(taskId, 'working', `step ${i} of ${steps}`);
    }
  }
  args = { ...args, topic };
  const t = await store.getTask(taskId);
  if (!t || t.status === 'cancelled') {
    log('stopped', taskId);
    return;
  }
  if (args.fail) {
    await store.storeTaskResult(taskId, 'failed', { content: [{ type: 'text', text: `report on ${args.topic} failed` }], isError: true });
  } else {
    await store.storeTaskResult(taskId, 'completed', { content: [{ type: 'text', text: `report on ${args.topic}: ${steps} steps` }] });
  }
  log('completed', taskId);
}

function newServer() {
  const server = new McpServer({ name: 'tasks-upstream', version: '1.0.0' }, {
    capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: store,
    taskMessageQueue: queue,
  });
  const handler = {
    createTask: async (args, extra) => {
      const task = await extra.taskStore.createTask({ ttl: 120000, pollInterval: 200 });
      run(task.taskId, args, extra.sendRequest).catch((e) => store.updateTaskStatus(task.taskId, 'failed', String(e)));
      if (args.answer_delay_ms) await sleep(args.answer_delay_ms);
      return { task };
    },
    getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
  };
  server.experimental.tasks.registerToolTask('slow_report', {
    description: 'Writes a report in steps; takes steps*step_ms milliseconds.',
    inputSchema: {
      topic: z.string(),
      steps: z.number().optional(),
      step_ms: z.number().optional(),
      fail: z.boolean().optional(),
      ask: z.boolean().optional(),
      answer_delay_ms: z.number().optional(),
    },
    execution: { taskSupport: 'required' },
  }, handler);
  server.experimental.tasks.registerToolTask('quick_sum', {
    description: 'Adds two numbers, as a task if asked.',
    inputSchema: { a: z.number(), b: z.number(), delay_ms: z.number().optional() },
    execution: { taskSupport: 'optional' },
  }, {
    createTask: async (args, extra) => {
      const task = await extra.taskStore.createTask({ ttl: 60000, pollInterval: 100 });
      const done = () => store.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `sum ${args.a + args.b}` }] });
      if (args.delay_ms) setTimeout(done, args.delay_ms);
      else await done();
      return { task };
    },
    getTask: async (_args, extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
  });
  server.registerTool('plain_echo', {
    description: 'Echoes its message.',
    inputSchema: { message: z.string() },
  }, async ({ message }) => ({ content: [{ type: 'text', text: `echo ${message}` }] }));
  return server;
}

const sessions = new Map(); // session id → { transport, server }

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const s = Buffer.concat(chunks).toString('utf8');
  return s ? JSON.parse(s) : undefined;
}

const http = createServer(async (req, res) => {
  try {
    if (req.url === '/events') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(events));
      return;
    }
    if (req.url.startsWith('/cancel?task=') && req.method === 'POST') {
      // Another client cancels the task, as tasks/cancel would.
      const id = decodeURIComponent(req.url.slice('/cancel?task='.length));
      await store.updateTaskStatus(id, 'cancelled', 'cancelled by an operator');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    if (req.url === '/drop' && req.method === 'POST') {
      const all = [...sessions.values()];
      sessions.clear();
      for (const s of all) await s.transport.close();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ dropped: all.length }));
      return;
    }
    if (req.url !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    const sid = req.headers['mcp-session-id'];
    if (sid) {
      const s = sessions.get(sid);
      if (!s) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      await s.transport.handleRequest(req, res, body);
      return;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.set(id, { transport, server }),
    });
    const server = newServer();
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (e) {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(e));
  }
});
http.listen(port, '127.0.0.1', () => console.error(`listening ${port}`));
if (stdio) await newServer().connect(new StdioServerTransport());
