// Package acpagent is agentd's Agent Client Protocol edge: the agent side of
// ACP, spoken over stdio to Zed and other ACP editors by `agentd acp`.
//
// It is a thin translation layer around the kernel. Each ACP session is a
// kernel session (the same ones the HTTP API and A2A see); each
// session/prompt is one kernel run, started on its own goroutine so that
// session/cancel interrupts it at once; the run's events become
// session/update notifications; a tool call the policy marks "ask" becomes
// session/request_permission. The editor's own capabilities join the run as
// extra tools: its MCP servers (one client manager per session), and its
// file system and terminals, which replace the built-in file_read,
// file_write and shell_exec so the agent sees unsaved buffers and runs
// commands where the user can watch them.
//
// Nothing here reaches into the agent loop: the package only calls
// Kernel.Run, Kernel.Session and the session store.
package acpagent
