// Burst client: two @modelcontextprotocol/sdk clients (Streamable HTTP) on
// one host send N tools/list calls each as fast as they can, the way two
// editors or two conformance runs share a developer's machine. Prints one
// JSON line: how many calls succeeded and the distinct error messages.
//
// Usage: node mcp-burst.mjs MCP_URL N
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, n] = process.argv.slice(2);
const errors = new Set();
let ok = 0;

async function run() {
  const client = new Client({ name: 'burst', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  } catch (e) {
    errors.add(String(e.message ?? e));
    return;
  }
  for (let i = 0; i < Number(n); i++) {
    try {
      await client.listTools();
      ok++;
    } catch (e) {
      errors.add(String(e.message ?? e));
    }
  }
  await client.close();
}

await Promise.all([run(), run()]);
console.log(JSON.stringify({ ok, errors: [...errors] }));
