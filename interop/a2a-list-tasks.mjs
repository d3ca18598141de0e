// A2A ListTasks interop client: @a2a-js/sdk's client lists an agent's
// tasks over JSON-RPC and HTTP+JSON the way applications call it, with no
// status filter (the SDK then sends its unset enum, "UNRECOGNIZED"), with
// a real state, and with a status that is no task state (sent raw through
// the SDK's JSON-RPC transport, as the typed API cannot). One JSON line per
// step for the Go test to check.
//
// Usage: node a2a-list-tasks.mjs AGENT_URL
import { randomUUID } from 'node:crypto';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const [url] = process.argv.slice(2);
const base = url.endsWith('/') ? url : `${url}/`;
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const msg = (text) => ({ message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }] } });
const ids = (res) => res.tasks.map((t) => t.id).sort();
const failure = (e) => ({ error: String(e?.message ?? e), code: e?.envelopeCode ?? e?.code ?? null, name: e?.constructor?.name });

const rpc = await new ClientFactory().createFromUrl(base);
const rest = await new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }),
).createFromUrl(base);

const first = await rpc.sendMessage(msg('hello'));
const second = await rpc.sendMessage(msg('hello'));
out('sent', { ids: [first.id, second.id].sort(), states: [TaskState[first.status.state], TaskState[second.status.state]] });

for (const [name, client] of [['jsonrpc', rpc], ['rest', rest]]) {
  const call = async (params) => {
    try {
      return ids(await client.listTasks(params));
    } catch (e) {
      return failure(e);
    }
  };
  out(name, {
    all: await call({}),
    completed: await call({ status: TaskState.TASK_STATE_COMPLETED }),
    working: await call({ status: TaskState.TASK_STATE_WORKING }),
    unrecognized: await call({ status: TaskState.UNRECOGNIZED }),
  });
}

// A status that is no task state: the typed API cannot send one, so it
// goes raw through the SDK's own JSON-RPC transport.
try {
  const res = await rpc.transport.callExtensionMethod('ListTasks', { status: 'TASK_STATE_DONE' });
  out('invalid', { result: res });
} catch (e) {
  out('invalid', failure(e));
}
