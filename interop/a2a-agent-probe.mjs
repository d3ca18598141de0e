// A2A probe: @a2a-js/sdk's client asks, without any credential, for the
// Agent Card and the JSON-RPC and HTTP+JSON endpoints of agents by name,
// and prints what each answered (one JSON line per agent) so the Go test
// can check that a private agent and a missing one look the same.
//
// Usage: node a2a-agent-probe.mjs BASE_URL KNOWN_AGENT NAME...
// KNOWN_AGENT is an agent exposed over A2A: its card is the template for
// clients pointed at the other names' endpoints.
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';

const [base, known, ...names] = process.argv.slice(2);
const agentURL = (name) => `${base}/a2a/agents/${name}/`;

// Every card fetch goes through here, so the raw answer is kept.
let last;
const fetchImpl = async (...args) => {
  const res = await fetch(...args);
  last = { status: res.status, contentType: res.headers.get('content-type'), body: await res.clone().text() };
  return res;
};
const factory = (preferred) =>
  new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      ...(preferred ? { preferredTransports: [preferred] } : {}),
    }),
  );
const failure = async (f) => {
  try {
    await f();
    return { ok: true };
  } catch (e) {
    return { ok: false, error: String(e?.message ?? e) };
  }
};

const template = (await factory().createFromUrl(agentURL(known))).agentCard;
// The known agent's card with its endpoints moved to another name.
const cardFor = (name) => {
  const card = structuredClone(template);
  for (const i of card.supportedInterfaces ?? []) {
    i.url = i.url.replace(`/a2a/agents/${known}`, `/a2a/agents/${name}`);
  }
  return card;
};

for (const name of names) {
  last = undefined;
  const card = await failure(() => factory().createFromUrl(agentURL(name)));
  const cardAnswer = last;
  const jsonrpc = await failure(async () => (await factory('JSONRPC').createFromAgentCard(cardFor(name))).getTask({ id: 'no-such-task' }));
  const rest = await failure(async () => (await factory('HTTP+JSON').createFromAgentCard(cardFor(name))).getTask({ id: 'no-such-task' }));
  const send = await failure(async () =>
    (await factory('JSONRPC').createFromAgentCard(cardFor(name))).sendMessage({
      message: { messageId: 'm1', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'hello' } }] },
    }),
  );
  console.log(JSON.stringify({ step: name, card: { ...card, answer: cardAnswer }, jsonrpc, rest, send }));
}
