// Multi-replica MCP client: @modelcontextprotocol/sdk's client holds one
// 2025-11-25 session through a round-robin load balancer in front of
// several agentd replicas, so its requests (POSTs, the GET stream, the
// DELETE) reach different replicas: initialize, tools/list, an agent call
// with progress, an agent call that asks the client's approval
// (elicitation) and gets it on another replica than the call's, a
// cancelled long call and the conversation continued after it, tools/list_changed after an agent is created through another
// replica, and the end of the session. Prints one JSON line per step for
// the Go test to check; after the "ready" step it waits for a line on
// stdin (the test has created an agent) before awaiting list_changed.
//
// Usage: node replicas-mcp-client.mjs URL BEARER_TOKEN PAGE_URL
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, token, page] = process.argv.slice(2);
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const textOf = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text)[0] ?? '';
const names = async () => (await client.listTools()).tools.map((t) => t.name);

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'replicas-test', version: '1.0.0' }, { capabilities: { elicitation: {} } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  asked.push(req.params.message);
  // The note makes the answer larger than a PostgreSQL notification
  // carries (8000 bytes): the relay stores it (bus_payloads).
  return { action: 'accept', content: { approve: true, note: 'x'.repeat(10000) } };
});
const errors = [];
client.onerror = (e) => errors.push(String(e?.message ?? e));
let changed = 0;
let wake = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
  changed++;
  wake();
});
await client.connect(transport);
out('init', { sessionId: transport.sessionId ?? '', protocol: transport.protocolVersion ?? '' });

const lists = [];
for (let i = 0; i < 3; i++) lists.push((await names()).includes('agentd_agent_alpha'));
out('list', { lists });

const progress = [];
const first = await client.callTool({ name: 'agentd_agent_alpha', arguments: { message: 'progress me' } }, undefined, {
  onprogress: (p) => progress.push(p.progress),
});
const session = first.structuredContent?.session_id;
out('call', { text: textOf(first), progress: progress.length, session });

// The run fetches a page, then wants to write a file, which it may only
// with the client's approval: the question comes on the call's stream,
// the answer goes out as a POST of its own, to another replica.
// An answer lost between replicas would leave the call waiting: give up
// after 20 s (the call takes a fraction of a second).
try {
  const approved = await client.callTool({ name: 'agentd_agent_alpha', arguments: { message: `ask me ${page}` } }, undefined, { timeout: 20000 });
  out('elicit', { text: textOf(approved), isError: approved.isError ?? false, asked });
} catch (e) {
  out('elicit', { error: `the call asking approval failed (its answer went to another replica): ${e?.message ?? e}`, asked });
}

// A long call, cancelled on its first progress notification: the
// cancellation goes out as its own POST, which the balancer sends to
// another replica than the call's.
const abort = new AbortController();
let ticks = 0;
let cancelError = '';
try {
  await client.callTool({ name: 'agentd_agent_alpha', arguments: { message: 'slow', session_id: session } }, undefined, {
    signal: abort.signal,
    onprogress: () => {
      if (++ticks === 1) abort.abort('enough');
    },
  });
} catch (e) {
  cancelError = String(e?.message ?? e);
}
// The conversation goes on once the cancelled run has stopped (the slow
// answer alone would hold the session for minutes).
const cancelled = Date.now();
let after;
for (let i = 0; i < 400; i++) {
  after = await client.callTool({ name: 'agentd_agent_alpha', arguments: { message: 'after', session_id: session } });
  if (!textOf(after).includes('busy')) break;
  await new Promise((r) => setTimeout(r, 25));
}
out('cancel', { ticks, error: cancelError, after: textOf(after), freedMs: Date.now() - cancelled });

out('ready', { changed });
const rl = createInterface({ input: process.stdin });
const created = (await rl[Symbol.asyncIterator]().next()).value;
const seen = changed;
let timer;
await Promise.race([
  new Promise((r) => {
    wake = r;
    if (changed > seen) r();
  }),
  new Promise((r) => {
    timer = setTimeout(r, 10000);
  }),
]);
clearTimeout(timer);
out('changed', { created, notifications: changed - seen, tools: await names() });

const sessionId = transport.sessionId;
await transport.terminateSession();
out('closed', { sessionId, errors });
rl.close();
await client.close();
