package acpagent

import (
	"context"
	"errors"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// resourceNotFound is ACP's error code for an unknown session or file.
const resourceNotFound = -32002

// wireError maps an error of the kernel or of this package to the
// JSON-RPC error the editor sees. It is the one place that decides codes.
// Messages are the errors' own texts, which never carry secrets (an
// authentication error names the variable to set, not its value).
func wireError(err error) error {
	if err == nil {
		return nil
	}
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re
	}
	data := map[string]any{"error": err.Error()}
	switch {
	case errors.Is(err, ErrUnknownSession), errors.Is(err, agent.ErrSessionNotFound), errors.Is(err, store.ErrNotFound):
		return &acp.RequestError{Code: resourceNotFound, Message: "Resource not found", Data: data}
	case errors.Is(err, ErrBadCwd), errors.Is(err, agent.ErrWrongAgent), errors.Is(err, tool.ErrUnknownTool), errors.Is(err, tool.ErrNoSuchApproval):
		return acp.NewInvalidParams(data)
	case errors.Is(err, agent.ErrAgentNotFound), errors.Is(err, agent.ErrNoModel),
		errors.Is(err, agent.ErrForbidden), errors.Is(err, agent.ErrReadOnly), errors.Is(err, agent.ErrSessionBusy):
		return acp.NewInvalidRequest(data)
	case errors.Is(err, llm.ErrAuth):
		// The model provider refused agentd's key: not something the
		// editor's authenticate can fix, so not auth_required.
		return acp.NewInternalError(data)
	case errors.Is(err, context.Canceled):
		return acp.NewRequestCancelled(data)
	}
	return acp.NewInternalError(data)
}
