// A2A interop client: drives an agentd agent with @a2a-js/sdk's client
// (A2A 1.0, JSON-RPC) through send, multi-turn, stream, get, cancel and an
// input-required round trip, printing one JSON line per step for the Go
// test to check.
//
// Usage: node a2a-client.mjs AGENT_URL [BEARER_TOKEN]
import { randomUUID } from 'node:crypto';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const [url, token] = process.argv.slice(2);
// The card is resolved relative to the URL: keep the agent's path segment.
const base = url.endsWith('/') ? url : `${url}/`;
const opts = token ? { serviceParameters: { Authorization: `Bearer ${token}` } } : undefined;

const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const state = (t) => TaskState[t.status.state];
const textOf = (parts) => (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const taskText = (t) => (t.artifacts ?? []).map((a) => textOf(a.parts)).join('');
const msg = (text, extra = {}) => ({
  message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }], ...extra },
});

const client = await new ClientFactory().createFromUrl(base);

// Blocking send.
const first = await client.sendMessage(msg('hello'), opts);
out('send', { state: state(first), text: taskText(first), taskId: first.id, contextId: first.contextId });

// A second turn in the same context sees the first.
const second = await client.sendMessage(msg('again', { contextId: first.contextId }), opts);
out('multiturn', { state: state(second), text: taskText(second), contextId: second.contextId });

// Streaming: events arrive as they happen.
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

// Get.
const got = await client.getTask({ id: first.id }, opts);
out('get', { state: state(got), text: taskText(got), history: got.history.length });

// Non-blocking send of a slow task, then cancel it.
const slow = await client.sendMessage({ ...msg('slow'), configuration: { returnImmediately: true } }, opts);
const canceled = await client.cancelTask({ id: slow.id }, opts);
const after = await client.getTask({ id: slow.id }, opts);
out('cancel', { before: state(slow), canceled: state(canceled), after: state(after) });

// Input required: a policy "ask" pauses the task until the next message.
const asking = await client.sendMessage(msg('approve me'), opts);
const question = textOf(asking.status.message?.parts);
const answered = await client.sendMessage(msg('yes', { taskId: asking.id, contextId: asking.contextId }), opts);
out('input', { asked: state(asking), question, state: state(answered), text: taskText(answered), sameTask: answered.id === asking.id });
