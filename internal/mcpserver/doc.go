// Package mcpserver is agentd's MCP server edge: it serves agents (each
// agent flagged expose.mcp as a tool agentd_agent_{name}), optionally the
// whole tool set, and session transcripts as resources, over stdio (`agentd
// mcp`) and Streamable HTTP (/mcp), and serves single upstream servers as
// gateways (/mcp/gateway/{server}).
//
// It is a thin translation layer: a tools/call of an agent tool is one
// agent.Kernel.Run whose events become progress notifications, and every
// other tool call goes through the tool runner's pipeline (tool.Scope.Call),
// so policy, approval, timeouts and audit apply whichever edge asked.
// Tool sets (ToolSet) are the exception: tools that speak MCP themselves,
// such as the A2A agents the A2A edge's bridge serves, whose tasks need
// progress, cancellation, elicitation and resource content that a flat
// tool result cannot carry.
//
// One URL serves both eras of the protocol: requests of 2026-07-28 (no
// initialize, per-request _meta) go to a stateless SDK handler, while
// initialize-based sessions (2025-11-25 and older, Mcp-Session-Id) go to a
// stateful one, because the go-sdk serves the former only when stateless
// and server-to-client requests of the latter only when stateful.
package mcpserver
