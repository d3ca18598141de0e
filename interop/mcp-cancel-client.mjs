// Cancellation client: @modelcontextprotocol/sdk's client cancels an agent
// tool call with an AbortSignal (the SDK sends notifications/cancelled) and
// watches every message its transport delivers, because the MCP spec says
// the receiver of a cancellation should not answer the cancelled request
// (the SDK reports such an answer as "Received a response for an unknown
// message ID"). Then it continues the same conversation, which only works
// once the cancelled run has ended. Prints one JSON line per step for the
// Go test to check.
//
// Usage: node mcp-cancel-client.mjs TOOL http URL
//        node mcp-cancel-client.mjs TOOL stdio COMMAND [ARGS...]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [tool, mode, target, ...rest] = process.argv.slice(2);
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const textOf = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text)[0] ?? '';

const transport = mode === 'stdio'
  ? new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: 'inherit' })
  : new StreamableHTTPClientTransport(new URL(target));
const client = new Client({ name: 'cancel-test', version: '1.0.0' });
const errors = [];
client.onerror = (e) => errors.push(String(e?.message ?? e));
await client.connect(transport);

// Raw hooks on the transport: the ids of the tools/call requests sent, and
// every response received, whether or not the SDK still waits for it.
const sent = {}; // message argument → request id
const responses = [];
const send = transport.send.bind(transport);
transport.send = (msg, opts) => {
  if (msg.method === 'tools/call') sent[msg.params?.arguments?.message] = msg.id;
  return send(msg, opts);
};
const onmessage = transport.onmessage;
transport.onmessage = (msg, extra) => {
  if (msg.id !== undefined && ('result' in msg || 'error' in msg)) responses.push(msg.id);
  return onmessage(msg, extra);
};

const first = await client.callTool({ name: tool, arguments: { message: 'hello' } });
const session = first.structuredContent?.session_id;
out('first', { text: textOf(first), session });

// The model streams one delta, then stalls: abort on the first progress
// notification, while the run waits for the model.
const abort = new AbortController();
let ticks = 0;
let cancelError = '';
try {
  await client.callTool({ name: tool, arguments: { message: 'slow', session_id: session } }, undefined, {
    signal: abort.signal,
    onprogress: () => {
      if (++ticks === 1) abort.abort('enough');
    },
  });
} catch (e) {
  cancelError = String(e?.message ?? e);
}
out('cancel', { ticks, error: cancelError, id: sent.slow });

// Continue the conversation. The cancelled run frees the session when it
// has wound down, a moment after the cancellation was sent: until then
// the turn is refused as busy (with a stalled model it would stay busy).
let after;
for (let i = 0; i < 200; i++) {
  after = await client.callTool({ name: tool, arguments: { message: 'after', session_id: session } });
  if (!textOf(after).includes('busy')) break;
  await new Promise((r) => setTimeout(r, 25));
}
// An answer to the cancelled request would have been written when its run
// ended, before the session was free; a short grace catches one still in
// flight on another HTTP stream.
await new Promise((r) => setTimeout(r, 300));
out('after', { text: textOf(after), isError: after.isError ?? false, sc: after.structuredContent ?? null });
out('wire', { responses, cancelledAnswered: responses.includes(sent.slow), errors });
await client.close();
