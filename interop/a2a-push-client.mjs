// A2A push client: @a2a-js/sdk's client starts a task without waiting for
// it, then registers a webhook for it with CreateTaskPushNotificationConfig
// and prints each outcome as one JSON line; the Go test's webhook receiver
// checks what arrives.
//
// Usage: node a2a-push-client.mjs AGENT_URL WEBHOOK_URL WEBHOOK_TOKEN
import { randomUUID } from 'node:crypto';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const [url, webhook, token] = process.argv.slice(2);
const base = url.endsWith('/') ? url : `${url}/`;
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));

const client = await new ClientFactory().createFromUrl(base);
const task = await client.sendMessage({
  message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'work' } }] },
  configuration: { returnImmediately: true },
});
out('sent', { taskId: task.id, state: TaskState[task.status.state] });
try {
  const cfg = await client.createTaskPushNotificationConfig({ taskId: task.id, url: webhook, token });
  out('push', { ok: true, id: cfg.id, url: cfg.url, taskId: cfg.taskId });
} catch (e) {
  out('push', { ok: false, error: String(e?.message ?? e), code: e?.envelopeCode ?? null });
}
