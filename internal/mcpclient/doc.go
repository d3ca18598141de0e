// Package mcpclient is agentd's MCP client: it connects to the upstream
// MCP servers of the configuration (stdio, Streamable HTTP and legacy SSE;
// the stateless 2026-07-28 protocol and the initialize-based versions down
// to 2024-11-05, negotiated by the go-sdk) and gives agents their tools as
// one tool.Source, named mcp_{server}_{tool}.
//
// A Manager keeps connections healthy. Servers connect in parallel in the
// background; a crashed process or a lost HTTP session is noticed at once,
// the calls in flight on it fail immediately with tool.ErrDisconnected (a
// call is never replayed; a task call, below, goes on), and the server is reconnected with bounded,
// jittered exponential backoff. tools/list_changed refreshes the tool set
// live. Progress notifications reach tool.Call.Progress and extend a call's
// idle deadline (timeout_secs) up to a hard cap. Upstream log messages go
// to the daemon log tagged with the server name.
//
// A call made for an MCP client rather than an agent (a gateway's, see
// Caller and Exchange, the call's tool.Relay) also relays to that client what the server asks
// of its own client while the call runs: its log messages, and its
// sampling, elicitation and roots requests, whether sent as requests of
// its own (initialize-era links) or as input requests in the call's result
// (SEP-2322, 2026-07-28 links). Every link therefore offers sampling and
// elicitation; a request no caller can answer (an agent's call) is refused
// with a JSON-RPC error saying so.
//
// With a server that declares MCP tasks (SEP-1686, 2025-11-25), a call of
// a tool that requires them, or of one that offers them per the entry's
// tasks setting, is task-augmented (tasks.go): the call then waits on the
// task id rather than on the connection, so it survives a reconnect (the
// same task is followed on the new session), and a call given up sends
// tasks/cancel. A server that declares no tasks is called as before.
//
// Everything an upstream returns is untrusted: every tool has Origin mcp
// and Untrusted set. Stdio servers run in a process group of their own,
// with an environment cleared to PATH, HOME, TMPDIR and the names the
// entry lists, and the whole group is killed on Remove, Close and before a
// reconnect. HTTP and SSE URLs pass the netguard SSRF policy, requests
// never leave the configured origin (header values are never sent
// elsewhere, logged or put in an error), and no upstream message larger
// than Options.MaxResultBytes is ever held in memory: an oversized result
// fails its call with ErrResultTooLarge and the session goes on.
//
// Resources and prompts reach agents through four more tools,
// Manager.ResourceTools: mcp_list_resources, mcp_read_resource,
// mcp_list_prompts and mcp_get_prompt. Gateways get the live upstream
// sessions from Manager.Session.
//
// An ACP session that brings its own mcpServers gets a Manager of its own,
// closed with the session; literal env values the editor sends can be
// served through Options.LookupEnv.
package mcpclient
