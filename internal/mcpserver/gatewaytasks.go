package mcpserver

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/tool"
)

// MCP tasks (SEP-1686) on the gateways (/mcp/gateway/{server}). A gateway
// declares the tasks capability and marks every tool
// execution.taskSupport "optional", because every call can run as a
// task, one of two ways:
//
//   - Passed through: the upstream declares
//     capabilities.tasks.requests.tools.call and the tool a taskSupport
//     other than "forbidden". The call, with its params.task, goes to the
//     upstream on its task link (mcpclient's: over HTTP an upstream session
//     of its own, since go-sdk's client cannot make task requests; over
//     stdio agentd's one connection), after the runner's
//     policy and audit like any gateway call. The client gets the
//     upstream's task under a handle: the upstream's task id, the
//     upstream session it lives in, the gateway and the caller's
//     principal, sealed (AES-GCM) under the replicas' shared key. So any
//     replica routes tasks/get, tasks/result and tasks/cancel of a handle
//     to the right upstream session without a routing table; two
//     upstreams' ids cannot collide; and a handle is no use to another
//     principal or on another gateway (it answers unknown task, like an id
//     that never existed), although all principals' upstream tasks share
//     agentd's one upstream session.
//   - Run by agentd: any other upstream (no tasks, or an SSE or OAuth
//     link). The gateway runs the call itself, in the background, through
//     the same pipeline as a plain call, and answers the task methods from
//     its own table: the call survives the client's disconnect. The table
//     is this process's memory, since an upstream call cannot outlive the
//     process that holds its connection anyway; another replica answers
//     unknown task for it.
//
// The task methods are answered before the SDK (serveGatewayTask), as the
// main endpoint's replicated ones are: the SDK's transport knows no
// custom methods on a replicated session, and a task needs nothing of a
// session but its principal. tasks/list lists the caller's tasks started
// through this process's gateway. Calls of 2026-07-28, whose tasks are an
// extension of another shape (SEP-2663), are served as before.

// upstreamTasks is implemented by an Upstreams that has task links to
// upstream servers (mcpclient.Manager).
type upstreamTasks interface {
	UpstreamTaskSupport(ctx context.Context, server string) (mcpclient.TaskSupport, error)
	UpstreamTaskRequest(ctx context.Context, server, session, method string, params any) (json.RawMessage, error)
}

// maxGatewayTasks bounds the tasks agentd runs for gateways in one
// process; ended ones are dropped first.
const maxGatewayTasks = 1000

// gatewayTasks serves the gateways' tasks.
type gatewayTasks struct {
	s  *Server
	ts *taskServer // ttl and wire helpers only (its Tasks is nil)
	// handles seal and open task handles: the first seals, every one
	// opens, so the replicas' keys rotate as for session ids.
	handles []cipher.AEAD

	// base is the context of the runs; stop cancels it (Server.Close).
	base context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu     sync.Mutex
	local  map[string]*localTask
	passed map[string][]passedTask // principal → handles it created here
}

// passedTask is a handle this process gave out, for tasks/list.
type passedTask struct {
	id, gateway string
	created     time.Time
	ttl         time.Duration
}

// handleKeyInfo separates the key of task handles from the session ids'.
const handleKeyInfo = "agentd mcp gateway task handles v1"

// handlePrefix starts every handle agentd gives for an upstream's task.
const handlePrefix = "gwt1."

func newGatewayTasks(s *Server) *gatewayTasks {
	var secrets [][]byte
	if r := s.opts.Replicas; r != nil {
		secrets = r.Keys
	}
	if len(secrets) == 0 {
		// One process: a key of its own, and handles die with it, as
		// the tasks they name on its upstream sessions may.
		secret := make([]byte, 32)
		_, _ = rand.Read(secret)
		secrets = [][]byte{secret}
	}
	aeads := make([]cipher.AEAD, 0, len(secrets))
	for _, secret := range secrets {
		key, err := hkdf.Key(sha256.New, secret, nil, handleKeyInfo, 32)
		if err != nil {
			panic("mcpserver: derive the task handle key: " + err.Error())
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			panic("mcpserver: " + err.Error())
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			panic("mcpserver: " + err.Error())
		}
		aeads = append(aeads, aead)
	}
	base, stop := context.WithCancel(context.Background())
	return &gatewayTasks{
		s: s, ts: &taskServer{s: s}, handles: aeads, base: base, stop: stop,
		local: map[string]*localTask{}, passed: map[string][]passedTask{},
	}
}

// close stops the runs and waits for them.
func (g *gatewayTasks) close() {
	g.stop()
	g.wg.Wait()
}

// handleClaims is what a handle holds.
type handleClaims struct {
	Gateway   string `json:"g"`
	Session   string `json:"s"`
	Task      string `json:"t"`
	Principal string `json:"p"`
}

func (g *gatewayTasks) seal(c handleClaims) (string, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	aead := g.handles[0]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(plain)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	out := aead.Seal(nonce, nonce, plain, []byte(handleKeyInfo))
	return handlePrefix + base64.RawURLEncoding.EncodeToString(out), nil
}

// open returns the claims of a handle of gateway gw and principal p; any
// other id, or a handle of another gateway or principal, is unknown.
func (g *gatewayTasks) open(gw, p, id string) (handleClaims, error) {
	rest, ok := strings.CutPrefix(id, handlePrefix)
	if !ok {
		return handleClaims{}, errUnknownTask
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return handleClaims{}, errUnknownTask
	}
	var plain []byte
	for _, aead := range g.handles {
		n := aead.NonceSize()
		if len(raw) < n {
			break
		}
		if plain, err = aead.Open(nil, raw[:n], raw[n:], []byte(handleKeyInfo)); err == nil {
			break
		}
	}
	if plain == nil {
		return handleClaims{}, errUnknownTask
	}
	var c handleClaims
	if json.Unmarshal(plain, &c) != nil || c.Gateway != gw || c.Principal != p {
		return handleClaims{}, errUnknownTask
	}
	return c, nil
}

// principalName is who owns a task: the principal's name, "" for a local
// client.
func principalName(p *principal.Principal) string {
	if p == nil || p == principal.Local {
		return ""
	}
	return p.Name
}

// middleware declares tasks in a gateway's initialize and tools/list
// results and starts the task of a task-augmented tools/call.
func (g *gatewayTasks) middleware(gw string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
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
					return &listToolsResult{lr, func(string) bool { return true }}, nil
				}
				return res, err
			case "tools/call":
				extra := req.GetExtra()
				cr, ok := req.(*mcp.CallToolRequest)
				if !ok || extra == nil || extra.Header.Get(taskHeader) == "" || cr.Params == nil || statelessRequest(req) {
					break
				}
				return g.start(ctx, gw, cr, extra.Header.Get(taskHeader))
			}
			return next(ctx, method, req)
		}
	}
}

// registryName is the registry name of the tool the gateway gw serves as
// name.
func (g *gatewayTasks) registryName(gw, name string) (string, bool) {
	for _, t := range g.s.opts.Tools.List() {
		if up, ok := g.s.gatewayTool(t, t.Spec(), gw); ok && up == name {
			return t.Spec().Name, true
		}
	}
	return "", false
}

// start answers a task-augmented tools/call of gateway gw.
func (g *gatewayTasks) start(ctx context.Context, gw string, req *mcp.CallToolRequest, rawTask string) (mcp.Result, error) {
	var tp taskParams
	if err := json.Unmarshal([]byte(rawTask), &tp); err != nil {
		return nil, failf(errInvalidParams, "invalid params.task: %v", err)
	}
	name := req.Params.Name
	regName, ok := g.registryName(gw, name)
	if !ok {
		return nil, failf(errInvalidParams, "unknown tool %q", name)
	}
	// A tool the caller may not use is unknown to it, as on the main
	// endpoint: an error, since a client that asked for a task expects a
	// task or an error, not a tool result.
	who := callerPrincipal(req)
	if who != nil && !g.s.gateways[gw].mayUse(who, name) {
		return nil, failf(errInvalidParams, "unknown tool %q", name)
	}
	ttl := g.ts.ttl(tp.TTL)
	if up, ok := g.s.opts.Upstreams.(upstreamTasks); ok {
		// Twice at most: a task session the upstream lost (it
		// restarted) is replaced once.
		for range 2 {
			sup, err := up.UpstreamTaskSupport(ctx, gw)
			if err != nil {
				if !errors.Is(err, mcpclient.ErrNoTaskLink) {
					g.s.log.Warn("mcp gateway: the upstream's task support is unknown; agentd runs the task itself", "server", gw, "err", err)
				}
				break
			}
			if !sup.ToolsCall || sup.Tools[name] == "" || sup.Tools[name] == "forbidden" {
				break
			}
			res, err := g.pass(ctx, up, gw, regName, req, sup.Session, json.RawMessage(rawTask), who)
			if !errors.Is(err, mcpclient.ErrTaskSessionLost) {
				return res, err
			}
		}
	}
	return g.startLocal(gw, regName, req, ttl, who)
}

// taskStarter stands in for an upstream tool in the runner pipeline for
// one task-augmented call: policy, timeout and audit apply to the call
// that creates the task.
type taskStarter struct {
	tool.Tool
	create func(ctx context.Context) (json.RawMessage, error)
	raw    json.RawMessage
	err    error
}

func (t *taskStarter) Call(ctx context.Context, _ *tool.Call) (tool.Result, error) {
	t.raw, t.err = t.create(ctx)
	if t.err != nil {
		return tool.Result{}, t.err
	}
	return tool.Result{Content: "the upstream server created a task"}, nil
}

// pass sends a task-augmented call to the upstream and answers its task
// under a handle.
func (g *gatewayTasks) pass(ctx context.Context, up upstreamTasks, gw, regName string, req *mcp.CallToolRequest, session string, task json.RawMessage, who *principal.Principal) (mcp.Result, error) {
	t, ok := g.s.opts.Tools.Lookup(regName)
	if !ok {
		return toolError("the upstream server "+gw+" is not connected", nil), nil
	}
	args := req.Params.Arguments
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage(`{}`)
	}
	starter := &taskStarter{Tool: t, create: func(ctx context.Context) (json.RawMessage, error) {
		return up.UpstreamTaskRequest(ctx, gw, session, "tools/call", map[string]any{
			"name": req.Params.Name, "arguments": args, "task": task,
		})
	}}
	scope := g.s.opts.Kernel.Runner().Scope(tool.ScopeParams{
		Principal: who,
		Agent:     "gateway:" + gw, SessionID: sessionID(req.Session), Workspace: g.s.opts.Workspace,
		Rules: g.s.clientRules(), Extra: []tool.Tool{starter}, CancelledBy: mcpCanceller,
	})
	out := scope.Do(ctx, tool.Request{Call: llm.ToolCall{Name: regName, Arguments: req.Params.Arguments}})
	var rpcErr *jsonrpc.Error
	switch {
	case errors.Is(starter.err, mcpclient.ErrTaskSessionLost):
		return nil, starter.err
	case errors.As(starter.err, &rpcErr):
		return nil, rpcErr
	case starter.err != nil:
		return nil, wireError(fmt.Errorf("the upstream server %q: %w", gw, starter.err))
	case starter.raw == nil:
		// The pipeline refused the call (policy, approval): what it says,
		// as an error, since the client asked for a task.
		return nil, failf(errInvalidRequest, "%s", out.Result.Content)
	}
	var created struct {
		Task map[string]json.RawMessage `json:"task"`
	}
	if err := json.Unmarshal(starter.raw, &created); err != nil || created.Task == nil {
		// The upstream ran the call without a task (SEP-1686 lets a
		// server ignore params.task): its result is the answer.
		var res mcp.CallToolResult
		if err := json.Unmarshal(starter.raw, &res); err != nil {
			return nil, fmt.Errorf("decode the upstream's answer: %w", err)
		}
		return &res, nil
	}
	var upstreamID string
	_ = json.Unmarshal(created.Task["taskId"], &upstreamID)
	if upstreamID == "" {
		return nil, errors.New("the upstream server created a task without a taskId")
	}
	owner := principalName(who)
	id, err := g.seal(handleClaims{Gateway: gw, Session: session, Task: upstreamID, Principal: owner})
	if err != nil {
		return nil, err
	}
	g.remember(owner, passedTask{id: id, gateway: gw, created: time.Now(), ttl: msDuration(created.Task["ttl"])})
	return &rawResult{raw: withTaskID(created.Task, id, "task")}, nil
}

// msDuration decodes a ttl in milliseconds.
func msDuration(raw json.RawMessage) time.Duration {
	var ms float64
	if json.Unmarshal(raw, &ms) != nil {
		return 0
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// remember adds a handle to its principal's list, dropping the expired.
func (g *gatewayTasks) remember(owner string, t passedTask) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	list := slices.DeleteFunc(g.passed[owner], func(p passedTask) bool { return p.ttl > 0 && now.After(p.created.Add(p.ttl)) })
	if len(list) >= maxGatewayTasks {
		list = list[1:]
	}
	g.passed[owner] = append(list, t)
}

// withTaskID is the task object m with its taskId replaced by id, wrapped
// in a member named wrap ("" for none).
func withTaskID(m map[string]json.RawMessage, id, wrap string) json.RawMessage {
	out := make(map[string]json.RawMessage, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	out["taskId"], _ = json.Marshal(id)
	b, _ := json.Marshal(out)
	if wrap == "" {
		return b
	}
	b, _ = json.Marshal(map[string]json.RawMessage{wrap: b})
	return b
}

// rawResult is a result as JSON made elsewhere (an upstream's).
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// localTask is a call agentd runs as a task for a gateway.
type localTask struct {
	id, gateway, owner string
	created            time.Time
	ttl                time.Duration
	cancel             context.CancelFunc
	done               chan struct{} // closed once the call returned

	mu      sync.Mutex
	status  TaskStatus
	message string
	updated time.Time
	res     *mcp.CallToolResult
	rpcErr  error
}

func (t *localTask) view() Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Task{ID: t.id, Status: t.status, Message: t.message, Created: t.created, Updated: t.updated, TTL: t.ttl}
}

// finish records the call's end, unless the task was cancelled first.
func (t *localTask) finish(res *mcp.CallToolResult, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer close(t.done)
	if t.status == TaskCancelled {
		return
	}
	t.updated = time.Now()
	t.res, t.rpcErr = res, err
	switch {
	case err != nil:
		t.status, t.message = TaskFailed, err.Error()
	case res != nil && res.IsError:
		t.status = TaskFailed
	default:
		t.status = TaskCompleted
	}
}

// startLocal runs the call in the background as a task of agentd's.
func (g *gatewayTasks) startLocal(gw, regName string, req *mcp.CallToolRequest, ttl time.Duration, who *principal.Principal) (mcp.Result, error) {
	idb := make([]byte, 16)
	if _, err := rand.Read(idb); err != nil {
		return nil, err
	}
	now := time.Now()
	runCtx, cancel := context.WithCancel(g.base)
	t := &localTask{
		id: "gwl-" + hex.EncodeToString(idb), gateway: gw, owner: principalName(who),
		created: now, updated: now, ttl: ttl, cancel: cancel, done: make(chan struct{}), status: TaskWorking,
	}
	if err := g.add(t); err != nil {
		cancel()
		return nil, err
	}
	// The run's request: the caller's tool, arguments and principal,
	// without its progress token (the client may be gone; it follows the
	// task with tasks/get) and without its session's requests (nobody may
	// be there to answer the upstream's).
	run := &mcp.CallToolRequest{
		Session: req.Session,
		Params:  &mcp.CallToolParamsRaw{Name: req.Params.Name, Arguments: req.Params.Arguments},
		Extra:   req.Extra,
	}
	call := g.s.gatewayCall(gw, regName)
	g.wg.Go(func() {
		defer cancel()
		res, err := call(runCtx, run, &mcpclient.Caller{})
		t.finish(res, err)
	})
	return &createTaskResult{Task: g.ts.wire(t.view())}, nil
}

// add files a new task, dropping expired and, when full, the oldest
// ended ones.
func (g *gatewayTasks) add(t *localTask) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	var ended []*localTask
	for id, o := range g.local {
		v := o.view()
		if expired(v, now) && v.Status.Terminal() {
			delete(g.local, id)
		} else if v.Status.Terminal() {
			ended = append(ended, o)
		}
	}
	if len(g.local) >= maxGatewayTasks {
		slices.SortFunc(ended, func(a, b *localTask) int { return a.created.Compare(b.created) })
		for _, o := range ended[:min(len(ended), len(g.local)-maxGatewayTasks+1)] {
			delete(g.local, o.id)
		}
	}
	if len(g.local) >= maxGatewayTasks {
		return failf(errInvalidParams, "too many gateway tasks running (%d): wait for some to end", maxGatewayTasks)
	}
	g.local[t.id] = t
	return nil
}

// lookupLocal is the caller's task id of gateway gw.
func (g *gatewayTasks) lookupLocal(gw, owner, id string) (*localTask, error) {
	g.mu.Lock()
	t, ok := g.local[id]
	g.mu.Unlock()
	if !ok || t.gateway != gw || t.owner != owner || expired(t.view(), time.Now()) {
		return nil, errUnknownTask
	}
	return t, nil
}

// serveGatewayTask answers a task method sent to gateway e itself, before
// the SDK, and reports whether it did.
func (s *Server) serveGatewayTask(w http.ResponseWriter, r *http.Request, e *endpoint, body []byte) bool {
	g := s.gwTasks
	if g == nil || e.name == "" || r.Header.Get(headerProtocolVersion) >= statelessVersion {
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
	owner := principalName(principal.FromContext(r.Context()))
	res, err := g.serve(r.Context(), e.name, owner, msg.Method, msg.Params)
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

// serve answers one task method of gateway gw for owner.
func (g *gatewayTasks) serve(ctx context.Context, gw, owner, method string, params json.RawMessage) (any, error) {
	if t := bytes.TrimSpace(params); len(t) == 0 || string(t) == "null" {
		params = json.RawMessage(`{}`)
	}
	if method == "tasks/list" {
		var lp listTasksParams
		if err := json.Unmarshal(params, &lp); err != nil {
			return nil, failf(errInvalidParams, "invalid params: %v", err)
		}
		return g.list(ctx, gw, owner, lp.Cursor)
	}
	var ip taskIDParams
	if err := json.Unmarshal(params, &ip); err != nil {
		return nil, failf(errInvalidParams, "invalid params: %v", err)
	}
	if ip.TaskID == "" {
		return nil, failf(errInvalidParams, "params.taskId is required")
	}
	if strings.HasPrefix(ip.TaskID, handlePrefix) {
		return g.serveUpstream(ctx, gw, owner, method, ip.TaskID)
	}
	t, err := g.lookupLocal(gw, owner, ip.TaskID)
	if err != nil {
		return nil, err
	}
	switch method {
	case "tasks/get":
		return &taskResult{taskWire: g.ts.wire(t.view())}, nil
	case "tasks/cancel":
		t.mu.Lock()
		if t.status.Terminal() {
			st := t.status
			t.mu.Unlock()
			return nil, failf(errInvalidParams, "cannot cancel task %s: it is already %s", t.id, st)
		}
		t.status, t.message, t.updated = TaskCancelled, "cancelled by the client (tasks/cancel)", time.Now()
		t.mu.Unlock()
		t.cancel()
		return &taskResult{taskWire: g.ts.wire(t.view())}, nil
	default: // tasks/result
		select {
		case <-t.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		t.mu.Lock()
		res, rpcErr, st := t.res, t.rpcErr, t.status
		t.mu.Unlock()
		meta := mcp.Meta{relatedTaskKey: map[string]any{"taskId": t.id}}
		switch {
		case st == TaskCancelled:
			return &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: "the task was cancelled"}}, IsError: true}, nil
		case rpcErr != nil:
			return nil, rpcErr
		}
		out := *res
		out.Meta = meta
		return &out, nil
	}
}

// serveUpstream routes a task method of a handle to the upstream session
// its task lives in.
func (g *gatewayTasks) serveUpstream(ctx context.Context, gw, owner, method, id string) (any, error) {
	c, err := g.open(gw, owner, id)
	if err != nil {
		return nil, err
	}
	up, ok := g.s.opts.Upstreams.(upstreamTasks)
	if !ok {
		return nil, errUnknownTask
	}
	raw, err := up.UpstreamTaskRequest(ctx, gw, c.Session, method, map[string]any{"taskId": c.Task})
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.Is(err, mcpclient.ErrTaskSessionLost) {
			return nil, errUnknownTask // gone with the upstream's session
		}
		if errors.As(err, &rpcErr) {
			return nil, rpcErr
		}
		return nil, failf(tool.ErrDisconnected, "the upstream server %q: %v", gw, err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("decode the upstream's %s result: %w", method, err)
	}
	if method != "tasks/result" {
		return &rawResult{raw: withTaskID(m, id, "")}, nil
	}
	// The result's related-task _meta names the handle, not the
	// upstream's id.
	var meta map[string]json.RawMessage
	if json.Unmarshal(m["_meta"], &meta) == nil && meta != nil {
		if _, ok := meta[relatedTaskKey]; ok {
			meta[relatedTaskKey], _ = json.Marshal(map[string]string{"taskId": id})
			m["_meta"], _ = json.Marshal(meta)
		}
	}
	b, err := json.Marshal(m)
	return &rawResult{raw: b}, err
}

// list answers tasks/list: the owner's tasks of gateway gw started
// through this process, newest first; the upstreams' are read from them.
// The cursor is the id of the last task of the previous page.
func (g *gatewayTasks) list(ctx context.Context, gw, owner, cursor string) (any, error) {
	type entry struct {
		id      string
		created time.Time
		local   *localTask
	}
	now := time.Now()
	var all []entry
	g.mu.Lock()
	for _, t := range g.local {
		if t.gateway == gw && t.owner == owner && !expired(t.view(), now) {
			all = append(all, entry{t.id, t.created, t})
		}
	}
	for _, p := range g.passed[owner] {
		if p.gateway == gw && (p.ttl <= 0 || now.Before(p.created.Add(p.ttl))) {
			all = append(all, entry{id: p.id, created: p.created})
		}
	}
	g.mu.Unlock()
	slices.SortFunc(all, func(a, b entry) int {
		if c := b.created.Compare(a.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	if cursor != "" {
		i := slices.IndexFunc(all, func(e entry) bool { return e.id == cursor })
		if i < 0 {
			return nil, failf(errInvalidParams, "invalid cursor")
		}
		all = all[i+1:]
	}
	const page = 50
	out := &listTasksResult{Tasks: []taskWire{}}
	for i, e := range all {
		if i == page {
			out.NextCursor = all[i-1].id
			break
		}
		if e.local != nil {
			out.Tasks = append(out.Tasks, g.ts.wire(e.local.view()))
			continue
		}
		res, err := g.serveUpstream(ctx, gw, owner, "tasks/get", e.id)
		if err != nil {
			continue // expired upstream, or gone with its session
		}
		var w taskWire
		if json.Unmarshal(res.(*rawResult).raw, &w) == nil {
			out.Tasks = append(out.Tasks, w)
		}
	}
	return out, nil
}
