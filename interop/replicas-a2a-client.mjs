// Multi-replica A2A client: @a2a-js/sdk's client (A2A 1.0, JSON-RPC)
// through a round-robin load balancer in front of several agentd
// replicas, so consecutive calls reach different replicas. Prints one JSON
// line per step for the Go test to check.
//
// Usage: node replicas-a2a-client.mjs AGENT_URL BEARER_TOKEN suite
//          send, stream, get, then a slow task cancelled (and got again)
//        node replicas-a2a-client.mjs AGENT_URL BEARER_TOKEN start
//          starts a slow task and prints its ids
//        node replicas-a2a-client.mjs AGENT_URL BEARER_TOKEN await TASK_ID SECONDS
//          gets the task every 250 ms until it is terminal (at most SECONDS)
import { randomUUID } from 'node:crypto';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const [url, token, mode, ...args] = process.argv.slice(2);
const base = url.endsWith('/') ? url : `${url}/`;
const opts = { serviceParameters: { Authorization: `Bearer ${token}` } };
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const state = (t) => TaskState[t.status.state];
const textOf = (parts) => (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const taskText = (t) => (t.artifacts ?? []).map((a) => textOf(a.parts)).join('');
const msg = (text, extra = {}) => ({
  message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }], ...extra },
});

const client = await new ClientFactory().createFromUrl(base);

if (mode === 'suite') {
  const sent = await client.sendMessage(msg('hello'), opts);
  out('send', { state: state(sent), text: taskText(sent), taskId: sent.id });

  const kinds = [];
  let streamed = '';
  let last;
  for await (const ev of client.sendMessageStream(msg('stream me'), opts)) {
    const p = ev.payload ?? ev;
    const kind = p.$case ?? Object.keys(p)[0];
    kinds.push(kind);
    if (kind === 'artifactUpdate') streamed += textOf(p.value.artifact.parts);
    if (kind === 'statusUpdate') last = TaskState[p.value.status.state];
  }
  out('stream', { kinds, text: streamed, state: last });

  const got = await client.getTask({ id: sent.id }, opts);
  out('get', { state: state(got), text: taskText(got) });

  const slow = await client.sendMessage({ ...msg('slow'), configuration: { returnImmediately: true } }, opts);
  const canceled = await client.cancelTask({ id: slow.id }, opts);
  const after = await client.getTask({ id: slow.id }, opts);
  out('cancel', { taskId: slow.id, before: state(slow), canceled: state(canceled), after: state(after) });
} else if (mode === 'start') {
  const slow = await client.sendMessage({ ...msg('slow'), configuration: { returnImmediately: true } }, opts);
  out('start', { taskId: slow.id, contextId: slow.contextId, state: state(slow) });
} else if (mode === 'await') {
  const [id, seconds] = args;
  const start = Date.now();
  let t;
  for (;;) {
    t = await client.getTask({ id }, opts);
    if (['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'].includes(state(t))) break;
    if (Date.now() - start > Number(seconds) * 1000) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  out('await', { state: state(t), reason: textOf(t.status.message?.parts), elapsedMs: Date.now() - start });
} else {
  throw new Error(`unknown mode ${mode}`);
}
