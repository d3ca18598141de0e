// MCP → A2A bridge client: drives agentd's MCP endpoint with
// @modelcontextprotocol/sdk's client (Streamable HTTP, 2025-11-25) against
// an A2A agent served as a tool (bridge-a2a-agent.mjs behind agentd).
// Prints one JSON line per step for the Go test to check.
//
// Usage: node bridge-mcp-client.mjs MCP_URL TOOL [BEARER_TOKEN]
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [url, tool, token] = process.argv.slice(2);
const headers = token ? { Authorization: `Bearer ${token}` } : {};
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const textOf = (res) => (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text)[0] ?? '';
const view = (res) => ({ text: textOf(res), isError: res.isError ?? false, sc: res.structuredContent ?? null, types: (res.content ?? []).map((c) => c.type) });

async function connect(elicit) {
  const client = new Client({ name: 'bridge-test', version: '1.0.0' }, elicit ? { capabilities: { elicitation: {} } } : {});
  const asked = [];
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return elicit(req.params);
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return { client, asked };
}

const { client: plain } = await connect(null);
// What the SDK reports on its own, such as an answer to a request it
// cancelled ("Received a response for an unknown message ID").
const clientErrors = [];
plain.onerror = (e) => clientErrors.push(String(e?.message ?? e));

const { tools } = await plain.listTools();
out('list', { tools: tools.map((t) => t.name), described: tools.find((t) => t.name === tool)?.description ?? '' });

out('hello', view(await plain.callTool({ name: tool, arguments: { message: 'hello' } })));

// A long task's status updates arrive as progress notifications.
const progress = [];
const long = await plain.callTool({ name: tool, arguments: { message: 'long' } }, undefined, {
  onprogress: (p) => progress.push(p.message ?? ''),
});
out('long', { ...view(long), progress });

// Cancelling the MCP request cancels the A2A task.
const abort = new AbortController();
const ticks = [];
let cancelError = '';
try {
  await plain.callTool({ name: tool, arguments: { message: 'forever' } }, undefined, {
    signal: abort.signal,
    onprogress: (p) => {
      ticks.push(p.message ?? '');
      if (ticks.length === 3) abort.abort('enough');
    },
  });
} catch (e) {
  cancelError = String(e?.message ?? e);
}
out('cancel', { ticks: ticks.length, error: cancelError });

// input-required, asked through elicitation in the same call.
const { client: asking, asked } = await connect(async () => ({ action: 'accept', content: { reply: 'Ada' } }));
const elicited = await asking.callTool({ name: tool, arguments: { message: 'ask' } });
out('elicit', { ...view(elicited), asked: asked.map((a) => a.message) });

// Without elicitation: the result says what is needed, and the answer
// goes to the same task.
const waiting = await plain.callTool({ name: tool, arguments: { message: 'ask' } });
const answered = await plain.callTool({ name: tool, arguments: { message: 'Bob', task_id: waiting.structuredContent?.task_id, context_id: waiting.structuredContent?.context_id } });
out('continue', { waiting: view(waiting), answered: view(answered), sameTask: answered.structuredContent?.task_id === waiting.structuredContent?.task_id });

// A conversation: the context id carries over.
const first = await plain.callTool({ name: tool, arguments: { message: 'count' } });
const second = await plain.callTool({ name: tool, arguments: { message: 'count', context_id: first.structuredContent?.context_id } });
out('context', { first: view(first), second: view(second) });

// Artifacts with files.
const files = await plain.callTool({ name: tool, arguments: { message: 'files' } });
out('files', { ...view(files), content: files.content });

out('wire', { errors: clientErrors });

await plain.close();
await asking.close();
