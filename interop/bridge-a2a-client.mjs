// A2A → MCP bridge client: drives agentd's MCP proxy agent with
// @a2a-js/sdk's client (A2A 1.0, JSON-RPC). The proxy reaches
// @modelcontextprotocol/server-everything as the MCP server "everything".
// Prints one JSON line per step for the Go test to check.
//
// Usage: node bridge-a2a-client.mjs PROXY_AGENT_URL [BEARER_TOKEN]
import { randomUUID } from 'node:crypto';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const [url, token] = process.argv.slice(2);
const base = url.endsWith('/') ? url : `${url}/`;
const opts = token ? { serviceParameters: { Authorization: `Bearer ${token}` } } : undefined;

const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const state = (t) => TaskState[t.status.state];
const dataOf = (m) => (m?.parts ?? []).find((p) => p.content?.$case === 'data')?.content.value;
const textOf = (m) => (m?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const message = (parts, extra = {}) => ({ message: { messageId: randomUUID(), role: Role.ROLE_USER, parts, ...extra } });
const call = (server, tool, args, extra = {}) =>
  message([{ content: { $case: 'data', value: { target_mcp_server_id: server, tool_name: tool, ...(args ? { arguments: args } : {}) } } }], extra);
const reply = (t) => {
  const data = dataOf(t.status.message) ?? {};
  return { state: state(t), success: data.success, error: data.error, result: data.mcp_result, text: textOf(t.status.message), taskId: t.id, contextId: t.contextId };
};

const client = await new ClientFactory().createFromUrl(base);

// The card lists every reachable tool as a skill, schema included.
const card = await client.getAgentCard();
const ext = (card.capabilities?.extensions ?? []).find((e) => e.uri?.includes('mcp-proxy'));
out('card', { skills: card.skills.map((s) => s.id), extensionTools: ext?.params?.tools?.length ?? 0,
  echoSchema: card.skills.find((s) => s.id === 'everything/echo')?.description ?? '' });

// A plain call.
const echo = await client.sendMessage(call('everything', 'echo', { message: 'hello bridge' }), opts);
out('echo', reply(echo));

const sum = await client.sendMessage(call('everything', 'get-sum', { a: 2, b: 3 }), opts);
out('sum', reply(sum));

// MCP progress arrives as working status updates on the stream.
const progress = [];
const taskIds = new Set();
let last;
for await (const ev of client.sendMessageStream(call('everything', 'trigger-long-running-operation', { duration: 1, steps: 4 }), opts)) {
  const p = ev.payload ?? ev;
  const kind = p.$case ?? Object.keys(p)[0];
  if (kind === 'task') taskIds.add(p.value.id);
  if (kind === 'statusUpdate') {
    taskIds.add(p.value.taskId);
    last = p.value;
    if (p.value.status.state === TaskState.TASK_STATE_WORKING && p.value.status.message) progress.push(textOf(p.value.status.message));
  }
}
out('long', { progress, state: TaskState[last.status.state], text: textOf(last.status.message), success: dataOf(last.status.message)?.success, taskIds: taskIds.size });

// An isError result from the tool.
const bad = await client.sendMessage(call('everything', 'get-sum', { a: 'x', b: 2 }), opts);
out('toolError', reply(bad));

// A server the proxy does not know.
const unknown = await client.sendMessage(call('nope', 'echo', { message: 'x' }), opts);
out('unknownServer', reply(unknown));

// Cancel: the task is canceled and the upstream call with it.
const slow = await client.sendMessage({ ...call('everything', 'trigger-long-running-operation', { duration: 30, steps: 30 }), configuration: { returnImmediately: true } }, opts);
await new Promise((r) => setTimeout(r, 300));
const canceled = await client.cancelTask({ id: slow.id }, opts);
const afterCancel = await client.getTask({ id: slow.id }, opts);
out('cancel', { before: state(slow), canceled: state(canceled), after: state(afterCancel), text: textOf(afterCancel.status.message), hasData: dataOf(afterCancel.status.message) !== undefined });

// Task state survives: a call without its required argument turns
// input-required, and the answer on the same task completes it.
const asking = await client.sendMessage(call('everything', 'echo', null, { contextId: echo.contextId }), opts);
const answered = await client.sendMessage(message([{ content: { $case: 'text', value: 'continued' } }], { taskId: asking.id, contextId: asking.contextId }), opts);
out('continue', { asked: state(asking), question: dataOf(asking.status.message), ...reply(answered), sameTask: answered.id === asking.id, sameContext: answered.contextId === echo.contextId });

// The first task is still there, with its result.
const got = await client.getTask({ id: echo.id }, opts);
out('get', reply(got));
