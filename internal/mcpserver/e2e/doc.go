// Package e2e tests the MCP server edge end to end: a whole daemon built by
// daemon.New from a config file, the real agentd binary, and real Node
// peers (the MCP Inspector CLI, the TypeScript SDK client, the official
// conformance suite, and server-everything as an upstream whose tool
// results reach the agents' models). The A2A edge's tests that depend on
// the daemon's config (auth, push webhooks) drive it here too, with
// @a2a-js/sdk's client.
//
// Tests that need Node peers skip when interop/node_modules is missing,
// unless AGENTD_INTEROP=1, which turns the skip into a failure.
package e2e
