// Relay restart client: the TypeScript MCP SDK starts `agentd mcp` as an
// editor does (stdio) while a daemon runs, calls an agent tool, and then
// lives through the daemon's restart. The Go test drives the daemon; this
// script and the test talk in lines: the script prints a JSON step and
// waits for the test to answer "ok" on stdin before going on.
//
// Usage: node mcp-relay-restart.mjs AGENTD_BIN TOOL NEW_TOOL
// Environment: AGENTD_HOME (passed on to agentd mcp).
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [bin, tool, newTool] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

async function step(obj) {
  console.log(JSON.stringify(obj));
  const { value } = await lines.next();
  if (value !== 'ok') throw new Error(`test answered ${value}`);
}

async function call(message) {
  const t0 = Date.now();
  try {
    const res = await client.callTool({ name: tool, arguments: { message } }, undefined, { timeout: 30000 });
    const text = res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
    return { ok: !res.isError, text, ms: Date.now() - t0 };
  } catch (e) {
    return { ok: false, error: String(e.message ?? e), ms: Date.now() - t0 };
  }
}

let changed = 0;
const client = new Client({ name: 'relay-restart', version: '1.0.0' });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
const transport = new StdioClientTransport({
  command: bin,
  args: ['mcp'],
  env: { AGENTD_HOME: process.env.AGENTD_HOME, HOME: process.env.AGENTD_HOME, PATH: process.env.PATH },
  stderr: 'inherit',
});
await client.connect(transport);

await step({ step: 'before', ...(await call('before the restart')) });
// The test stops the daemon now.
await step({ step: 'down', ...(await call('while the daemon is down')) });
// The test starts the daemon again on the same address.
const after = await call('after the restart');
// The test creates an agent through the new daemon's API as soon as it
// reads this step: the GET stream, reopened in the new session, must bring
// list_changed.
const seenBefore = changed;
await step({ step: 'after', ...after });
const deadline = Date.now() + 15000;
let names = [];
while (Date.now() < deadline) {
  if (changed > seenBefore) {
    names = (await client.listTools()).tools.map((t) => t.name);
    if (names.includes(newTool)) break;
  }
  await new Promise((r) => setTimeout(r, 50));
}
await step({ step: 'list_changed', ok: names.includes(newTool), notifications: changed - seenBefore, tools: names });
await client.close();
