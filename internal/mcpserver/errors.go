package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/jsonrpcwire"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// Kinds of the JSON-RPC errors this edge answers itself. Handlers and
// transports return Go errors (core sentinels, or these kinds through
// failf) and wireError decides the code of each.
var (
	errParse          = errors.New("parse error")
	errInvalidRequest = errors.New("invalid request")
	errMethodNotFound = errors.New("method not found")
	errInvalidParams  = errors.New("invalid params")
)

// wireError maps an error of the kernel, the tool pipeline, an upstream
// or this package to the JSON-RPC error an MCP client sees. It is the one
// place that decides codes. An error that already is a JSON-RPC error (an
// upstream's, the SDK's) keeps its code. Messages are the errors' own
// texts.
func wireError(err error) *jsonrpc.Error {
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		if error(re) == err {
			return re
		}
		return &jsonrpc.Error{Code: re.Code, Message: err.Error()}
	}
	var tl *jsonrpcwire.TooLargeError
	code := int64(jsonrpc.CodeInternalError)
	switch {
	case errors.Is(err, errParse):
		code = jsonrpc.CodeParseError
	case errors.Is(err, errMethodNotFound):
		code = jsonrpc.CodeMethodNotFound
	case errors.Is(err, errInvalidRequest), errors.As(err, &tl),
		errors.Is(err, agent.ErrForbidden), errors.Is(err, agent.ErrReadOnly), errors.Is(err, agent.ErrSessionBusy):
		code = jsonrpc.CodeInvalidRequest
	case errors.Is(err, errInvalidParams),
		errors.Is(err, agent.ErrAgentNotFound), errors.Is(err, agent.ErrSessionNotFound), errors.Is(err, agent.ErrWrongAgent),
		errors.Is(err, store.ErrNotFound), errors.Is(err, tool.ErrUnknownTool), errors.Is(err, tool.ErrNoSuchApproval):
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: err.Error()}
}

// protocolError reads exactly msg and has the code of kind.
type protocolError struct {
	kind error
	msg  string
}

func (e *protocolError) Error() string { return e.msg }
func (e *protocolError) Unwrap() error { return e.kind }

// failf is the JSON-RPC error with the formatted message and the code
// wireError gives kind (one of the kinds above, or a core sentinel).
func failf(kind error, format string, args ...any) *jsonrpc.Error {
	return wireError(&protocolError{kind: kind, msg: fmt.Sprintf(format, args...)})
}

// errorResponse encodes err as the JSON-RPC error response to id (nil:
// null), for the messages the transports answer before the SDK.
func errorResponse(id json.RawMessage, err error) []byte {
	e := wireError(err)
	return jsonrpcwire.ErrorResponse(id, e.Code, e.Message)
}

// writeHTTPError answers an HTTP request with status and err as a
// JSON-RPC error response.
func writeHTTPError(w http.ResponseWriter, status int, err error) {
	writeJSON(w, status, errorResponse(nil, err))
}
