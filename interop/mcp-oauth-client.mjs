// OAuth client: @modelcontextprotocol/sdk's client with its own OAuth
// support (an OAuthClientProvider) against a protected agentd /mcp. It
// follows the MCP authorization flow: 401 → protected resource metadata →
// authorization server metadata → dynamic client registration → the
// authorization URL (approved at once by the test's authorization server:
// this script plays the browser and reads the redirect) → code exchange
// with PKCE → connect with the token, list tools, call the agent tool.
// Prints one JSON line per step for the Go test.
//
// Usage: node mcp-oauth-client.mjs MCP_URL AGENT_TOOL
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [url, tool] = process.argv.slice(2);
const out = (step, v) => console.log(JSON.stringify({ step, ...v }));
const redirectUrl = 'http://127.0.0.1:1/callback';

let client_info, saved_tokens, verifier, authUrl;
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return { client_name: 'agentd-oauth-test', redirect_uris: [redirectUrl], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  },
  clientInformation: () => client_info,
  saveClientInformation: (i) => { client_info = i; },
  tokens: () => saved_tokens,
  saveTokens: (t) => { saved_tokens = t; },
  redirectToAuthorization: (u) => { authUrl = u; },
  saveCodeVerifier: (v) => { verifier = v; },
  codeVerifier: () => verifier,
};

const connect = async () => {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
  return { client, transport };
};

try {
  await connect();
  out('connect', { ok: true, unexpected: 'connected without a token' });
  process.exit(1);
} catch (e) {
  if (!(e instanceof UnauthorizedError) || !authUrl) {
    out('connect', { ok: false, error: String(e) });
    process.exit(1);
  }
  out('unauthorized', { registered: Boolean(client_info?.client_id), authorize: authUrl.origin + authUrl.pathname, resource: authUrl.searchParams.get('resource') });
}

// The browser: follow the authorization URL, read the code off the redirect.
const res = await fetch(authUrl, { redirect: 'manual' });
const location = new URL(res.headers.get('location'));
const code = location.searchParams.get('code');
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
await transport.finishAuth(code);
out('token', { has: Boolean(saved_tokens?.access_token) });

const { client } = await connect();
const { tools } = await client.listTools();
out('list', { tools: tools.map((t) => t.name) });
const r = await client.callTool({ name: tool, arguments: { message: 'review this' } });
out('call', { isError: r.isError ?? false, text: (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text)[0] ?? '' });
await client.close();
