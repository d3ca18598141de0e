// A2A client with a bearer credential: @a2a-js/sdk's client sends one
// message to an agent with "Authorization: Bearer TOKEN" (an agentd key or
// an OAuth access token) and prints the outcome as one JSON line.
//
// Usage: node a2a-bearer-client.mjs AGENT_URL TOKEN
import { randomUUID } from 'node:crypto';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const [url, token] = process.argv.slice(2);
const base = url.endsWith('/') ? url : `${url}/`;
const opts = { serviceParameters: { Authorization: `Bearer ${token}` } };
const textOf = (parts) => (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
try {
  const client = await new ClientFactory().createFromUrl(base);
  const t = await client.sendMessage({ message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'hello' } }] } }, opts);
  console.log(JSON.stringify({ ok: true, state: TaskState[t.status.state], text: (t.artifacts ?? []).map((a) => textOf(a.parts)).join('') }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e.message ?? e) }));
}
