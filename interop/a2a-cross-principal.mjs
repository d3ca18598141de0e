// A2A cross-principal client: two principals, bob and alice, share one
// agentd agent through @a2a-js/sdk's client. Bob starts a finished task
// and one waiting for an approval, with a webhook; alice then tries
// everything the SDK offers on bob's tasks (get, list, cancel,
// resubscribe, push configs, answering his approval, continuing his
// context) and lists her own. One JSON line per step for the Go test.
//
// Usage: node a2a-cross-principal.mjs AGENT_URL BOB_KEY ALICE_KEY WEBHOOK_URL
import { randomUUID } from 'node:crypto';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const [url, bobKey, aliceKey, webhook] = process.argv.slice(2);
const base = url.endsWith('/') ? url : `${url}/`;
const as = (key) => ({ serviceParameters: { Authorization: `Bearer ${key}` } });
const bob = as(bobKey);
const alice = as(aliceKey);
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const state = (t) => TaskState[t.status.state];
const msg = (text, extra = {}) => ({
  message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }], ...extra },
});
const failure = (e) => ({ ok: false, error: String(e?.message ?? e), code: e?.envelopeCode ?? e?.code ?? null });
const attempt = async (f) => {
  try {
    return { ok: true, value: await f() };
  } catch (e) {
    return failure(e);
  }
};
// A stream's outcome: the kinds of events it yielded before it ended or
// failed.
const drain = async (gen) => {
  const kinds = [];
  try {
    for await (const ev of gen) {
      const p = ev.payload ?? ev;
      kinds.push(p.$case ?? Object.keys(p)[0]);
    }
    return { ok: true, kinds };
  } catch (e) {
    return { ...failure(e), kinds };
  }
};

const client = await new ClientFactory().createFromUrl(base, undefined);

const done = await client.sendMessage(msg('hello'), bob);
const asking = await client.sendMessage(msg('approve me'), bob);
const cfg = await client.createTaskPushNotificationConfig({ taskId: asking.id, url: webhook, token: 'bob-webhook-secret' }, bob);
out('bob', { done: done.id, doneState: state(done), asking: asking.id, askingState: state(asking), context: asking.contextId, config: cfg.id });

const get = await attempt(() => client.getTask({ id: asking.id }, alice));
const getDone = await attempt(() => client.getTask({ id: done.id }, alice));
out('get', { asking: { ...get, value: get.ok ? state(get.value) : undefined }, done: { ...getDone, value: getDone.ok ? state(getDone.value) : undefined } });

const cancel = await attempt(() => client.cancelTask({ id: asking.id }, alice));
out('cancel', { ...cancel, value: cancel.ok ? state(cancel.value) : undefined });

out('resubscribe', await drain(client.resubscribeTask({ id: asking.id }, alice)));

const pushGet = await attempt(() => client.getTaskPushNotificationConfig({ taskId: asking.id, id: cfg.id }, alice));
const pushList = await attempt(() => client.listTaskPushNotificationConfig({ taskId: asking.id }, alice));
const pushCreate = await attempt(() =>
  client.createTaskPushNotificationConfig({ taskId: asking.id, url: webhook, token: 'alice-webhook' }, alice),
);
// Whatever came back, the test looks for bob's token in it.
out('push', { get: pushGet, list: pushList, create: pushCreate });

const answer = await attempt(() => client.sendMessage(msg('yes', { taskId: asking.id, contextId: asking.contextId }), alice));
out('answer', { ...answer, value: answer.ok ? { id: answer.value.id, state: state(answer.value) } : undefined });
// The task's id alone, without its context: the task itself is refused.
const bare = await attempt(() => client.sendMessage(msg('yes', { taskId: asking.id }), alice));
out('answerTask', { ...bare, value: bare.ok ? { id: bare.value.id, state: state(bare.value) } : undefined });
out('answerStream', await drain(client.sendMessageStream(msg('yes', { taskId: asking.id, contextId: asking.contextId }), alice)));

const ctx = await attempt(() => client.sendMessage(msg('hello', { contextId: done.contextId }), alice));
out('context', { ...ctx, value: ctx.ok ? { id: ctx.value.id, state: state(ctx.value) } : undefined });

const own = await client.sendMessage(msg('hello'), alice);
const aliceList = await client.listTasks({}, alice);
const bobList = await client.listTasks({}, bob);
out('list', {
  own: own.id,
  alice: aliceList.tasks.map((t) => t.id).sort(),
  bob: bobList.tasks.map((t) => t.id).sort(),
});

// Bob's task is still waiting for him.
const still = await client.getTask({ id: asking.id }, bob);
out('after', { state: state(still) });
