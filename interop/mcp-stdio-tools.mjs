// Starts `agentd mcp` the way an MCP host does: @modelcontextprotocol/sdk's
// StdioClientTransport spawns the command with the SDK's default
// environment (HOME, LOGNAME, PATH, SHELL, TERM, USER, the minimal set
// hosts pass) plus the server entry's env, and keeps its stderr. Lists the
// tools and, once the server has exited, prints one JSON line
// {tools, stderr} for the Go test to check.
//
// Usage: node mcp-stdio-tools.mjs '{"command": "...", "args": [...], "env": {...}}'
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const params = JSON.parse(process.argv[2]);
const transport = new StdioClientTransport({
  command: params.command,
  args: params.args ?? [],
  env: params.env,
  stderr: 'pipe',
});
let stderr = '';
const ended = new Promise((resolve) => {
  transport.stderr.on('data', (chunk) => { stderr += chunk; });
  transport.stderr.on('end', resolve);
});
const client = new Client({ name: 'stdio-tools-test', version: '1.0.0' });
await client.connect(transport);
const { tools } = await client.listTools();
await client.close();
// close() returns once the process has exited; its stderr may still be
// draining into the pipe.
await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
console.log(JSON.stringify({ tools: tools.map((t) => t.name), stderr }));
