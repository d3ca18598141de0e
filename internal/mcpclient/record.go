package mcpclient

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
}

type recordKey struct{}

// RecordCall returns a context under which a call of one of this package's
// tools fills rec with the upstream's answer. Use one record per call: the
// call writes it before returning, so it may be read once Call (or the
// runner's Scope.Call) has returned.
func RecordCall(ctx context.Context, rec *CallRecord) context.Context {
	return context.WithValue(ctx, recordKey{}, rec)
}

func recordOf(ctx context.Context) *CallRecord {
	rec, _ := ctx.Value(recordKey{}).(*CallRecord)
	return rec
}

// record fills the context's record, if any, from the outcome of CallTool.
func (s *server) record(ctx context.Context, res *mcp.CallToolResult, callErr, err error) {
	rec := recordOf(ctx)
	if rec == nil {
		return
	}
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
