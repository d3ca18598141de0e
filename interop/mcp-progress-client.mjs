// Progress client: @modelcontextprotocol/sdk's client calls a tool that
// reports progress (server-everything's trigger-long-running-operation)
// RUNS times over Streamable HTTP, and records, for each run, the progress
// values that reached it before the call's result, in arrival order. A
// progress notification that comes after its result finds no handler: the
// SDK reports it through onerror, which is recorded too. Prints one JSON
// line per run and one for the errors, for the Go test to check. Last, it
// cancels a long call on its first progress notification.
//
// Usage: node mcp-progress-client.mjs URL TOOL RUNS STEPS
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, tool, runs, steps] = process.argv.slice(2);
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));

const client = new Client({ name: 'progress-test', version: '1.0.0' });
const errors = [];
client.onerror = (e) => errors.push(String(e?.message ?? e));
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

for (let run = 0; run < Number(runs); run++) {
  const progress = [];
  const res = await client.callTool({ name: tool, arguments: { duration: 0.05 * Number(steps), steps: Number(steps) } }, undefined, {
    onprogress: (p) => progress.push(p.progress),
  });
  const text = (res.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('');
  out(`run${run}`, { progress: [...progress], text });
}
// Then a call the client cancels (notifications/cancelled) on its first
// progress notification.
const abort = new AbortController();
let cancelError = '';
try {
  await client.callTool({ name: tool, arguments: { duration: 30, steps: 30 } }, undefined, {
    signal: abort.signal,
    onprogress: () => abort.abort('enough'),
  });
} catch (e) {
  cancelError = String(e?.message ?? e);
}
out('cancel', { error: cancelError });
// Late notifications arrive within a moment of their result, if at all.
await new Promise((r) => setTimeout(r, 200));
out('errors', { errors });
await client.close();
