package a2aedge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/agent"
)

// The seed's (pre-0.2 A2A) routes and shapes, kept so clients written
// against it keep working:
//
//	POST {listen_path}/tasks/send        {"jsonrpc":"2.0","id":1,"method":"tasks/send","params":{...}}
//	GET  {listen_path}/tasks/{id}
//	POST {listen_path}/tasks/{id}/cancel
//
// They answer a bare task: {"id", "sessionId", "status": "completed",
// "messages": [...], "artifacts": [...]}, with "type"-tagged parts and
// camelCase status words (submitted, working, inputRequired, completed,
// cancelled, failed). Unlike the seed, tasks/send goes to the agent named
// by params.agent (or params.metadata.agent), else the default agent,
// never "the first agent"; sessionId is the A2A contextId, so a seed
// client continues a conversation by sending the sessionId it got back.

// LegacyTask is the seed's task shape.
type LegacyTask struct {
	ID        string           `json:"id"`
	SessionID string           `json:"sessionId,omitempty"`
	Status    string           `json:"status"`
	Messages  []LegacyMessage  `json:"messages"`
	Artifacts []LegacyArtifact `json:"artifacts"`
	AgentID   string           `json:"agentId,omitempty"`
}

// LegacyMessage is the seed's message shape.
type LegacyMessage struct {
	Role  string       `json:"role"`
	Parts []LegacyPart `json:"parts"`
}

// LegacyPart is a "type"-tagged part: text {text}, file {name, mime_type,
// data (base64)} or data {mime_type, data}.
type LegacyPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	Name     string          `json:"name,omitempty"`
	MimeType string          `json:"mime_type,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	URI      string          `json:"uri,omitempty"`
}

// LegacyArtifact is the seed's artifact shape.
type LegacyArtifact struct {
	Name  string       `json:"name,omitempty"`
	Index int          `json:"index"`
	Parts []LegacyPart `json:"parts"`
}

// legacyParams are tasks/send's params. Spellings of other seeds'
// clients (mimeType, content) are accepted too.
type legacyParams struct {
	ID        string         `json:"id"`
	SessionID string         `json:"sessionId"`
	Agent     string         `json:"agent"`
	Metadata  map[string]any `json:"metadata"`
	Message   struct {
		Role  string `json:"role"`
		Parts []struct {
			Type      string          `json:"type"`
			Kind      string          `json:"kind"`
			Text      string          `json:"text"`
			Name      string          `json:"name"`
			MimeType  string          `json:"mime_type"`
			MimeType2 string          `json:"mimeType"`
			MediaType string          `json:"mediaType"`
			Data      json.RawMessage `json:"data"`
			Content   json.RawMessage `json:"content"`
		} `json:"parts"`
	} `json:"message"`
}

type legacyEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// legacySend serves POST {listen_path}/tasks/send: it runs the task to
// completion (or input-required) and answers the bare task.
func (s *Server) legacySend(w http.ResponseWriter, r *http.Request) {
	var env legacyEnvelope
	if err := json.NewDecoder(r.Body).Decode(&env); err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			// A body over [limits] max_body_bytes (sent without a
			// length, so admission could not refuse it up front).
			writeErr(w, s.log, err)
			return
		}
		writeErr(w, s.log, fmt.Errorf("%w: request body: %v", errBadRequest, err))
		return
	}
	raw := env.Params
	if env.Method == "" && env.Params == nil {
		// Not an envelope: nothing to send.
		writeErr(w, s.log, fmt.Errorf("%w: expected {\"jsonrpc\":\"2.0\",\"method\":\"tasks/send\",\"params\":{...}}", errBadRequest))
		return
	}
	t, err := s.legacyRun(w, r, raw)
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, t)
}

// legacyRPC serves tasks/send on a JSON-RPC endpoint, answering a JSON-RPC
// response whose result is the seed's task.
func (s *Server) legacyRPC(w http.ResponseWriter, r *http.Request, body []byte) {
	var env legacyEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		writeJSON(w, http.StatusOK, rpcError(nil, -32700, "parse error: "+err.Error()))
		return
	}
	t, err := s.legacyRun(w, r, env.Params)
	if errors.Is(err, agent.ErrForbidden) || errors.Is(err, a2a.ErrUnauthorized) {
		// As the endpoint answers a principal that may not use its own
		// agent (mayRun): a 403, never a 200 with a failed task.
		writeErr(w, s.log, err)
		return
	}
	if err != nil {
		code := -32603
		switch {
		case errors.Is(err, errBadRequest), errors.Is(err, a2a.ErrInvalidParams):
			code = -32602
		case errors.Is(err, a2a.ErrTaskNotFound):
			code = -32001
		}
		writeJSON(w, http.StatusOK, rpcError(env.ID, code, err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"jsonrpc": "2.0", "id": env.ID, "result": t})
}

func rpcError(id any, code int, msg string) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}}
}

// legacyRun decodes tasks/send params and sends the message through the
// A2A handler, blocking until the task ends or needs input.
func (s *Server) legacyRun(w http.ResponseWriter, r *http.Request, raw json.RawMessage) (*LegacyTask, error) {
	p, msg, err := parseLegacyParams(raw)
	if err != nil {
		return nil, err
	}
	name := p.Agent
	if a, ok := p.Metadata["agent"].(string); ok && name == "" {
		name = a
	}
	if name == "" {
		m, err := s.defaultAgent(r.Context())
		if err != nil {
			return nil, err
		}
		name = m.Name
	} else if _, err := s.exposed(r.Context(), name); err != nil {
		return nil, err
	}
	if err := mayRunAgent(r.Context(), name); err != nil {
		return nil, err
	}
	if p.ID != "" {
		// An id naming a task waiting for input continues it; any other
		// id is the client's suggestion, which A2A servers do not take.
		// Another principal's task is not found here (TaskStore.Get), so
		// its question is not answered: the message starts a new task.
		if st, err := s.opts.Tasks.Get(withAgent(r.Context(), name), a2a.TaskID(p.ID)); err == nil && st.Task.Status.State == a2a.TaskStateInputRequired {
			msg.TaskID, msg.ContextID = st.Task.ID, st.Task.ContextID
		}
	}
	ctx := s.prepare(w, r, name).Context()
	res, err := s.handler.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		return nil, err
	}
	switch v := res.(type) {
	case *a2a.Task:
		lt := toLegacyTask(v)
		lt.AgentID = name
		return lt, nil
	case *a2a.Message:
		return &LegacyTask{ID: string(v.TaskID), SessionID: v.ContextID, Status: "completed", Messages: []LegacyMessage{toLegacyMessage(v)}, Artifacts: []LegacyArtifact{}, AgentID: name}, nil
	}
	return nil, fmt.Errorf("unexpected send result %T", res)
}

// parseLegacyParams decodes tasks/send params into an A2A message.
func parseLegacyParams(raw json.RawMessage) (legacyParams, *a2a.Message, error) {
	var p legacyParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, nil, fmt.Errorf("%w: params: %v", errBadRequest, err)
	}
	msg := &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleUser, ContextID: p.SessionID}
	for i, lp := range p.Message.Parts {
		typ := lp.Type
		if typ == "" {
			typ = lp.Kind
		}
		mime := firstNonEmpty(lp.MimeType, lp.MimeType2, lp.MediaType)
		data := lp.Data
		if len(data) == 0 {
			data = lp.Content
		}
		switch typ {
		case "text", "":
			text := lp.Text
			if text == "" && len(lp.Content) > 0 {
				_ = json.Unmarshal(lp.Content, &text)
			}
			msg.Parts = append(msg.Parts, a2a.NewTextPart(text))
		case "data":
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				return p, nil, fmt.Errorf("%w: message.parts[%d].data: %v", errBadRequest, i, err)
			}
			msg.Parts = append(msg.Parts, a2a.NewDataPart(v))
		case "file":
			var b64 string
			if err := json.Unmarshal(data, &b64); err != nil {
				return p, nil, fmt.Errorf("%w: message.parts[%d].data: a file's data is a base64 string", errBadRequest, i)
			}
			bin, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return p, nil, fmt.Errorf("%w: message.parts[%d].data: %v", errBadRequest, i, err)
			}
			part := a2a.NewRawPart(bin)
			part.Filename, part.MediaType = lp.Name, mime
			msg.Parts = append(msg.Parts, part)
		default:
			return p, nil, fmt.Errorf("%w: message.parts[%d].type: %q is not text, file or data", errBadRequest, i, typ)
		}
	}
	if len(msg.Parts) == 0 {
		return p, nil, fmt.Errorf("%w: message.parts: at least one part is required", errBadRequest)
	}
	return p, msg, nil
}

// legacyTask reads the task of a legacy route: one the request's
// principal owns (TaskNotFound otherwise, as for a missing task) of an
// agent it may run (403 otherwise), with ctx scoped to that agent as its
// own endpoint would be.
func (s *Server) legacyTask(r *http.Request, id a2a.TaskID) (context.Context, *a2a.Task, error) {
	t, _, agentName, err := s.opts.Tasks.get(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	if err := mayRunAgent(r.Context(), agentName); err != nil {
		return nil, nil, err
	}
	return withAgent(r.Context(), agentName), t, nil
}

func (s *Server) legacyGet(w http.ResponseWriter, r *http.Request) {
	_, t, err := s.legacyTask(r, a2a.TaskID(r.PathValue("id")))
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, toLegacyTask(t))
}

func (s *Server) legacyCancel(w http.ResponseWriter, r *http.Request) {
	id := a2a.TaskID(r.PathValue("id"))
	ctx, task, err := s.legacyTask(r, id)
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	if state := task.Status.State; state.Terminal() && state != a2a.TaskStateCanceled {
		writeErr(w, s.log, fmt.Errorf("%w: task %s is already %s; only unfinished tasks can be cancelled", a2a.ErrTaskNotCancelable, id, LegacyStatus(state)))
		return
	}
	t, err := s.handler.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id})
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, toLegacyTask(t))
}

// LegacyStatus names a state as the seed did.
func LegacyStatus(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateSubmitted:
		return "submitted"
	case a2a.TaskStateWorking:
		return "working"
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		return "inputRequired"
	case a2a.TaskStateCompleted:
		return "completed"
	case a2a.TaskStateCanceled:
		return "cancelled"
	}
	return "failed"
}

func toLegacyTask(t *a2a.Task) *LegacyTask {
	out := &LegacyTask{ID: string(t.ID), SessionID: t.ContextID, Status: LegacyStatus(t.Status.State),
		Messages: []LegacyMessage{}, Artifacts: []LegacyArtifact{}}
	for _, m := range t.History {
		out.Messages = append(out.Messages, toLegacyMessage(m))
	}
	if m := t.Status.Message; m != nil {
		out.Messages = append(out.Messages, toLegacyMessage(m))
	}
	for i, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, LegacyArtifact{Name: a.Name, Index: i, Parts: toLegacyParts(a.Parts)})
	}
	return out
}

func toLegacyMessage(m *a2a.Message) LegacyMessage {
	role := "agent"
	if m.Role == a2a.MessageRoleUser {
		role = "user"
	}
	return LegacyMessage{Role: role, Parts: toLegacyParts(m.Parts)}
}

func toLegacyParts(parts a2a.ContentParts) []LegacyPart {
	out := make([]LegacyPart, 0, len(parts))
	for _, p := range parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			out = append(out, LegacyPart{Type: "text", Text: string(c)})
		case a2a.Data:
			b, _ := json.Marshal(c.Value)
			out = append(out, LegacyPart{Type: "data", MimeType: "application/json", Data: b})
		case a2a.Raw:
			b, _ := json.Marshal(base64.StdEncoding.EncodeToString(c))
			out = append(out, LegacyPart{Type: "file", Name: p.Filename, MimeType: p.MediaType, Data: b})
		case a2a.URL:
			out = append(out, LegacyPart{Type: "file", Name: p.Filename, MimeType: p.MediaType, URI: string(c)})
		}
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
