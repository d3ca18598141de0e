package a2aedge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
)

// The daemon's own API over the A2A client (used by `agentd a2a`):
//
//	GET  /api/a2a/agents              external agents and their discovery state
//	POST /api/a2a/discover            {"url", "allow_private"} → the card
//	POST /api/a2a/send                {"agent", "message", "context_id", "task_id", "stream"}
//	GET  /api/a2a/tasks               local tasks, newest first (?agent=&state=&limit=&offset=), for the dashboard
//	GET  /api/a2a/tasks/{id}          a local task, else one sent through this daemon (?agent= to choose)
//	POST /api/a2a/tasks/{id}/cancel   cancel a local task, else one sent through this daemon (?agent=)
//	POST /api/a2a/tasks/{id}/reply    {"approved": bool}: answer a local task's approval question, as its client would

func (s *Server) registerAPI(mux Router) {
	mux.HandleFunc("GET /api/a2a/agents", s.apiAgents)
	mux.HandleFunc("POST /api/a2a/discover", s.apiDiscover)
	mux.HandleFunc("POST /api/a2a/send", s.apiSend)
	mux.HandleFunc("GET /api/a2a/tasks", s.apiTasks)
	mux.HandleFunc("GET /api/a2a/tasks/{id}", s.apiTask)
	mux.HandleFunc("POST /api/a2a/tasks/{id}/cancel", s.apiCancel)
	mux.HandleFunc("POST /api/a2a/tasks/{id}/reply", s.apiReply)
}

// Who may use the external agents: each one spends a credential the
// daemon holds, so a principal sends to, reads and cancels tasks of only
// the agents its a2a_agents globs name (every one for an admin), and
// only the remote tasks it sent itself. A URL instead of a configured
// agent, and discovery, make the daemon fetch what the caller chose:
// admins only, and only admins may reach loopback and private networks
// (allow_private).

func (s *Server) apiAgents(w http.ResponseWriter, r *http.Request) {
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	p := principal.FromContext(r.Context())
	agents := []RemoteStatus{}
	for _, a := range s.opts.Client.Agents() {
		if p == nil || p.MayUseExternalAgent(a.Name) {
			agents = append(agents, a)
		}
	}
	writeJSON(w, http.StatusOK, httpapi.PageBody("agents", httpapi.Window(agents, pg), len(agents), pg))
}

// mayUseExternal is nil when the request's principal may send to target
// (a configured external agent's name, or a URL) and, for a task id, act
// on that remote task. taskID "" with target "" resolves nothing.
func (s *Server) mayUseExternal(r *http.Request, target, taskID string) error {
	p := principal.FromContext(r.Context())
	if p == nil || p.Admin {
		return nil
	}
	if target != "" {
		if err := s.mayUseTarget(p, target); err != nil {
			return err
		}
	}
	if taskID == "" {
		return nil
	}
	sentTo, owner, ok := s.opts.Client.sentBy(a2a.TaskID(taskID))
	if !ok || !p.MaySee(owner) || target != "" && target != sentTo {
		// Another's remote task, or one this daemon did not send: as
		// unknown as a missing one.
		return fmt.Errorf("%w: task %s was not sent by principal %q through this daemon", a2a.ErrTaskNotFound, taskID, p.Name)
	}
	return s.mayUseTarget(p, sentTo)
}

// mayUseTarget is nil when p may send to target: a configured external
// agent its a2a_agents name; a URL is for admins.
func (s *Server) mayUseTarget(p *principal.Principal, target string) error {
	if strings.Contains(target, "://") {
		return fmt.Errorf("%w: principal %q may not send to a URL (admins only; ask for the agent to be configured in [[a2a.external_agents]] and named in its a2a_agents)", agent.ErrForbidden, p.Name)
	}
	name, ok := s.opts.Client.configured(target)
	if !ok {
		name = target
	}
	if !p.MayUseExternalAgent(name) {
		return fmt.Errorf("%w: principal %q may not use external agent %q (its a2a_agents)", agent.ErrForbidden, p.Name, name)
	}
	return nil
}

// DiscoverRequest is the body of POST /api/a2a/discover.
type DiscoverRequest struct {
	URL          string `json:"url"`
	AllowPrivate bool   `json:"allow_private,omitempty"`
}

func (s *Server) apiDiscover(w http.ResponseWriter, r *http.Request) {
	var req DiscoverRequest
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, s.log, err)
		return
	}
	if req.URL == "" {
		writeErr(w, s.log, fmt.Errorf("%w: url: required", errBadRequest))
		return
	}
	if p := principal.FromContext(r.Context()); p != nil && !p.Admin {
		// The daemon fetches the URL the caller names: an admin's call,
		// all the more with allow_private (loopback, private networks).
		writeErr(w, s.log, fmt.Errorf("%w: principal %q may not discover A2A agents (admins only)", agent.ErrForbidden, p.Name))
		return
	}
	reach := Reach{AllowPrivate: req.AllowPrivate, Hint: `send "allow_private": true (agentd a2a discover --allow-private) to allow it`}
	card, err := s.opts.Client.Discover(r.Context(), req.URL, reach, "")
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, card)
}

// APISendRequest is the body of POST /api/a2a/send.
type APISendRequest struct {
	Agent string `json:"agent"`
	SendRequest
	// Stream answers a stream of server-sent events, one per A2A event
	// ("event: task|statusUpdate|artifactUpdate|message", data: the event).
	Stream bool `json:"stream,omitempty"`
}

// APISendResponse is the reply of a non-streamed POST /api/a2a/send.
type APISendResponse struct {
	Task *a2a.Task `json:"task"`
	// Text is what the task produced, as text.
	Text string `json:"text"`
}

func (s *Server) apiSend(w http.ResponseWriter, r *http.Request) {
	var req APISendRequest
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, s.log, err)
		return
	}
	if req.Agent == "" || req.Message == "" {
		writeErr(w, s.log, fmt.Errorf("%w: agent and message are required", errBadRequest))
		return
	}
	if err := s.mayUseExternal(r, req.Agent, req.TaskID); err != nil {
		writeErr(w, s.log, err)
		return
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	if !req.Stream {
		t, err := s.opts.Client.Send(r.Context(), req.Agent, req.SendRequest)
		if err != nil {
			writeErr(w, s.log, err)
			return
		}
		writeJSON(w, http.StatusOK, APISendResponse{Task: t, Text: ResultText(t)})
		return
	}
	rc := http.NewResponseController(w)
	started := false
	for ev, err := range s.opts.Client.Stream(r.Context(), req.Agent, req.SendRequest) {
		if err != nil {
			if !started {
				writeErr(w, s.log, err)
				return
			}
			b, _ := json.Marshal(map[string]string{"message": err.Error()})
			fmt.Fprintf(w, "event: error\ndata: %s\n\n", b)
			_ = rc.Flush()
			return
		}
		if !started {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			started = true
		}
		b, err := json.Marshal(a2a.StreamResponse{Event: ev})
		if err != nil {
			continue
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", EventKind(ev), b)
		_ = rc.Flush()
	}
}

// EventKind names an A2A event as the stream response's field does.
func EventKind(ev a2a.Event) string {
	switch ev.(type) {
	case *a2a.Task:
		return "task"
	case *a2a.Message:
		return "message"
	case *a2a.TaskStatusUpdateEvent:
		return "statusUpdate"
	case *a2a.TaskArtifactUpdateEvent:
		return "artifactUpdate"
	}
	return "event"
}

// TaskView is a task as the dashboard shows it: plain words and text
// instead of the protocol's enums and parts.
type TaskView struct {
	ID        string    `json:"id"`
	ContextID string    `json:"context_id"`
	Agent     string    `json:"agent,omitempty"`
	State     string    `json:"state"` // submitted, working, input-required, completed, canceled, failed, ...
	Terminal  bool      `json:"terminal"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// Title is the task's first user message, cut short.
	Title string `json:"title"`
	// Status is the text of the current status message (a question, an
	// error, the reason of a cancel).
	Status string `json:"status,omitempty"`
	// History is every message, oldest first (the detail view only).
	History []ViewMessage `json:"history,omitempty"`
	// Text is what the task produced, as text (the detail view only).
	Text string `json:"text,omitempty"`
	// Approval is the tool call an input-required task asks its client
	// to approve, read from the question's data part.
	Approval *TaskApproval `json:"approval,omitempty"`
}

// TaskApproval is the call an A2A approval question is about. It has no
// deadline: the task waits for its client (or an operator) to answer.
type TaskApproval struct {
	Tool      string `json:"tool"`
	Arguments any    `json:"arguments,omitempty"`
	Reason    string `json:"reason,omitempty"`
	CallID    string `json:"call_id,omitempty"`
}

// approvalOf reads the approval_request data part approvalMessage puts
// in an input-required task's status message, if there is one.
func approvalOf(t *a2a.Task) *TaskApproval {
	if t.Status.State != a2a.TaskStateInputRequired || t.Status.Message == nil {
		return nil
	}
	for _, p := range t.Status.Message.Parts {
		d, ok := p.Data().(map[string]any)
		if !ok || d["type"] != "approval_request" {
			continue
		}
		str := func(k string) string { v, _ := d[k].(string); return v }
		return &TaskApproval{Tool: str("tool"), Arguments: d["arguments"], Reason: str("reason"), CallID: str("callId")}
	}
	return nil
}

// ViewMessage is one message of a TaskView.
type ViewMessage struct {
	Role string `json:"role"` // user, agent
	Text string `json:"text"`
}

// StateWord names a task state as the dashboard (and A2A 0.3) spells it.
func StateWord(st a2a.TaskState) string {
	if st == a2a.TaskStateUnspecified {
		return "unknown"
	}
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(st), "TASK_STATE_")), "_", "-")
}

func stateFromWord(w string) (a2a.TaskState, bool) {
	for _, st := range taskStates {
		if StateWord(st) == w {
			return st, true
		}
	}
	return "", false
}

func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if t := p.Text(); t != "" {
			b.WriteString(t)
		} else if d := p.Data(); d != nil {
			j, _ := json.Marshal(d)
			b.Write(j)
		} else if p.Filename != "" || p.MediaType != "" {
			fmt.Fprintf(&b, "[file %s %s]", p.Filename, p.MediaType)
		}
	}
	return b.String()
}

func viewOf(t *a2a.Task, agent string, created, updated time.Time, full bool) TaskView {
	v := TaskView{ID: string(t.ID), ContextID: t.ContextID, Agent: agent, State: StateWord(t.Status.State), Terminal: t.Status.State.Terminal(),
		CreatedAt: created, UpdatedAt: updated, Status: messageText(t.Status.Message), Approval: approvalOf(t)}
	for _, m := range t.History {
		if m != nil && m.Role == a2a.MessageRoleUser {
			title := []rune(messageText(m))
			if len(title) > 120 {
				title = append(title[:117], '.', '.', '.')
			}
			v.Title = string(title)
			break
		}
	}
	if full {
		for _, m := range t.History {
			if m == nil {
				continue
			}
			role := "agent"
			if m.Role == a2a.MessageRoleUser {
				role = "user"
			}
			v.History = append(v.History, ViewMessage{Role: role, Text: messageText(m)})
		}
		v.Text = ResultText(t)
	}
	return v
}

// mayAct reports whether the request's principal may see or cancel a
// task of agent in session contextID: one it may run the agent of and
// whose session is its own, or any for an admin (and for the daemon
// without keys).
func (s *Server) mayAct(r *http.Request, agent, contextID string) bool {
	p := principal.FromContext(r.Context())
	if p == nil || p.Admin {
		return true
	}
	if !p.MayRunAgent(agent) {
		return false
	}
	sess, err := s.opts.Sessions.GetSession(r.Context(), contextID)
	return err == nil && p.MaySee(sess.Principal)
}

// apiTasks lists local tasks for the dashboard, newest first.
func (s *Server) apiTasks(w http.ResponseWriter, r *http.Request) {
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	q := r.URL.Query()
	f := store.TaskFilter{Agent: q.Get("agent"), Limit: pg.Limit, Offset: pg.Offset}
	if word := q.Get("state"); word != "" {
		st, ok := stateFromWord(word)
		if !ok {
			words := make([]string, len(taskStates))
			for i, st := range taskStates {
				words[i] = StateWord(st)
			}
			httpapi.WriteError(w, http.StatusBadRequest, "invalid", fmt.Sprintf("state: %q is not one of %s", word, strings.Join(words, ", ")))
			return
		}
		f.State = string(st)
	}
	f.Owner = ownerFilter(r.Context())
	recs, total, err := s.opts.Tasks.Recent(r.Context(), f)
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	out := make([]TaskView, 0, len(recs))
	for _, rec := range recs {
		if s.mayAct(r, rec.Agent, rec.Task.ContextID) {
			out = append(out, viewOf(rec.Task, rec.Agent, rec.CreatedAt, rec.UpdatedAt, false))
		}
	}
	writeJSON(w, http.StatusOK, httpapi.PageBody("tasks", out, total, pg))
}

func (s *Server) apiTask(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	target := r.URL.Query().Get("agent")
	if target == "" {
		if rec, ok := s.localTask(r, id); ok {
			writeJSON(w, http.StatusOK, map[string]any{"task": rec.Task, "text": ResultText(rec.Task), "source": "local",
				"view": viewOf(rec.Task, rec.Agent, rec.CreatedAt, rec.UpdatedAt, true)})
			return
		}
	}
	if err := s.mayUseExternal(r, target, id); err != nil {
		writeErr(w, s.log, err)
		return
	}
	t, err := s.opts.Client.GetTask(r.Context(), target, id)
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"task": t, "text": ResultText(t), "source": "remote", "view": viewOf(t, target, time.Time{}, time.Time{}, true)})
}

// localTask finds a task of this daemon that the principal may see.
func (s *Server) localTask(r *http.Request, id string) (TaskRecord, bool) {
	st, err := s.opts.Tasks.Get(r.Context(), a2a.TaskID(id))
	if err != nil {
		return TaskRecord{}, false
	}
	recs, _, err := s.opts.Tasks.Recent(r.Context(), store.TaskFilter{ContextID: st.Task.ContextID})
	rec := TaskRecord{Task: st.Task}
	if err == nil {
		for _, x := range recs {
			if x.Task.ID == st.Task.ID {
				rec.Agent, rec.CreatedAt, rec.UpdatedAt = x.Agent, x.CreatedAt, x.UpdatedAt
			}
		}
	}
	// A task the principal may not see does not exist, as far as it knows.
	return rec, s.mayAct(r, rec.Agent, rec.Task.ContextID)
}

func (s *Server) apiCancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	target := r.URL.Query().Get("agent")
	if target == "" {
		if _, err := s.opts.Tasks.Get(r.Context(), a2a.TaskID(id)); err == nil {
			if _, ok := s.localTask(r, id); !ok {
				writeErr(w, s.log, fmt.Errorf("%w: %s", a2a.ErrTaskNotFound, id))
				return
			}
			t, err := s.handler.CancelTask(r.Context(), &a2a.CancelTaskRequest{ID: a2a.TaskID(id)})
			if err != nil {
				writeErr(w, s.log, err)
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"task": t, "source": "local", "view": viewOf(t, "", time.Time{}, time.Time{}, true)})
			return
		}
	}
	if err := s.mayUseExternal(r, target, id); err != nil {
		writeErr(w, s.log, err)
		return
	}
	t, err := s.opts.Client.CancelTask(r.Context(), target, id)
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"task": t, "source": "remote"})
}

// ReplyRequest is the body of POST /api/a2a/tasks/{id}/reply.
type ReplyRequest struct {
	Approved *bool `json:"approved"`
}

// apiReply answers the approval question of a local input-required task
// on its client's behalf: an operator in the dashboard decides for an A2A
// client that cannot. The answer is the task's next message, as if the
// client had sent it, so the task resumes and its client sees it finish.
func (s *Server) apiReply(w http.ResponseWriter, r *http.Request) {
	var req ReplyRequest
	if err := decodeBody(r, &req); err != nil {
		writeErr(w, s.log, err)
		return
	}
	if req.Approved == nil {
		writeErr(w, s.log, fmt.Errorf("%w: approved: required (true or false)", errBadRequest))
		return
	}
	id := r.PathValue("id")
	rec, ok := s.localTask(r, id)
	if !ok {
		writeErr(w, s.log, fmt.Errorf("%w: %s", a2a.ErrTaskNotFound, id))
		return
	}
	if rec.Task.Status.State != a2a.TaskStateInputRequired {
		httpapi.WriteError(w, http.StatusConflict, "conflict", fmt.Sprintf("task %s is %s, not waiting for input", id, StateWord(rec.Task.Status.State)))
		return
	}
	text := "no"
	if *req.Approved {
		text = "yes"
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text), a2a.NewDataPart(map[string]any{"approved": *req.Approved}))
	msg.TaskID, msg.ContextID = rec.Task.ID, rec.Task.ContextID
	var res a2a.SendMessageResult
	var err error
	for attempt := 0; ; attempt++ {
		res, err = s.handler.SendMessage(withAgent(r.Context(), rec.Agent), &a2a.SendMessageRequest{Message: msg, Config: &a2a.SendMessageConfig{ReturnImmediately: true}})
		// The task is stored input-required a moment before the SDK's
		// execution of the previous turn has wound down; a reply in that
		// moment is refused (an error the SDK does not export), and is
		// tried again shortly.
		if err == nil || !strings.Contains(err.Error(), "execution is already in progress") || attempt >= 40 || r.Context().Err() != nil {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err != nil {
		writeErr(w, s.log, err)
		return
	}
	out := map[string]any{"source": "local"}
	if t, ok := res.(*a2a.Task); ok {
		out["view"] = viewOf(t, rec.Agent, rec.CreatedAt, time.Now().UTC(), true)
	}
	writeJSON(w, http.StatusOK, out)
}

// decodeBody reads a JSON body strictly, naming unknown fields.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return fmt.Errorf("%w: request body: %v", errBadRequest, err)
	}
	return nil
}
