// Package tool defines what a tool is, whatever its origin (built-in, an
// upstream MCP server, an A2A agent, the editor), the registry that merges
// every source, and the Runner: the one security pipeline each call passes
// through (capability check, policy, approval, timeout, truncation, loop
// guard, taint labelling and audit).
package tool

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/principal"
)

// Origin says where a tool comes from. Results of every origin but
// OriginBuiltin are untrusted unless the tool says otherwise.
type Origin string

// Origins.
const (
	OriginBuiltin Origin = "builtin"
	OriginMCP     Origin = "mcp"
	OriginA2A     Origin = "a2a"
	OriginEditor  Origin = "editor"
)

// Spec describes a tool to models and protocol edges.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"` // JSON Schema, type object
	Origin      Origin          `json:"origin"`
	// Server names the upstream (MCP server or A2A agent) for non-builtin tools.
	Server string `json:"server,omitempty"`
	// Untrusted marks results as untrusted data (MCP results, A2A replies,
	// fetched web pages).
	Untrusted bool `json:"untrusted,omitempty"`
	// ReadOnly hints that the tool changes nothing (for editors' UIs).
	ReadOnly bool `json:"read_only,omitempty"`
	// Timeout overrides the runner's default per-call timeout, in seconds.
	TimeoutSecs int `json:"timeout_secs,omitempty"`
}

// Call is one invocation of a tool, as the tool sees it.
type Call struct {
	Agent     string
	SessionID string
	// Workspace is the agent's workspace directory (absolute).
	Workspace string
	Args      json.RawMessage
	// Depth counts nested agent_send calls, to stop cycles.
	Depth int
	// Principal is who the run making the call was started by (nil when
	// none is known): a run a tool starts in turn (agent_send) is that
	// principal's too, with its rights and its policy.
	Principal *principal.Principal
	// Progress reports intermediate status of a long call; never nil.
	Progress func(message string, progress, total float64)
	// Relay is what the edge that made the call passes to the tool beyond
	// the arguments, and gets back from it (Request.Relay); nil for calls
	// that carry none, such as an agent's.
	Relay Relay
}

// Relay is protocol data passed through the pipeline untouched, between
// the edge that made a call and the tool that serves it: the MCP gateway
// hands the MCP client manager's tools the downstream client the call is
// made for, and gets back the upstream's own answer, unflattened. The
// pipeline never looks inside; the tool that knows the concrete type
// (*mcpclient.Exchange) type-asserts it, and any other tool ignores it.
// It has no methods so that the core names no protocol; it is a field of
// the call's types rather than a context value so that what a call
// carries is visible in its signature.
type Relay any

// Result is what a tool returns. Tool failures the model should see (bad
// arguments, a file not found, an upstream tool error) are results with
// IsError set; a Go error from Call means the call could not be made at all
// and is reported to the model as an error result too.
type Result struct {
	Content string
	IsError bool
	// Structured is optional machine-readable output (MCP structured
	// content, A2A data parts), passed through to protocol edges.
	Structured json.RawMessage
	// Images are the result's pictures, for models that accept images;
	// Content must describe each of them too (a "[image: ...]" line), as
	// that is all a text-only model gets. The runner keeps those of a type
	// models take, within RunnerOptions.MaxImageBytes.
	Images []llm.Image
}

// Tool is something an agent can call.
type Tool interface {
	Spec() Spec
	Call(ctx context.Context, c *Call) (Result, error)
}

// Source provides a changing set of tools (an MCP server connection, the
// A2A client). Tools is called on every listing, so it must be cheap.
type Source interface {
	Tools() []Tool
}

// ErrUnknownTool is returned when a name resolves to no tool.
var ErrUnknownTool = errors.New("unknown tool")

// ErrDisconnected is returned by tools whose upstream went away mid-call.
var ErrDisconnected = errors.New("upstream disconnected")
