package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/jsonrpcwire"
	"github.com/agentd/agentd/internal/telemetry"
	"github.com/agentd/agentd/internal/tool"
)

// MCP tasks, client side (SEP-1686, protocol 2025-11-25). With an
// upstream that declares capabilities.tasks.requests.tools.call, a call of
// a tool whose execution.taskSupport is "required" (and, per the server's
// tasks setting, one that is "optional") is task-augmented: the server
// answers at once with a task handle, and agentd follows the task with
// tasks/result (which blocks until the task ends) while polling tasks/get
// at the server's pollInterval for its status. The task id, not the
// connection, is what the call waits on: when the link breaks under the
// call, agentd reconnects as always and goes on following the same task
// on the new session. A call given up (its context ended, a timeout)
// sends tasks/cancel.
//
// go-sdk v1.8.0 has no tasks (docs/upstream.md proposes them). This is
// built on its public API and on agentd's own wire readers:
//
//   - the task-augmented tools/call, tasks/get, tasks/result and
//     tasks/cancel are sent with mcp.CallCustomMethod (tools/call with
//     params of agentd's type, which carries params.task);
//   - the SDK decodes the answers into its own types, which have no place
//     for what SEP-1686 adds: capabilities.tasks in the initialize result,
//     execution.taskSupport in tools/list, and the CreateTaskResult's task
//     (decoded as an empty CallToolResult). agentd's frame readers, which
//     see every upstream message before the SDK does, hand those to the
//     session's taskWatch; the request that creates a task is tied to its
//     answer by JSON-RPC id, which the writers (stdioConn.Write and the
//     HTTP roundTripper) note for it.

// Task statuses of SEP-1686.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// Values of [[mcp_servers]] tasks.
const (
	TasksAuto   = "auto"   // required tools always; optional ones once a call ran past task_after_secs
	TasksAlways = "always" // every tool that supports tasks
	TasksNever  = "never"  // plain calls only
)

// defaultTaskAfter is task_after_secs when unset.
const defaultTaskAfter = 10 * time.Second

// Bounds of the interval between two tasks/get of one task: the server's
// pollInterval, but no faster than minTaskPoll, and at least twice per
// timeout_secs (a live task must not be taken for a silent server).
const (
	minTaskPoll     = 100 * time.Millisecond
	defaultTaskPoll = time.Second
)

// taskCancelWait bounds the tasks/cancel sent for a call given up.
const taskCancelWait = 5 * time.Second

// taskCreateGrace bounds how long a task-creating call waits for its
// answer after the call was given up (see taskCall); within stuckGrace,
// so a server that stopped reading is still failed by the stuck-call
// watch.
const taskCreateGrace = time.Second

// maxTaskRetries bounds the consecutive failed follow-ups of one task on
// a link that stays up (the failure is then the server's, not the link's).
const maxTaskRetries = 3

// UpstreamTask is an upstream's task (SEP-1686's Task), as tasks/get and
// a CreateTaskResult carry it.
type UpstreamTask struct {
	ID            string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"`
	LastUpdatedAt string `json:"lastUpdatedAt,omitempty"`
	// TTL and PollInterval are in milliseconds.
	TTL          *int64 `json:"ttl,omitempty"`
	PollInterval *int64 `json:"pollInterval,omitempty"`
}

// Terminal reports whether the task is over.
func (t *UpstreamTask) Terminal() bool {
	return t.Status == TaskCompleted || t.Status == TaskFailed || t.Status == TaskCancelled
}

// taskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type taskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// taskResult is the result of tasks/get and tasks/cancel.
type taskResult struct {
	mcp.ResultBase
	UpstreamTask
}

// taskCallParams are a task-augmented tools/call's params: CallToolParams
// has no field for params.task.
type taskCallParams struct {
	mcp.ParamsBase
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Task      taskMetadata    `json:"task"`
}

// taskMetadata is SEP-1686's TaskMetadata; ttl in milliseconds.
type taskMetadata struct {
	TTL int64 `json:"ttl,omitempty"`
}

// registerTaskMethods lets c send the task methods (CallCustomMethod
// sends only registered ones; tools/call is a standard method already).
func registerTaskMethods(c *mcp.Client) {
	_ = mcp.AddSendingCustomMethod[*taskIDParams, *taskResult](c, "tasks/get")
	_ = mcp.AddSendingCustomMethod[*taskIDParams, *mcp.CallToolResult](c, "tasks/result")
	_ = mcp.AddSendingCustomMethod[*taskIDParams, *taskResult](c, "tasks/cancel")
}

// taskWatch is what one session learns of tasks from the wire, where the
// SDK's types drop it: whether the server takes task-augmented tool calls,
// which tools support them, and the task handles its answers to such
// calls carry. Its methods are called by the frame readers and writers of
// the session's transport, before the SDK sees a message.
type taskWatch struct {
	inited   atomic.Bool // the initialize result was seen
	declared atomic.Bool // it declared capabilities.tasks.requests.tools.call
	creating atomic.Int32

	mu      sync.Mutex
	support map[string]string        // tool → execution.taskSupport, from tools/list
	ids     map[string]string        // JSON-RPC id of a task-creating call → its progress token
	created map[string]*UpstreamTask // progress token → the task its call created
}

// declares reports whether the server takes task-augmented tools/call.
func (w *taskWatch) declares() bool { return w.declared.Load() }

// supportOf is tool's execution.taskSupport ("" for none).
func (w *taskWatch) supportOf(tool string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.support[tool]
}

// wireMessage is what observe reads of an upstream message.
type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result *struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    *struct {
			Tasks *struct {
				Requests *struct {
					Tools *struct {
						Call json.RawMessage `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
		} `json:"capabilities"`
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
		Task *UpstreamTask `json:"task"`
	} `json:"result"`
}

// observe reads what the SDK drops from one message read from the
// upstream (an SSE event when sse). Most messages are passed over after
// an atomic load or a substring test or two: only the initialize result,
// and on a server that declares tasks its tool listings and task handles,
// are decoded.
func (w *taskWatch) observe(frame []byte, sse bool) {
	inited := w.inited.Load()
	switch {
	case inited && !w.declared.Load():
		return
	case !inited:
		if !bytes.Contains(frame, []byte(`"protocolVersion"`)) {
			return
		}
	case !bytes.Contains(frame, []byte(`"task`)) && !bytes.Contains(frame, []byte(`"tools"`)):
		return
	}
	data := frame
	if sse {
		ev, ok := jsonrpcwire.ParseEvent(frame)
		if !ok {
			return
		}
		data = ev.Data
	}
	var m wireMessage
	if json.Unmarshal(data, &m) != nil || m.Method != "" || m.Result == nil {
		return
	}
	r := m.Result
	if !inited {
		if r.ProtocolVersion == "" || r.Capabilities == nil {
			return
		}
		// 2026-07-28 has tasks of another shape (an extension), which
		// agentd does not use.
		c := r.Capabilities
		w.declared.Store(r.ProtocolVersion < "2026-07-28" && c.Tasks != nil && c.Tasks.Requests != nil &&
			c.Tasks.Requests.Tools != nil && c.Tasks.Requests.Tools.Call != nil)
		w.inited.Store(true)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range r.Tools {
		if w.support == nil {
			w.support = map[string]string{}
		}
		if t.Execution != nil && t.Execution.TaskSupport != "" && t.Execution.TaskSupport != "forbidden" {
			w.support[t.Name] = t.Execution.TaskSupport
		} else {
			delete(w.support, t.Name)
		}
	}
	if r.Task != nil && r.Task.ID != "" && len(m.ID) > 0 {
		if token, ok := w.ids[idKey(m.ID)]; ok {
			if w.created == nil {
				w.created = map[string]*UpstreamTask{}
			}
			w.created[token] = r.Task
		}
	}
}

// sentCall notes a request written to the upstream (stdioConn.Write): a
// task-creating tools/call's id is tied to its progress token. Only
// requests written while a task is being created are looked at.
func (w *taskWatch) sentCall(id jsonrpc.ID, method string, params []byte) {
	if w.creating.Load() == 0 || method != "tools/call" {
		return
	}
	if b, err := json.Marshal(id.Raw()); err == nil {
		w.sent(b, method, params)
	}
}

// sent is sentCall with the id as JSON.
func (w *taskWatch) sent(id json.RawMessage, method string, params []byte) {
	if w.creating.Load() == 0 || method != "tools/call" || !bytes.Contains(params, []byte(`"task"`)) {
		return
	}
	var p struct {
		Meta struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
		Task json.RawMessage `json:"task"`
	}
	if json.Unmarshal(params, &p) != nil || p.Task == nil || p.Meta.ProgressToken == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ids == nil {
		w.ids = map[string]string{}
	}
	w.ids[idKey(id)] = fmt.Sprint(p.Meta.ProgressToken)
}

// sentRequest is sent for a whole request message (an HTTP POST body).
func (w *taskWatch) sentRequest(body []byte) {
	if w.creating.Load() == 0 || !bytes.Contains(body, []byte(`"task"`)) {
		return
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &m) == nil && len(m.ID) > 0 {
		w.sent(m.ID, m.Method, m.Params)
	}
}

// create runs f, a task-creating call with progress token token, and
// returns the task its answer carried (nil when the server answered with
// a plain result, ignoring the augmentation as SEP-1686 lets it).
func (w *taskWatch) create(token string, f func() (*mcp.CallToolResult, error)) (*UpstreamTask, *mcp.CallToolResult, error) {
	w.creating.Add(1)
	res, err := f()
	w.creating.Add(-1)
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, t := range w.ids {
		if t == token {
			delete(w.ids, id)
		}
	}
	t := w.created[token]
	delete(w.created, token)
	return t, res, err
}

// idKey is a JSON-RPC id as a map key: its compact JSON.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// taskMode is the server's tasks setting.
func (s *server) taskMode() string {
	if s.cfg.Tasks == "" {
		return TasksAuto
	}
	return s.cfg.Tasks
}

func (s *server) taskAfter() time.Duration {
	if s.cfg.TaskAfterSecs > 0 {
		return time.Duration(s.cfg.TaskAfterSecs) * time.Second
	}
	return defaultTaskAfter
}

// useTask decides whether a call of upstream on sess is task-augmented:
// never unless the server declared tasks for tools/call and the tool
// supports them; then a tool that requires it always (unless tasks is
// "never", when the server refuses the call and says why), and an
// optional one per the tasks setting: "always", or in "auto" once a call
// of that tool has been seen to run past task_after_secs.
func (s *server) useTask(sess *session, upstream string) bool {
	if isStateless(sess) || !sess.tasks.declares() {
		return false
	}
	mode := s.taskMode()
	switch sess.tasks.supportOf(upstream) {
	case "required":
		return mode != TasksNever
	case "optional":
		switch mode {
		case TasksAlways:
			return true
		case TasksAuto:
			_, long := s.longTools.Load(upstream)
			return long
		}
	}
	return false
}

// noteDuration remembers a tool whose plain call ran past task_after_secs
// (in "auto", its next calls are tasks when the server supports them).
func (s *server) noteDuration(upstream string, d time.Duration) {
	if d >= s.taskAfter() {
		s.longTools.Store(upstream, true)
	}
}

// taskCall makes one task-augmented call of upstream, and follows its
// task to the end across reconnects. It returns the result, and the
// session it last used (whose state explains an error).
func (s *server) taskCall(ctx context.Context, sess *session, upstream string, args json.RawMessage, caller *Caller, progress func(string, float64, float64), ex *Exchange) (*mcp.CallToolResult, *session, error) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(s.idle, func() { cancel(errIdleTimeout) })
	defer idle.Stop()
	hard := time.AfterFunc(s.hard, func() { cancel(errHardCap) })
	defer hard.Stop()

	token := s.m.nextToken()
	defer s.calls.Delete(token)
	f := &taskFollow{s: s, token: token, caller: caller, progress: progress, idle: idle, ex: ex}

	// As for a plain call (upstreamCall): a call that cannot return once
	// its context ended (a stdio server that stopped reading blocks the
	// write) fails the session it is stuck on; tasks/cancel may take its
	// own time first.
	var cur atomic.Pointer[session]
	cur.Store(sess)
	returned := make(chan struct{})
	defer close(returned)
	stopWatch := context.AfterFunc(cctx, func() {
		timer := time.NewTimer(stuckGrace + taskCancelWait)
		defer timer.Stop()
		select {
		case <-returned:
		case <-timer.C:
			cur.Load().fail(errors.New("a call could not be abandoned: the server stopped reading"))
		}
	})
	defer stopWatch()

	params := &taskCallParams{Name: upstream, Arguments: args, Task: taskMetadata{TTL: (s.hard + time.Minute).Milliseconds()}}
	params.Meta = mcp.Meta{"progressToken": token}
	telemetry.InjectMeta(ctx, params.Meta)
	stop := f.attach(cctx, sess)
	// The creating call outlives a cancel by up to taskCreateGrace: the
	// server may have made the task already, and only its id, in the
	// answer, lets tasks/cancel stop it. Cut off at once, it would run on
	// upstream, orphaned.
	createCtx, endCreate := context.WithCancel(context.WithoutCancel(cctx))
	var grace atomic.Pointer[time.Timer]
	unwatch := context.AfterFunc(cctx, func() { grace.Store(time.AfterFunc(taskCreateGrace, endCreate)) })
	task, res, err := sess.tasks.create(token, func() (*mcp.CallToolResult, error) {
		return mcp.CallCustomMethod[*taskCallParams, *mcp.CallToolResult](createCtx, sess.cs, "tools/call", params)
	})
	unwatch()
	if tm := grace.Load(); tm != nil {
		tm.Stop()
	}
	endCreate()
	stop()
	if cctx.Err() != nil {
		if task != nil {
			f.report(task)
			f.cancelUpstream(ctx)
		}
		return nil, sess, f.timeout(cctx, context.Cause(cctx))
	}
	if err != nil || task == nil {
		// No task: the call failed, or the server answered it at once.
		return res, sess, f.timeout(cctx, err)
	}
	f.report(task)
	s.log.Debug("mcp task created", "tool", upstream, "task", task.ID, "status", task.Status)

	retries := 0
	for {
		res, err := f.follow(cctx, sess)
		if err == nil {
			f.finish(cctx, sess, res)
			return res, sess, nil
		}
		if cctx.Err() != nil {
			f.cancelUpstream(ctx)
			return nil, sess, f.timeout(cctx, err)
		}
		if !s.linkFailed(sess, err) {
			// The server's own answer (an unknown task, one cancelled
			// upstream): its last status says which.
			return nil, sess, f.ended(cctx, sess, err)
		}
		next, werr := s.awaitReconnect(cctx, sess)
		if werr != nil {
			if cctx.Err() != nil {
				f.cancelUpstream(ctx)
				return nil, sess, f.timeout(cctx, err)
			}
			return nil, sess, fmt.Errorf("following task %s: %w", task.ID, werr)
		}
		if next == sess {
			if retries++; retries >= maxTaskRetries {
				return nil, sess, err
			}
		} else {
			retries = 0
			s.log.Info("mcp task followed on a new session", "tool", upstream, "task", task.ID)
		}
		sess = next
		cur.Store(sess)
	}
}

// linkFailed reports whether err, a request's failure on sess, is the
// link's rather than an answer of the server's.
func (s *server) linkFailed(sess *session, err error) bool {
	var rpcErr *jsonrpc.Error
	return !errors.As(err, &rpcErr) || fromTransport(err) || sess.rejected.Load() || sess.isBroken()
}

// awaitReconnect waits for the session to use after a request on old
// failed with what looks like the link failing: a new one once old is
// found broken (the supervisor reconnects), or old itself if it turns out
// alive. It waits as long as ctx lets it, through failed reconnects.
func (s *server) awaitReconnect(ctx context.Context, old *session) (*session, error) {
	if !old.isBroken() {
		s.requestProbe()
	}
	recheck := time.NewTimer(time.Second)
	defer recheck.Stop()
	for {
		s.mu.Lock()
		sess, stopped, ch := s.sess, s.stopped, s.changed
		s.mu.Unlock()
		switch {
		case stopped:
			return nil, fmt.Errorf("mcp server %q was removed: %w", s.name, tool.ErrDisconnected)
		case sess != nil && sess != old && !sess.isBroken():
			return sess, nil
		}
		select {
		case <-ch:
		case <-old.broken:
		case <-recheck.C:
			if !old.isBroken() {
				return old, nil // the probe found it alive
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// taskFollow is one task-augmented call being followed.
type taskFollow struct {
	s        *server
	token    string
	caller   *Caller
	progress func(string, float64, float64)
	idle     *time.Timer
	ex       *Exchange

	mu       sync.Mutex
	task     *UpstreamTask // the latest status known
	messages int           // status messages passed on as progress
}

// attach registers the call on sess, for the progress notifications of
// its token and the requests the server sends its caller meanwhile (on
// the tasks/result stream, SEP-1686); the returned function ends that.
func (f *taskFollow) attach(ctx context.Context, sess *session) (stop func()) {
	in := &inflight{progress: f.progress, idle: f.idle, d: f.s.idle, cs: sess.cs, caller: f.caller}
	end := in.startRelays(ctx)
	f.s.calls.Store(f.token, in)
	return func() {
		f.s.calls.CompareAndDelete(f.token, in)
		end()
	}
}

// follow awaits the task's result on sess: tasks/result, which blocks
// until the task ends, while tasks/get polls its status beside it.
func (f *taskFollow) follow(ctx context.Context, sess *session) (*mcp.CallToolResult, error) {
	stop := f.attach(ctx, sess)
	defer stop()
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { f.poll(pctx, sess) })
	defer wg.Wait()
	defer cancel()
	res, err := mcp.CallCustomMethod[*taskIDParams, *mcp.CallToolResult](ctx, sess.cs, "tasks/result", &taskIDParams{TaskID: f.id()})
	if err == nil {
		f.idle.Reset(f.s.idle)
	}
	return res, err
}

func (f *taskFollow) id() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.task.ID
}

// interval is the wait before the next tasks/get.
func (f *taskFollow) interval() time.Duration {
	f.mu.Lock()
	d := defaultTaskPoll
	if p := f.task.PollInterval; p != nil && *p > 0 {
		d = time.Duration(*p) * time.Millisecond
	}
	f.mu.Unlock()
	return min(max(d, minTaskPoll), f.s.idle/2)
}

// poll reads the task's status every pollInterval until ctx ends or the
// task does. Each answer shows the server alive: the idle timeout starts
// again (unless the caller is being asked something).
func (f *taskFollow) poll(ctx context.Context, sess *session) {
	t := time.NewTimer(f.interval())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		got, err := f.get(ctx, sess)
		if err != nil {
			if ctx.Err() == nil {
				f.s.log.Debug("mcp tasks/get failed", "task", f.id(), "error", f.s.redact(err.Error()))
			}
			return // tasks/result fails too if the link is gone
		}
		if in, ok := f.s.calls.Load(f.token); ok {
			in.(*inflight).touch()
		}
		f.report(got)
		if got.Terminal() {
			return
		}
		t.Reset(f.interval())
	}
}

func (f *taskFollow) get(ctx context.Context, sess *session) (*UpstreamTask, error) {
	gctx, cancel := context.WithTimeout(ctx, f.s.idle)
	defer cancel()
	r, err := mcp.CallCustomMethod[*taskIDParams, *taskResult](gctx, sess.cs, "tasks/get", &taskIDParams{TaskID: f.id()})
	if err != nil {
		return nil, err
	}
	t := r.UpstreamTask
	return &t, nil
}

// report records a status and, when it changed, tells the exchange and
// the call's progress (the status message).
func (f *taskFollow) report(t *UpstreamTask) {
	f.mu.Lock()
	prev := f.task
	if t.ID == "" && prev != nil {
		t.ID = prev.ID
	}
	f.task = t
	changed := prev == nil || prev.Status != t.Status || prev.StatusMessage != t.StatusMessage
	asProgress := changed && (f.ex == nil || f.ex.TaskStatus == nil) && f.progress != nil && t.StatusMessage != "" && !t.Terminal()
	if asProgress {
		f.messages++
	}
	n := f.messages
	f.mu.Unlock()
	if !changed {
		return
	}
	f.record(t)
	switch {
	case f.ex != nil && f.ex.TaskStatus != nil:
		f.ex.TaskStatus(*t)
	case asProgress:
		// Progress must increase: the count of status messages so far.
		f.progress(t.StatusMessage, float64(n), 0)
	}
}

// record puts the task's latest status into the exchange's record.
func (f *taskFollow) record(t *UpstreamTask) {
	if f.ex == nil {
		return
	}
	c := *t
	f.ex.Record.Task = &c
}

// finish records the task's terminal status once its result came: the
// last one polled, or asked once more (the poll may not have seen the
// end), or else what the result says.
func (f *taskFollow) finish(ctx context.Context, sess *session, res *mcp.CallToolResult) {
	f.mu.Lock()
	t := *f.task
	f.mu.Unlock()
	if !t.Terminal() {
		if got, err := f.get(ctx, sess); err == nil && got.Terminal() {
			f.report(got)
			return
		}
		t.Status = TaskCompleted
		if res != nil && res.IsError {
			t.Status = TaskFailed
		}
		f.report(&t)
	}
}

// ended records the status of a task whose result the server refused
// (cancelled upstream, say): asked once more, since the poll may not
// have seen it yet.
// The server's error says the task ended, and how, when it ended
// cancelled or failed.
func (f *taskFollow) ended(ctx context.Context, sess *session, err error) error {
	if got, gerr := f.get(ctx, sess); gerr == nil {
		f.report(got)
	}
	f.mu.Lock()
	t := *f.task
	f.mu.Unlock()
	var rpcErr *jsonrpc.Error
	if !t.Terminal() || t.Status == TaskCompleted || !errors.As(err, &rpcErr) {
		return err
	}
	msg := "task " + t.ID + " " + t.Status
	if t.StatusMessage != "" {
		msg += " (" + t.StatusMessage + ")"
	}
	return &jsonrpc.Error{Code: rpcErr.Code, Message: msg + ": " + rpcErr.Message, Data: rpcErr.Data}
}

// cancelUpstream sends tasks/cancel for a call given up, on the live
// session, under a context of its own (ctx has ended).
func (f *taskFollow) cancelUpstream(ctx context.Context) {
	f.mu.Lock()
	t := *f.task
	f.mu.Unlock()
	if t.Terminal() {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelWait)
	defer cancel()
	f.s.mu.Lock()
	sess := f.s.sess
	f.s.mu.Unlock()
	if sess == nil || sess.isBroken() {
		f.s.log.Warn("mcp task left running: no live session to cancel it on", "task", t.ID)
		return
	}
	r, err := mcp.CallCustomMethod[*taskIDParams, *taskResult](cctx, sess.cs, "tasks/cancel", &taskIDParams{TaskID: t.ID})
	if err != nil {
		f.s.log.Warn("mcp tasks/cancel failed", "task", t.ID, "error", f.s.redact(err.Error()))
		return
	}
	got := r.UpstreamTask
	if got.Status == "" {
		got.Status = TaskCancelled
	}
	f.report(&got)
}

// timeout wraps err as a timeoutError when the call's own timers ended it.
func (f *taskFollow) timeout(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause == errIdleTimeout || cause == errHardCap {
		return &timeoutError{cause: cause, err: err}
	}
	return err
}
