package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/principal"
)

// MCP tasks (SEP-1686, protocol 2025-11-25): a tools/call carrying
// params.task is answered at once with a task handle (CreateTaskResult);
// the client then follows the task with tasks/get, fetches its result
// with tasks/result, lists its tasks with tasks/list and stops one with
// tasks/cancel. agentd's task is an A2A task of its task store (Tasks,
// joined by the composition root over package bridge): same id, same
// state, whichever protocol reads it, from any session, replica or
// process after a restart.
//
// go-sdk v1.8.0 has no tasks. This is built on its public API only
// (docs/upstream.md says what is missing):
//
//   - tasks/get, tasks/result, tasks/list and tasks/cancel are custom
//     methods (mcp.AddReceivingCustomMethod);
//   - the SDK decodes tools/call params into CallToolParamsRaw, which
//     drops params.task, so the HTTP handler reads it from the body it has
//     already read and hands it to the middleware in an internal header
//     (markTask; a client's own header of that name is removed first);
//   - a receiving middleware (taskMiddleware) answers such a call with a
//     CreateTaskResult instead of running the tool, and adds what the
//     SDK's types cannot carry: capabilities.tasks in the initialize
//     result and execution.taskSupport on the tools that run as tasks.

// TaskStatus is an MCP task status.
type TaskStatus string

// The statuses of SEP-1686.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether a task in status s is over.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is what an MCP client sees of a task.
type Task struct {
	ID      string
	Status  TaskStatus
	Message string // statusMessage
	Created time.Time
	Updated time.Time
	// TTL is how long the task is served from Created; 0 means none was
	// set (a task an A2A client started).
	TTL time.Duration
}

// TaskCall is a task-augmented tools/call.
type TaskCall struct {
	// Tool is the tool called; Agent the agentd agent it runs, when
	// the tool is an agent tool (agentd_agent_*), else "".
	Tool, Agent string
	Arguments   json.RawMessage
	// TTL is the ttl granted (the client's, bounded by config).
	TTL time.Duration
}

// Tasks runs agent tool calls as durable tasks. The calling principal
// is in ctx (principal.FromContext); a task of another principal is
// answered as unknown. Errors meant for the client are *jsonrpc.Error
// (an unknown task: CodeInvalidParams, as SEP-1686 says).
type Tasks interface {
	// TaskTool reports whether a call of tool may run as a task, beside
	// the agent tools (which always may).
	TaskTool(tool string) bool
	// Start starts call's task and returns it as soon as it exists.
	Start(ctx context.Context, call TaskCall) (Task, error)
	// Get returns the task.
	Get(ctx context.Context, id string) (Task, error)
	// Result returns the task and, once it is terminal, the result its
	// tool call ended with (nil before).
	Result(ctx context.Context, id string) (Task, *mcp.CallToolResult, error)
	// List returns a page of the principal's tasks, newest first, and
	// the cursor of the next page ("" at the end).
	List(ctx context.Context, cursor string) ([]Task, string, error)
	// Cancel stops the task's run and returns it cancelled.
	Cancel(ctx context.Context, id string) (Task, error)
}

// TaskQuestions is what Tasks may also do: put the question a task waits
// for (input_required: an approval, a question of the agent) to the
// client waiting in tasks/result, as SEP-1686 has it, and give the task
// the answer.
type TaskQuestions interface {
	// Question returns what task id waits for, as an elicitation; nil
	// when it does not wait for input.
	Question(ctx context.Context, id string) (*mcp.ElicitParams, error)
	// Answer gives the task the client's answer. answered is false when
	// the client gave none (declined or dismissed a question that is
	// not an approval): the task still waits.
	Answer(ctx context.Context, id string, ans *mcp.ElicitResult) (answered bool, err error)
}

// taskHeader carries a tools/call's params.task from the HTTP handler to
// the middleware (see markTask).
const taskHeader = "Agentd-Internal-Mcp-Task"

// relatedTaskKey is the _meta key that ties a message to its task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// SetTasks serves task-augmented calls of agent tools on the main
// endpoint through t, from now on. Without it, agentd declares no tasks
// capability and serves every call as usual.
func (s *Server) SetTasks(t Tasks) {
	if t == nil || !s.tasks.CompareAndSwap(nil, &taskServer{s: s, t: t}) {
		return
	}
	ts := s.tasks.Load()
	srv := s.main.srv
	// Registered once: the methods exist from now on.
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/get", ts.get)
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/result", ts.result)
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/list", ts.list)
	_ = mcp.AddReceivingCustomMethod(srv, "tasks/cancel", ts.cancel)
	srv.AddReceivingMiddleware(ts.middleware)
}

// taskServer serves the task methods of the main endpoint.
type taskServer struct {
	s *Server
	t Tasks
}

// markTask puts a tools/call's params.task into taskHeader, for the
// middleware: the only way to it, since the SDK's CallToolParamsRaw has
// no task field. A header of that name from the client is removed
// first, so the header is always agentd's word. Only 2025-11-25-era
// requests are looked at: 2026-07-28 has tasks of another shape (an
// extension), and its calls are served as usual.
func markTask(r *http.Request, body []byte) {
	r.Header.Del(taskHeader)
	if r.Header.Get(headerProtocolVersion) >= statelessVersion || !bytes.Contains(body, []byte(`"task"`)) {
		return
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Task json.RawMessage `json:"task"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" {
		return
	}
	t := bytes.TrimSpace(msg.Params.Task)
	if len(t) == 0 || t[0] != '{' {
		return
	}
	var c bytes.Buffer
	if json.Compact(&c, t) == nil {
		r.Header.Set(taskHeader, c.String())
	}
}

// taskMethod reports whether m is one of the task methods (served once
// SetTasks was called).
func taskMethod(m string) bool {
	switch m {
	case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel":
		return true
	}
	return false
}

// taskParams is a tools/call's params.task (TaskMetadata).
type taskParams struct {
	TTL *float64 `json:"ttl"`
}

// ttl is the ttl granted for a requested one (milliseconds, nil: none
// asked): the config's default, and at most its maximum.
func (ts *taskServer) ttl(asked *float64) time.Duration {
	cfg := ts.s.opts.Config
	d := time.Duration(cfg.TaskTTLSecs) * time.Second
	if asked != nil && *asked > 0 {
		d = time.Duration(*asked * float64(time.Millisecond))
	}
	if max := time.Duration(cfg.TaskMaxTTLSecs) * time.Second; max > 0 && (d <= 0 || d > max) {
		d = max
	}
	return d
}

func (ts *taskServer) pollInterval() time.Duration {
	if ms := ts.s.opts.Config.TaskPollIntervalMillis; ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return time.Second
}

// middleware starts tasks, puts the caller's principal into the context
// of the task methods, and adds to initialize and tools/list results
// what the SDK's types cannot carry.
func (ts *taskServer) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if ir, ok := res.(*mcp.InitializeResult); ok && err == nil {
				return &initializeResult{ir}, nil
			}
			return res, err
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && !statelessRequest(req) {
				return &listToolsResult{lr, ts.taskTool}, nil
			}
			return res, err
		case "tools/call":
			extra := req.GetExtra()
			if extra == nil || extra.Header.Get(taskHeader) == "" {
				break
			}
			if cr, ok := req.(*mcp.CallToolRequest); ok && ts.taskTool(cr.Params.Name) {
				return ts.start(ctx, cr, extra.Header.Get(taskHeader))
			}
			// A tool that does not run as a task: the call is served
			// as usual, its task metadata ignored, as SEP-1686 says.
		case "tasks/get", "tasks/result", "tasks/list", "tasks/cancel": // taskMethod
			ctx = principal.NewContext(ctx, callerPrincipal(req))
		}
		return next(ctx, method, req)
	}
}

// statelessRequest reports whether req is of 2026-07-28 or later, whose
// tasks are an extension of another shape that agentd does not serve:
// its tools/list does not offer SEP-1686 tasks.
func statelessRequest(req mcp.Request) bool {
	extra := req.GetExtra()
	return extra != nil && extra.Header.Get(headerProtocolVersion) >= statelessVersion
}

// taskTool reports whether a call of tool runs as a task when asked.
func (ts *taskServer) taskTool(tool string) bool {
	return strings.HasPrefix(tool, AgentToolPrefix) || ts.t.TaskTool(tool)
}

// start answers a task-augmented tools/call: the task is started and its
// handle returned; the call's result is tasks/result's.
func (ts *taskServer) start(ctx context.Context, req *mcp.CallToolRequest, raw string) (mcp.Result, error) {
	var tp taskParams
	if err := json.Unmarshal([]byte(raw), &tp); err != nil {
		return nil, failf(errInvalidParams, "invalid params.task: %v", err)
	}
	name := req.Params.Name
	p := callerPrincipal(req)
	if p != nil && !ts.s.main.mayUse(p, name) {
		return nil, failf(errInvalidParams, "unknown tool %q", name)
	}
	call := TaskCall{Tool: name, Arguments: req.Params.Arguments, TTL: ts.ttl(tp.TTL)}
	if strings.HasPrefix(name, AgentToolPrefix) {
		agentName, err := ts.agentOf(ctx, name)
		if err != nil {
			return nil, err
		}
		call.Agent = agentName
	}
	t, err := ts.t.Start(principal.NewContext(ctx, p), call)
	if err != nil {
		return nil, err
	}
	return &createTaskResult{Task: ts.wire(t)}, nil
}

// agentOf is the agent an agent tool runs: the one served under that name.
func (ts *taskServer) agentOf(ctx context.Context, tool string) (string, error) {
	ts.s.main.mu.Lock()
	_, served := ts.s.main.served[tool]
	ts.s.main.mu.Unlock()
	if served {
		entries, err := ts.s.opts.Kernel.Agents().List(ctx)
		if err != nil {
			return "", err
		}
		for _, e := range entries {
			if e.Manifest.Expose.MCP && AgentToolName(e.Manifest.Name) == tool {
				return e.Manifest.Name, nil
			}
		}
	}
	return "", failf(errInvalidParams, "unknown tool %q", tool)
}

// taskWire is SEP-1686's Task.
type taskWire struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     string     `json:"createdAt"`
	LastUpdatedAt string     `json:"lastUpdatedAt"`
	// TTL is in milliseconds; null when none was set.
	TTL          *int64 `json:"ttl"`
	PollInterval int64  `json:"pollInterval,omitempty"`
}

func (ts *taskServer) wire(t Task) taskWire {
	w := taskWire{
		TaskID:        t.ID,
		Status:        t.Status,
		StatusMessage: t.Message,
		CreatedAt:     t.Created.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: t.Updated.UTC().Format(time.RFC3339Nano),
	}
	if t.TTL > 0 {
		ms := t.TTL.Milliseconds()
		w.TTL = &ms
	}
	if !t.Status.Terminal() {
		w.PollInterval = ts.pollInterval().Milliseconds()
	}
	return w
}

// expired reports whether t outlived its ttl: it is then no longer
// served to MCP clients (A2A keeps it until max_tasks prunes it).
func expired(t Task, now time.Time) bool {
	return t.TTL > 0 && now.After(t.Created.Add(t.TTL))
}

var errUnknownTask = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task"}

// lookup is Tasks.Get, with expired tasks unknown.
func (ts *taskServer) lookup(ctx context.Context, id string) (Task, error) {
	if id == "" {
		return Task{}, failf(errInvalidParams, "params.taskId is required")
	}
	t, err := ts.t.Get(ctx, id)
	if err != nil {
		return Task{}, err
	}
	if expired(t, time.Now()) {
		return Task{}, errUnknownTask
	}
	return t, nil
}

// taskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type taskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// listTasksParams are tasks/list's.
type listTasksParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// taskResult is the result of tasks/get and tasks/cancel: the task.
type taskResult struct {
	mcp.ResultBase
	taskWire
}

// createTaskResult answers a task-augmented request.
type createTaskResult struct {
	mcp.ResultBase
	Task taskWire `json:"task"`
}

type listTasksResult struct {
	mcp.ResultBase
	Tasks      []taskWire `json:"tasks"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

func (ts *taskServer) get(ctx context.Context, _ *mcp.ServerSession, p *taskIDParams) (*taskResult, error) {
	t, err := ts.lookup(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	return &taskResult{taskWire: ts.wire(t)}, nil
}

// result waits until the task is terminal, as SEP-1686 says tasks/result
// does, and answers what its tools/call would have: the tool's result,
// tied to the task by _meta. The wait polls the task store, whichever
// replica runs the task: quickly at first (most runs are short), then
// every pollInterval. While the task waits for input, the question is
// put to the client on this request's stream (ask).
func (ts *taskServer) result(ctx context.Context, ss *mcp.ServerSession, p *taskIDParams) (*mcp.CallToolResult, error) {
	t, err := ts.lookup(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	delay, ceiling := 20*time.Millisecond, ts.pollInterval()
	// asked is the status time of the question last put: the task may
	// read input_required for a moment after the answer, and a question
	// is put once.
	asking, asked := true, time.Time{}
	for {
		if asking && t.Status == TaskInputRequired && !t.Updated.Equal(asked) {
			asked = t.Updated
			asking = ts.ask(ctx, ss, p.TaskID)
			delay = 20 * time.Millisecond // the answer resumes the run
		}
		var res *mcp.CallToolResult
		t, res, err = ts.t.Result(ctx, p.TaskID)
		if err != nil {
			return nil, err
		}
		if res != nil {
			out := *res
			out.Meta = mcp.Meta{relatedTaskKey: map[string]any{"taskId": p.TaskID}}
			return &out, nil
		}
		tm := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			tm.Stop()
			return nil, ctx.Err()
		case <-tm.C:
		}
		delay = min(delay*2, ceiling)
	}
}

// ask puts the question task id waits for to the client of ss by
// elicitation, tied to the task by _meta, and gives the task the answer.
// It reports whether asking again is any use: not when the client cannot
// be asked (no elicitation capability, a stateless request, a Tasks
// without questions), declined to answer, or the asking failed; the
// task then waits for an answer from elsewhere (an A2A client, the
// dashboard) or a cancel, while tasks/result goes on waiting.
func (ts *taskServer) ask(ctx context.Context, ss *mcp.ServerSession, id string) bool {
	q, ok := ts.t.(TaskQuestions)
	if !ok || ss == nil {
		return false
	}
	if ip := ss.InitializeParams(); ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return false
	}
	params, err := q.Question(ctx, id)
	if err != nil || params == nil {
		return err == nil
	}
	params.Meta = mcp.Meta{relatedTaskKey: map[string]any{"taskId": id}}
	ans, err := ss.Elicit(ctx, params)
	if err != nil {
		ts.s.log.Debug("asking the task's question failed", "task", id, "err", err)
		return false
	}
	answered, err := q.Answer(ctx, id, ans)
	if err != nil {
		ts.s.log.Warn("answering the task failed", "task", id, "err", err)
		return false
	}
	return answered
}

func (ts *taskServer) list(ctx context.Context, _ *mcp.ServerSession, p *listTasksParams) (*listTasksResult, error) {
	var cursor string
	if p != nil {
		cursor = p.Cursor
	}
	tasks, next, err := ts.t.List(ctx, cursor)
	if err != nil {
		return nil, err
	}
	out := &listTasksResult{Tasks: make([]taskWire, 0, len(tasks)), NextCursor: next}
	now := time.Now()
	for _, t := range tasks {
		if !expired(t, now) {
			out.Tasks = append(out.Tasks, ts.wire(t))
		}
	}
	return out, nil
}

func (ts *taskServer) cancel(ctx context.Context, _ *mcp.ServerSession, p *taskIDParams) (*taskResult, error) {
	t, err := ts.lookup(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if t.Status.Terminal() {
		return nil, failf(errInvalidParams, "cannot cancel task %s: it is already %s", t.ID, t.Status)
	}
	t, err = ts.t.Cancel(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	return &taskResult{taskWire: ts.wire(t)}, nil
}

// initializeResult is the SDK's initialize result with the tasks
// capability SEP-1686 defines, which mcp.ServerCapabilities has no
// field for.
type initializeResult struct{ *mcp.InitializeResult }

// tasksCapability: tasks can be listed and cancelled, and tools/call
// may be task-augmented.
var tasksCapability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

func (r *initializeResult) MarshalJSON() ([]byte, error) {
	return withMembers(r.InitializeResult, func(m map[string]json.RawMessage) error {
		caps := map[string]json.RawMessage{}
		if raw, ok := m["capabilities"]; ok {
			if err := json.Unmarshal(raw, &caps); err != nil {
				return err
			}
		}
		caps["tasks"] = tasksCapability
		b, err := json.Marshal(caps)
		m["capabilities"] = b
		return err
	})
}

// listToolsResult is the SDK's tools/list result with
// execution.taskSupport on the tools that run as tasks (mcp.Tool has no
// field for it).
type listToolsResult struct {
	*mcp.ListToolsResult
	taskTool func(string) bool
}

func (r *listToolsResult) MarshalJSON() ([]byte, error) {
	return withMembers(r.ListToolsResult, func(m map[string]json.RawMessage) error {
		var tools []map[string]json.RawMessage
		if len(m["tools"]) == 0 {
			return nil
		}
		if err := json.Unmarshal(m["tools"], &tools); err != nil {
			return err
		}
		for _, t := range tools {
			var name string
			if json.Unmarshal(t["name"], &name) == nil && r.taskTool(name) {
				t["execution"] = json.RawMessage(`{"taskSupport":"optional"}`)
			}
		}
		b, err := json.Marshal(tools)
		m["tools"] = b
		return err
	})
}

// withMembers encodes v as the SDK would, lets edit change its members,
// and encodes the result.
func withMembers(v any, edit func(map[string]json.RawMessage) error) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if err := edit(m); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// serveReplicated answers a task method of a replicated session itself,
// before the SDK, and reports whether it did. A replica serves such a
// session over a transport it connected with Server.Connect (see
// sessionTable), and the SDK checks the methods of a message on that
// transport against its standard methods only (the transport learns its
// server's custom methods only when the SDK's own handler connects it),
// so tasks/* would be refused as unsupported. The task methods need
// nothing of the session: a task is its principal's, who is the
// request's.
func (ts *taskServer) serveReplicated(w http.ResponseWriter, r *http.Request, e *endpoint, body []byte) bool {
	if e != ts.s.main || r.Header.Get(headerSessionID) == "" {
		return false
	}
	if _, ok := e.stateful.(*sessionTable); !ok {
		return false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || !taskMethod(msg.Method) || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return false
	}
	// tasks/result waits as long as the task runs.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	ctx := principal.NewContext(r.Context(), principal.FromContext(r.Context()))
	var ip taskIDParams
	var lp listTasksParams
	params := msg.Params
	if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
		params = []byte(`{}`)
	}
	var res any
	var err error
	if msg.Method == "tasks/list" {
		if err = json.Unmarshal(params, &lp); err == nil {
			res, err = ts.list(ctx, nil, &lp)
		}
	} else if err = json.Unmarshal(params, &ip); err == nil {
		switch msg.Method {
		case "tasks/get":
			res, err = ts.get(ctx, nil, &ip)
		case "tasks/result":
			res, err = ts.result(ctx, nil, &ip)
		case "tasks/cancel":
			res, err = ts.cancel(ctx, nil, &ip)
		}
	} else {
		err = failf(errInvalidParams, "invalid params: %v", err)
	}
	if err == nil {
		var b []byte
		if b, err = json.Marshal(res); err == nil {
			writeJSON(w, http.StatusOK, resultResponse(msg.ID, b))
			return true
		}
	}
	writeJSON(w, http.StatusOK, errorResponse(msg.ID, err))
	return true
}
