// Package e2e drives the web dashboard end to end in a real headless
// Chromium (Debian's chromium package, driven by playwright-core from
// interop/node_modules): a whole daemon built by daemon.New, a scripted
// fake model (llmtest), server-everything as a stdio MCP upstream, and
// @a2a-js/sdk as an A2A client. The browser script is
// interop/dashboard-e2e.mjs.
//
// The test skips when Chromium or the Node peers are missing, unless
// AGENTD_INTEROP=1 (set by `make test`), which turns the skip into a
// failure. AGENTD_DASHBOARD_SHOTS=DIR keeps the screenshots in DIR
// (`make screenshots` writes docs/dashboard/).
package e2e
