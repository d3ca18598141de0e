package mcpclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/jsonrpcwire"
)

// A task link carries an upstream server's MCP tasks (SEP-1686, protocol
// 2025-11-25) for the gateways: a task-augmented tools/call, and
// tasks/get, tasks/result, tasks/list and tasks/cancel.
//
// go-sdk v1.8.0's types drop what SEP-1686 adds (tasks.go reads it off
// the wire for the link session), and a gateway needs one thing more: to
// send a task request on a named upstream session. Upstreams bind a task
// to the session that created it (the TS SDK's task store checks it), and
// a gateway's handle may come back through another replica, whose own
// link is another session. So over Streamable HTTP the link speaks
// JSON-RPC itself, on an upstream session of its own, through the
// server's configured URL, headers and network policy, and each request
// names the session its task lives in: the one TaskSupport reported when
// the task was created.
//
// A stdio server's tasks go over the link itself, the one connection
// there is to it (tasks.go's taskWatch reads what the SDK's types drop):
// its session is named by a random id known to this process only, so a
// handle of it answers unknown task on another replica, and after the
// server restarted. SSE and OAuth servers have no task link: for them
// TaskSupport answers ErrNoTaskLink, and the gateway runs the call as a
// task of its own.

// ErrNoTaskLink is returned for a server whose tasks agentd cannot reach
// (an SSE or OAuth server).
var ErrNoTaskLink = errors.New("no task link to this mcp server (only stdio servers and streamable http servers without oauth have one)")

// ErrTaskSessionLost is returned by UpstreamTaskRequest when the server
// no longer knows the session (HTTP 404): its tasks are gone with it, and
// the next UpstreamTaskSupport opens a new session.
var ErrTaskSessionLost = errors.New("the mcp server no longer knows the task session")

// TaskSupport is what an upstream declared about tasks in the session
// its task link opened.
type TaskSupport struct {
	// Session is the upstream session tasks are created on.
	Session string
	// ToolsCall reports capabilities.tasks.requests.tools.call.
	ToolsCall bool
	// Tools maps each tool's upstream name to its execution.taskSupport
	// ("forbidden" when the tool declared none).
	Tools map[string]string
}

// taskLinkVersion is the protocol of SEP-1686 tasks.
const taskLinkVersion = "2025-11-25"

// taskLink is the task session of one server.
type taskLink struct {
	s    *server
	next atomic.Int64 // JSON-RPC ids

	mu      sync.Mutex
	support *TaskSupport // nil until opened, and after the session was lost

	hcOnce sync.Once
	hc     *http.Client

	// stdio are the ids given to a stdio server's link sessions.
	stdioMu  sync.Mutex
	stdioIDs map[*session]string
	stdioBy  map[string]*session
}

// client is the link's HTTP client, made once, so that its connections
// are reused. It follows no redirect: the configured headers (tokens)
// must not go to another origin, and a Streamable HTTP server does not
// redirect its POSTs.
func (l *taskLink) client() *http.Client {
	l.hcOnce.Do(func() {
		l.hc = l.s.m.policy(l.s.cfg.Name, l.s.cfg.AllowPrivate).Client(0)
		l.hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	})
	return l.hc
}

// UpstreamTaskSupport returns what server declared about tasks, opening
// its task link's session on first use.
func (m *Manager) UpstreamTaskSupport(ctx context.Context, server string) (TaskSupport, error) {
	l, err := m.taskLink(server)
	if err != nil {
		return TaskSupport{}, err
	}
	if l.s.cfg.Transport.Type == TransportStdio {
		return l.stdioSupport()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.support == nil {
		sup, err := l.open(ctx)
		if err != nil {
			return TaskSupport{}, fmt.Errorf("mcp server %q: open a task session: %w", server, err)
		}
		l.support = sup
	}
	return *l.support, nil
}

// UpstreamTaskRequest sends one request (method with params) to server on
// its upstream session and returns the result as the server sent it. An
// error the server answered is a *jsonrpc.Error; a session the server no
// longer knows is ErrTaskSessionLost.
func (m *Manager) UpstreamTaskRequest(ctx context.Context, server, session, method string, params any) (json.RawMessage, error) {
	l, err := m.taskLink(server)
	if err != nil {
		return nil, err
	}
	if l.s.cfg.Transport.Type == TransportStdio {
		return l.stdioRequest(ctx, session, method, params)
	}
	res, status, err := l.request(ctx, session, method, params)
	if status == http.StatusNotFound {
		l.mu.Lock()
		if l.support != nil && l.support.Session == session {
			l.support = nil
		}
		l.mu.Unlock()
		return nil, ErrTaskSessionLost
	}
	return res, err
}

// taskLink returns the link of a server that can have one.
func (m *Manager) taskLink(name string) (*taskLink, error) {
	s := m.server(name)
	if s == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownServer, name)
	}
	if (s.cfg.Transport.Type != TransportHTTP && s.cfg.Transport.Type != TransportStdio) || s.cfg.OAuth != nil {
		return nil, ErrNoTaskLink
	}
	l, _ := m.taskLinks.LoadOrStore(s, &taskLink{s: s})
	return l.(*taskLink), nil
}

// open initializes a session and reads what it declares.
func (l *taskLink) open(ctx context.Context) (*TaskSupport, error) {
	init := map[string]any{
		"protocolVersion": taskLinkVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": l.s.m.opts.ClientName, "version": l.s.m.opts.ClientVersion},
	}
	raw, sid, _, err := l.post(ctx, "", "initialize", init, true)
	if err != nil {
		return nil, err
	}
	var ir struct {
		Capabilities struct {
			Tasks *struct {
				Requests *struct {
					Tools *struct {
						Call json.RawMessage `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(raw, &ir); err != nil {
		return nil, fmt.Errorf("decode initialize result: %w", err)
	}
	sup := &TaskSupport{Session: sid, Tools: map[string]string{}}
	if t := ir.Capabilities.Tasks; t != nil && t.Requests != nil && t.Requests.Tools != nil && len(t.Requests.Tools.Call) > 0 {
		sup.ToolsCall = true
	}
	if _, _, _, err := l.post(ctx, sid, "notifications/initialized", nil, false); err != nil {
		return nil, err
	}
	if !sup.ToolsCall {
		return sup, nil
	}
	cursor := ""
	for range 100 {
		var p any = map[string]any{}
		if cursor != "" {
			p = map[string]any{"cursor": cursor}
		}
		raw, _, _, err := l.post(ctx, sid, "tools/list", p, true)
		if err != nil {
			return nil, fmt.Errorf("list tools: %w", err)
		}
		var lr struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution *struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &lr); err != nil {
			return nil, fmt.Errorf("decode tools/list result: %w", err)
		}
		for _, t := range lr.Tools {
			ts := "forbidden"
			if t.Execution != nil && t.Execution.TaskSupport != "" {
				ts = t.Execution.TaskSupport
			}
			sup.Tools[t.Name] = ts
		}
		if cursor = lr.NextCursor; cursor == "" {
			break
		}
	}
	return sup, nil
}

// request sends a request on session.
func (l *taskLink) request(ctx context.Context, session, method string, params any) (json.RawMessage, int, error) {
	raw, _, status, err := l.post(ctx, session, method, params, true)
	return raw, status, err
}

// post sends one message; for a request (call) it returns the result, the
// session id the server gave (on initialize) and the HTTP status.
func (l *taskLink) post(ctx context.Context, session, method string, params any, call bool) (json.RawMessage, string, int, error) {
	s := l.s
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	var id string
	if call {
		id = strconv.FormatInt(l.next.Add(1), 10)
		msg["id"] = json.RawMessage(id)
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, "", 0, err
	}
	pol := s.m.policy(s.cfg.Name, s.cfg.AllowPrivate)
	u, err := pol.CheckURL(ctx, s.cfg.Transport.URL)
	if err != nil {
		return nil, "", 0, err
	}
	headers, _, err := expandHeaders(s.cfg.Headers, s.m.opts.LookupEnv)
	if err != nil {
		return nil, "", 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, "", 0, err
	}
	for k, v := range headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(sessionHeader, session)
		req.Header.Set("Mcp-Protocol-Version", taskLinkVersion)
	}
	resp, err := l.client().Do(req)
	if err != nil {
		return nil, "", 0, s.redactErr(err)
	}
	defer resp.Body.Close()
	sid := resp.Header.Get(sessionHeader)
	if !call {
		if resp.StatusCode/100 != 2 {
			return nil, sid, resp.StatusCode, fmt.Errorf("%s: HTTP %d", method, resp.StatusCode)
		}
		return nil, sid, resp.StatusCode, nil
	}
	answer, err := answerOf(resp, json.RawMessage(id), s.m.opts.MaxResultBytes)
	if err != nil {
		return nil, sid, resp.StatusCode, fmt.Errorf("%s: %w", method, err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if err := json.Unmarshal(answer, &env); err != nil {
		return nil, sid, resp.StatusCode, fmt.Errorf("%s: decode answer: %w", method, err)
	}
	if env.Error != nil {
		env.Error.Message = s.redact(env.Error.Message)
		return nil, sid, resp.StatusCode, env.Error
	}
	return env.Result, sid, resp.StatusCode, nil
}

// answerOf reads the response to the request id from a JSON body or an
// event stream (which may carry the server's notifications first).
func answerOf(resp *http.Response, id json.RawMessage, limit int64) ([]byte, error) {
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusBadRequest {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if limit <= 0 {
		limit = 10 << 20
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		return io.ReadAll(io.LimitReader(resp.Body, limit))
	}
	sr := jsonrpcwire.NewReader(resp.Body, jsonrpcwire.FramingSSE, limit+1024)
	for {
		ev, err := sr.NextEvent()
		if err != nil {
			return nil, fmt.Errorf("the answer stream ended without an answer: %w", err)
		}
		if len(ev.Data) == 0 {
			continue
		}
		if f := jsonrpcwire.Scan(ev.Data); f.Method == "" && bytes.Equal(f.ID, id) {
			return ev.Data, nil
		}
	}
}

// redactErr is err with the server's secrets removed from its text.
func (s *server) redactErr(err error) error {
	return errors.New(s.redact(err.Error()))
}

// liveSession is the server's connected link session, or nil.
func (s *server) liveSession() *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil || s.sess.isBroken() {
		return nil
	}
	return s.sess
}

// stdioSupport is what the stdio server's live link session declared.
func (l *taskLink) stdioSupport() (TaskSupport, error) {
	sess := l.s.liveSession()
	if sess == nil {
		return TaskSupport{}, fmt.Errorf("mcp server %q is not connected", l.s.name)
	}
	l.stdioMu.Lock()
	defer l.stdioMu.Unlock()
	id, ok := l.stdioIDs[sess]
	if !ok {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		id = "stdio-" + hex.EncodeToString(b)
		if l.stdioIDs == nil {
			l.stdioIDs, l.stdioBy = map[*session]string{}, map[string]*session{}
		}
		// Sessions of the past are forgotten: their tasks are gone.
		clear(l.stdioIDs)
		clear(l.stdioBy)
		l.stdioIDs[sess], l.stdioBy[id] = id, sess
	}
	sup := TaskSupport{Session: id, ToolsCall: sess.tasks.declares(), Tools: map[string]string{}}
	sess.tasks.mu.Lock()
	for name, ts := range sess.tasks.support {
		sup.Tools[name] = ts
	}
	sess.tasks.mu.Unlock()
	return sup, nil
}

// stdioRequest sends a task request on the stdio link session named id,
// through the SDK's session (mcp.CallCustomMethod, as tasks.go does).
func (l *taskLink) stdioRequest(ctx context.Context, id, method string, params any) (json.RawMessage, error) {
	l.stdioMu.Lock()
	sess := l.stdioBy[id]
	l.stdioMu.Unlock()
	if sess == nil || sess != l.s.liveSession() {
		return nil, ErrTaskSessionLost
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	var res any
	switch method {
	case "tools/call":
		var p taskCallParams
		var in struct {
			Task json.RawMessage `json:"task"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &in); err != nil {
			return nil, err
		}
		_ = json.Unmarshal(in.Task, &p.Task)
		token := l.s.m.nextToken()
		p.Meta = mcp.Meta{"progressToken": token}
		task, plain, err := sess.tasks.create(token, func() (*mcp.CallToolResult, error) {
			return mcp.CallCustomMethod[*taskCallParams, *mcp.CallToolResult](ctx, sess.cs, "tools/call", &p)
		})
		if err != nil {
			return nil, err
		}
		if task == nil {
			res = plain
		} else {
			res = map[string]any{"task": task}
		}
	case "tasks/get", "tasks/cancel":
		var p taskIDParams
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		if res, err = mcp.CallCustomMethod[*taskIDParams, *taskResult](ctx, sess.cs, method, &p); err != nil {
			return nil, err
		}
	case "tasks/result":
		var p taskIDParams
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		if res, err = mcp.CallCustomMethod[*taskIDParams, *mcp.CallToolResult](ctx, sess.cs, method, &p); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s is not sent on a stdio task link", method)
	}
	return json.Marshal(res)
}
