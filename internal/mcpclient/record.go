package mcpclient

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/tool"
)

// CallRecord receives an upstream's own answer to one tool call. The
// runner's tool.Result keeps only what a model reads (text and structured
// content); a bridge that passes MCP on to another protocol (the A2A proxy
// agent) needs the result as the server sent it, or the JSON-RPC error, to
// report them unflattened.
type CallRecord struct {
	// Result is the CallToolResult as the server sent it (content,
	// structuredContent, isError); nil when it sent none.
	Result *mcp.CallToolResult
	// RPCError is the JSON-RPC error the server answered instead of a
	// result, with secrets redacted; nil when there was none.
	RPCError *jsonrpc.Error
	// Err is why no answer came (the server is not connected, the link
	// broke, the call timed out, the result was too large): the error the
	// tool's Call returned.
	Err error
	// Task is the upstream task the call ran as (SEP-1686), at its last
	// known status; nil for a plain call.
	Task *UpstreamTask
}

// Exchange is what one call of this package's tools carries beyond its
// arguments, as the call's tool.Relay (tool.Request.Relay): the client
// the call is made for going down, the upstream's own answer coming back.
// Use one Exchange per call: the call writes Record before returning, so
// it may be read once Call (or the runner's Scope.Do) has returned.
type Exchange struct {
	// Caller is the MCP client the call is made for; nil for a call of
	// an agentd agent.
	Caller *Caller
	// Record receives the upstream's answer.
	Record CallRecord
	// TaskStatus, when set, is told each status of the upstream task the
	// call runs as (a task-augmented call, see tasks.go), as it changes:
	// first when the task is created, last when it ends. It is called from
	// a goroutine of the call's and must not block. Without it, the status
	// messages of a working task reach the call's Progress instead.
	TaskStatus func(UpstreamTask)
}

// exchangeOf is the Exchange c carries, or nil.
func exchangeOf(c *tool.Call) *Exchange {
	if c == nil {
		return nil
	}
	ex, _ := c.Relay.(*Exchange)
	return ex
}

// record fills ex's record, if any, from the outcome of CallTool.
func (s *server) record(ex *Exchange, res *mcp.CallToolResult, callErr, err error) {
	if ex == nil {
		return
	}
	rec := &ex.Record
	rec.Result = res
	if err != nil {
		rec.Err = err
		return
	}
	rec.RPCError = s.rpcError(callErr)
}

// rpcError is the JSON-RPC error err carries, as the server sent it but
// with secrets redacted; nil when it carries none.
func (s *server) rpcError(err error) *jsonrpc.Error {
	var rpcErr *jsonrpc.Error
	if err == nil || !errors.As(err, &rpcErr) {
		return nil
	}
	out := &jsonrpc.Error{Code: rpcErr.Code, Message: s.redact(rpcErr.Message)}
	if len(rpcErr.Data) > 0 && json.Valid(rpcErr.Data) {
		// Data is kept only when redaction leaves it unchanged: a
		// half-redacted JSON value could be invalid.
		if d := s.redact(string(rpcErr.Data)); d == string(rpcErr.Data) {
			out.Data = rpcErr.Data
		}
	}
	return out
}

// UpstreamError returns the JSON-RPC error a request on server's session
// (Session) failed with, as the server sent it (code, message, data) with
// secrets redacted, for gateways that pass it on; false when err is no
// error of the server's (the link failed, the context ended).
func (m *Manager) UpstreamError(server string, err error) (*jsonrpc.Error, bool) {
	s := m.server(server)
	if s == nil || err == nil || fromTransport(err) {
		return nil, false
	}
	e := s.rpcError(err)
	return e, e != nil
}
