// MCP tasks (SEP-1686, 2025-11-25) through agentd's gateways, with
// @modelcontextprotocol/sdk on both sides.
//
// Usage:
//   node mcp-gateway-tasks.mjs server PORT|stdio
//       an upstream MCP server over Streamable HTTP (sessions), or over
//       stdio, that
//       declares tasks (InMemoryTaskStore, server.experimental.tasks):
//       "delay" {ms} runs as a task (taskSupport optional) and answers
//       "waited MS ms"; "echo" {text} is a plain tool.
//   node mcp-gateway-tasks.mjs client URL PHASE ...
//       the experimental tasks client, one JSON line per step:
//       start TOOL ARGS_JSON   list tools, call TOOL as a task, print the
//                              handle, disconnect at once
//       follow ID              (a new session) getTask until terminal,
//                              getTaskResult, listTasks
//       cancel ID              cancelTask, then getTask
//       get ID                 one getTask
//   AGENTD_TOKEN in the environment is sent as the client's bearer
//   credential.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import * as z from 'zod/v4';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const [mode, ...args] = process.argv.slice(2);
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const failure = (e) => ({ error: String(e?.message ?? e), code: e?.code ?? null });

if (mode === 'server') {
  const taskStore = new InMemoryTaskStore();
  const newServer = () => {
    const server = new McpServer({ name: 'tasks-upstream', version: '1.0.0' }, {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    });
    server.registerTool('echo', { description: 'echoes text', inputSchema: { text: z.string() } },
      async ({ text }) => ({ content: [{ type: 'text', text }] }));
    server.experimental.tasks.registerToolTask('delay', {
      description: 'waits ms milliseconds, as a task',
      inputSchema: { ms: z.number() },
      execution: { taskSupport: 'optional' },
    }, {
      async createTask({ ms }, { taskStore, taskRequestedTtl }) {
        const task = await taskStore.createTask({ ttl: taskRequestedTtl });
        setTimeout(async () => {
          try {
            await taskStore.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `waited ${ms} ms` }] });
          } catch {
            // cancelled first
          }
        }, ms);
        return { task };
      },
      async getTask(_args, { taskId, taskStore }) {
        return await taskStore.getTask(taskId);
      },
      async getTaskResult(_args, { taskId, taskStore }) {
        return await taskStore.getTaskResult(taskId);
      },
    });
    return server;
  };
  if (args[0] === 'stdio') {
    await newServer().connect(new StdioServerTransport());
  }
  const sessions = new Map();
  const readBody = (req) => new Promise((resolve, reject) => {
    let data = '';
    req.on('data', (c) => { data += c; });
    req.on('end', () => { try { resolve(data ? JSON.parse(data) : undefined); } catch (e) { reject(e); } });
    req.on('error', reject);
  });
  if (args[0] !== 'stdio') http.createServer(async (req, res) => {
    try {
      const sid = req.headers['mcp-session-id'];
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      let transport = sid ? sessions.get(sid) : undefined;
      if (!transport && !sid && req.method === 'POST' && isInitializeRequest(body)) {
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => { sessions.set(id, transport); },
        });
        transport.onclose = () => { if (transport.sessionId) sessions.delete(transport.sessionId); };
        await newServer().connect(transport);
      }
      if (!transport) {
        res.writeHead(sid ? 404 : 400, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no session' }, id: null }));
        return;
      }
      await transport.handleRequest(req, res, body);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(e));
    }
  }).listen(Number(args[0]), '127.0.0.1', () => console.log('listening'));
} else if (mode === 'client') {
  const [url, phase, arg, arg2] = args;
  const client = new Client({ name: 'gateway-tasks-test', version: '1.0.0' });
  const token = process.env.AGENTD_TOKEN;
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }));
  try {
    switch (phase) {
      case 'start': {
        const caps = client.getServerCapabilities();
        const { tools } = await client.listTools();
        const t = tools.find((x) => x.name === arg);
        out('capabilities', { tasks: caps?.tasks ?? null, taskSupport: t?.execution?.taskSupport ?? null });
        const stream = client.experimental.tasks.callToolStream({ name: arg, arguments: JSON.parse(arg2) }, CallToolResultSchema, {
          task: { ttl: 60000 },
        });
        for await (const m of stream) {
          if (m.type === 'taskCreated') {
            out('created', { task: m.task });
            break; // disconnect: the task must not need this session
          }
          out('unexpected', { message: m.type, error: m.error ? String(m.error.message ?? m.error) : null });
          break;
        }
        break;
      }
      case 'follow': {
        const seen = [];
        let task;
        for (let i = 0; i < 600; i++) {
          task = await client.experimental.tasks.getTask(arg);
          if (seen.at(-1) !== task.status) seen.push(task.status);
          if (['completed', 'failed', 'cancelled'].includes(task.status)) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        out('statuses', { statuses: seen, task });
        try {
          const res = await client.experimental.tasks.getTaskResult(arg, CallToolResultSchema);
          out('result', { result: res });
        } catch (e) {
          out('result', failure(e));
        }
        const list = await client.experimental.tasks.listTasks();
        out('list', { ids: list.tasks.map((t) => t.taskId), statuses: list.tasks.map((t) => t.status) });
        break;
      }
      case 'cancel': {
        try {
          const t = await client.experimental.tasks.cancelTask(arg);
          out('cancelled', { task: t });
        } catch (e) {
          out('cancelled', failure(e));
        }
        try {
          out('get', { task: await client.experimental.tasks.getTask(arg) });
        } catch (e) {
          out('get', failure(e));
        }
        break;
      }
      case 'get': {
        try {
          out('get', { task: await client.experimental.tasks.getTask(arg) });
        } catch (e) {
          out('get', failure(e));
        }
        break;
      }
      default:
        throw new Error(`unknown phase ${phase}`);
    }
  } finally {
    await client.close();
  }
} else {
  console.error('usage: mcp-gateway-tasks.mjs server PORT | client URL PHASE ...');
  process.exit(2);
}
