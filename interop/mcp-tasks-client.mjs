// MCP tasks client (SEP-1686, 2025-11-25): @modelcontextprotocol/sdk's
// experimental tasks client calls an agent tool as a task and follows it
// from other sessions, and @a2a-js/sdk's client reads (and cancels) the
// same task id on the agent's A2A endpoint. One JSON line per step for the
// Go test to check. Each phase is its own process, so that every phase
// starts a new MCP session (and the Go test can restart the daemon in
// between).
//
// Usage: node mcp-tasks-client.mjs MCP_URL A2A_AGENT_URL TOOL PHASE [TASK_ID]
//   start MESSAGE    list tools, call TOOL as a task with MESSAGE, print the
//                    handle, disconnect at once
//   follow ID        poll tasks/get until terminal, tasks/result,
//                    tasks/list, and A2A getTask of the same id
//   get ID           one tasks/get (and A2A getTask)
//   await ID SECS    tasks/get until the task is terminal or SECS passed
//                    (and A2A getTask)
//   cancel ID        tasks/cancel, then tasks/get and A2A getTask
//   a2acancel ID     A2A cancelTask, then tasks/get
//   list             tasks/list
//   unknown          tasks/get and tasks/result of an id nobody has
//   answer ID ACTION with the elicitation capability: tasks/get until the
//                    task is input_required, then tasks/result, answering
//                    the question agentd puts on that request's stream
//                    (ACTION accept: {approved: true}; decline); prints
//                    the questions asked and the result
//
// AGENTD_TOKEN in the environment is sent as the bearer credential of
// both clients. MCP_URL "stdio" runs the command MCP_STDIO (a JSON array)
// and speaks MCP on its stdin and stdout instead (`agentd mcp`).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ClientFactory } from '@a2a-js/sdk/client';
import { TaskState } from '@a2a-js/sdk';

const [mcpURL, a2aURL, tool, phase, arg, arg2] = process.argv.slice(2);
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const failure = (e) => ({ error: String(e?.message ?? e), code: e?.code ?? null });
const textOf = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text)[0] ?? '';

const token = process.env.AGENTD_TOKEN;
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const opts = token ? { serviceParameters: headers } : undefined;
const client = new Client({ name: 'tasks-test', version: '1.0.0' }, phase === 'answer' ? { capabilities: { elicitation: { form: {} } } } : undefined);
const asked = [];
if (phase === 'answer') {
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push({ message: req.params.message, meta: req.params._meta ?? null, schema: req.params.requestedSchema ?? null });
    return arg2 === 'accept' ? { action: 'accept', content: { approved: true } } : { action: 'decline' };
  });
}
const [command, ...commandArgs] = mcpURL === 'stdio' ? JSON.parse(process.env.MCP_STDIO) : [];
const transport = mcpURL === 'stdio'
  ? new StdioClientTransport({ command, args: commandArgs, env: process.env, stderr: 'inherit' })
  : new StreamableHTTPClientTransport(new URL(mcpURL), { requestInit: { headers } });
await client.connect(transport);

const a2aGet = async (id) => {
  const a2a = await new ClientFactory().createFromUrl(a2aURL.endsWith('/') ? a2aURL : `${a2aURL}/`);
  try {
    const t = await a2a.getTask({ id }, opts);
    return { id: t.id, state: TaskState[t.status.state], contextId: t.contextId };
  } catch (e) {
    return failure(e);
  }
};

switch (phase) {
  case 'start': {
    const caps = client.getServerCapabilities();
    const { tools } = await client.listTools();
    const t = tools.find((x) => x.name === tool);
    out('capabilities', { tasks: caps?.tasks ?? null, taskSupport: t?.execution?.taskSupport ?? null });
    // The tasks client adds params.task on its own for a tool that
    // declares taskSupport; the ttl is asked explicitly.
    const stream = client.experimental.tasks.callToolStream({ name: tool, arguments: { message: arg } }, CallToolResultSchema, {
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
    for (let i = 0; i < 400; i++) {
      task = await client.experimental.tasks.getTask(arg);
      if (seen[seen.length - 1] !== task.status) seen.push(task.status);
      if (['completed', 'failed', 'cancelled'].includes(task.status)) break;
      await new Promise((r) => setTimeout(r, Math.min(task.pollInterval ?? 50, 50)));
    }
    out('polled', { statuses: seen, task });
    const res = await client.experimental.tasks.getTaskResult(arg, CallToolResultSchema);
    out('result', { text: textOf(res), structured: res.structuredContent ?? null, isError: res.isError ?? false, meta: res._meta ?? null });
    const list = await client.experimental.tasks.listTasks();
    out('list', { ids: list.tasks.map((t) => t.taskId), statuses: list.tasks.map((t) => t.status) });
    out('a2a', await a2aGet(arg));
    break;
  }
  case 'get': {
    try {
      out('get', { task: await client.experimental.tasks.getTask(arg) });
    } catch (e) {
      out('get', failure(e));
    }
    out('a2a', await a2aGet(arg));
    break;
  }
  case 'await': {
    const deadline = Date.now() + Number(arg2) * 1000;
    let task;
    for (;;) {
      task = await client.experimental.tasks.getTask(arg);
      if (['completed', 'failed', 'cancelled'].includes(task.status) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    out('await', { task });
    out('a2a', await a2aGet(arg));
    break;
  }
  case 'cancel': {
    try {
      out('cancel', { task: await client.experimental.tasks.cancelTask(arg) });
    } catch (e) {
      out('cancel', failure(e));
    }
    try {
      out('get', { task: await client.experimental.tasks.getTask(arg) });
    } catch (e) {
      out('get', failure(e));
    }
    out('a2a', await a2aGet(arg));
    try {
      await client.experimental.tasks.cancelTask(arg);
      out('again', { error: null });
    } catch (e) {
      out('again', failure(e));
    }
    break;
  }
  case 'a2acancel': {
    const a2a = await new ClientFactory().createFromUrl(a2aURL.endsWith('/') ? a2aURL : `${a2aURL}/`);
    const t = await a2a.cancelTask({ id: arg }, opts);
    out('a2acancel', { state: TaskState[t.status.state] });
    out('get', { task: await client.experimental.tasks.getTask(arg) });
    const res = await client.experimental.tasks.getTaskResult(arg, CallToolResultSchema);
    out('result', { text: textOf(res), structured: res.structuredContent ?? null, isError: res.isError ?? false });
    break;
  }
  case 'answer': {
    let task;
    for (let i = 0; i < 400; i++) {
      task = await client.experimental.tasks.getTask(arg);
      if (task.status !== 'working') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    out('waiting', { task });
    const res = await client.experimental.tasks.getTaskResult(arg, CallToolResultSchema);
    out('asked', { questions: asked });
    out('result', { text: textOf(res), structured: res.structuredContent ?? null, isError: res.isError ?? false });
    out('a2a', await a2aGet(arg));
    break;
  }
  case 'list': {
    const list = await client.experimental.tasks.listTasks();
    out('list', { ids: list.tasks.map((t) => t.taskId) });
    break;
  }
  case 'unknown': {
    for (const [name, f] of [
      ['get', () => client.experimental.tasks.getTask('no-such-task')],
      ['result', () => client.experimental.tasks.getTaskResult('no-such-task', CallToolResultSchema)],
      ['cancel', () => client.experimental.tasks.cancelTask('no-such-task')],
    ]) {
      try {
        out(name, { result: await f() });
      } catch (e) {
        out(name, failure(e));
      }
    }
    break;
  }
  default:
    throw new Error(`unknown phase ${phase}`);
}
await client.close();
