package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/auditlog"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/tool"
)

// Error is the stable JSON error shape of every API response:
//
//	{"error": {"code": "not_found", "message": "agent not found: \"x\"", "request_id": "..."}}
//
// request_id is the answer's X-Request-Id, which the daemon's log records
// of the request carry too. Field, when set, names the request field at
// fault ("model", "transport.url"), so a form can show the message next
// to it.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// Fields holds every field's problem when a validation found
	// several ("transport.url": "must be an http:// or https:// URL").
	Fields    map[string]string `json:"fields,omitempty"`
	RequestID string            `json:"request_id,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// errorf builds an *Error.
func errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// fieldLine is one validation problem as config, manifest and mcpclient
// word them: "field.path: what is wrong" (several fields may share one
// message: "max_tokens, token_budget: must not be negative").
var fieldLine = regexp.MustCompile(`^((?:[a-z_][a-z0-9_]*(?:\[\d+\])?(?:\.[a-z_][a-z0-9_]*(?:\[\d+\])?)*)(?:, (?:[a-z_][a-z0-9_]*(?:\[\d+\])?(?:\.[a-z_][a-z0-9_]*(?:\[\d+\])?)*))*): (.+)$`)

// invalid is a 400 for a validation error, naming the fields at fault
// when its lines say which, so a form can show each message by its field.
func invalid(err error) *Error {
	e := &Error{Status: http.StatusBadRequest, Code: "invalid", Message: err.Error()}
	for _, line := range strings.Split(err.Error(), "\n") {
		m := fieldLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		for _, f := range strings.Split(m[1], ", ") {
			if e.Fields == nil {
				e.Fields = map[string]string{}
				e.Field = f
			}
			if _, dup := e.Fields[f]; !dup {
				e.Fields[f] = m[2]
			}
		}
	}
	if e.Field == "" {
		if m := unknownField.FindStringSubmatch(e.Message); m != nil {
			e.Field, e.Fields = m[1], map[string]string{m[1]: "no such field"}
		}
	}
	return e
}

// ToError maps core errors to HTTP statuses in one place; the A2A edge's
// non-protocol routes use it too, so both answer a core error alike.
func ToError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return errorf(http.StatusRequestEntityTooLarge, "too_large", "request body exceeds %d bytes", mbe.Limit)
	case errors.Is(err, agent.ErrAgentNotFound), errors.Is(err, agent.ErrSessionNotFound), errors.Is(err, store.ErrNotFound),
		errors.Is(err, tool.ErrUnknownTool), errors.Is(err, tool.ErrNoSuchApproval):
		return errorf(http.StatusNotFound, "not_found", "%s", err)
	case errors.Is(err, agent.ErrForbidden):
		return errorf(http.StatusForbidden, "forbidden", "%s", err)
	case errors.Is(err, netguard.ErrBlocked):
		return errorf(http.StatusForbidden, "blocked", "%s", err)
	case errors.Is(err, agent.ErrReadOnly):
		return errorf(http.StatusConflict, "read_only", "%s: edit the config file instead", err)
	case errors.Is(err, agent.ErrSessionBusy), errors.Is(err, store.ErrExists), errors.Is(err, store.ErrConflict):
		return errorf(http.StatusConflict, "conflict", "%s", err)
	case errors.Is(err, llm.ErrAuth):
		return errorf(http.StatusBadGateway, "model_auth", "%s", err)
	case errors.As(err, new(*llm.StatusError)):
		// The model provider failed after its retries: not our fault, and
		// worth retrying later.
		return errorf(http.StatusBadGateway, "model_error", "%s", err)
	case errors.Is(err, agent.ErrWrongAgent), errors.Is(err, agent.ErrNoModel):
		return errorf(http.StatusBadRequest, "bad_request", "%s", err)
	case errors.Is(err, tool.ErrDisconnected):
		return errorf(http.StatusBadGateway, "upstream", "%s", err)
	case errors.Is(err, store.ErrUnavailable):
		// The database is down or cut off: transient, and the same for
		// every request. The message is stable and names nothing of the
		// database (the store's errors never do; this says less still).
		return errorf(http.StatusServiceUnavailable, "store_unavailable", "%s", store.ErrUnavailable)
	case errors.Is(err, agent.ErrShuttingDown):
		// This replica is draining: another one takes the retry.
		return errorf(http.StatusServiceUnavailable, "shutting_down", "%s", err)
	case errors.Is(err, auditlog.ErrClosed):
		// The daemon is shutting down.
		return errorf(http.StatusServiceUnavailable, "unavailable", "%s", err)
	}
	return errorf(http.StatusInternalServerError, "internal", "%s", err)
}

// writeError writes err in the stable shape and logs server errors.
func writeError(w http.ResponseWriter, log *slog.Logger, r *http.Request, err error) {
	e := *ToError(err)
	e.RequestID = RequestIDOf(w)
	if e.Status >= 500 {
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, e.Status, map[string]*Error{"error": &e})
}

// WriteJSON writes v as the API writes its answers (indented JSON), for
// the daemon's own routes (the probes).
func WriteJSON(w http.ResponseWriter, status int, v any) { writeJSON(w, status, v) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // the client may be gone; nothing to do about it
}

// WriteError writes an error in the API's stable shape; middleware and
// other edges' non-protocol routes use it.
func WriteError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, map[string]*Error{"error": {Status: status, Code: code, Message: message, RequestID: RequestIDOf(w)}})
}
