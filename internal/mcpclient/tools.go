//lint:file-ignore SA1019 upstream log messages (deprecated in 2026-07-28, alive in every earlier version) are forwarded on purpose

package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/telemetry"
	"github.com/agentd/agentd/internal/tool"
)

// mcpTool is one upstream tool as agents see it.
type mcpTool struct {
	srv      *server
	upstream string // the name the server knows it by
	spec     tool.Spec
}

var _ tool.Tool = (*mcpTool)(nil)

// Spec implements tool.Tool.
func (t *mcpTool) Spec() tool.Spec { return t.spec }

// UpstreamName returns the server and the upstream name of a tool this
// package made (for gateways that serve a server's tools unprefixed).
func UpstreamName(t tool.Tool) (server, name string, ok bool) {
	if mt, isMCP := t.(*mcpTool); isMCP {
		return mt.srv.name, mt.upstream, true
	}
	return "", "", false
}

// logGrace bounds how long a call's result waits for the log messages
// read before it to be handed to its caller.
const logGrace = time.Second

// Cancellation causes of a call.
var (
	errIdleTimeout = errors.New("idle timeout")
	errHardCap     = errors.New("hard cap")
)

// Call implements tool.Tool. The call fails with a timeout when the
// server sends neither a result nor progress for timeout_secs, and in
// any case after the hard cap; cancelling ctx cancels the upstream call.
// A call whose connection breaks fails at once with an error wrapping
// tool.ErrDisconnected; it is never replayed. A call made as an MCP task
// (tasks.go) instead follows its task on the reconnected session.
func (t *mcpTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	if o := t.srv.m.obs; o != nil {
		return o.observedCall(ctx, t, c)
	}
	return t.call(ctx, c)
}

func (t *mcpTool) call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var in json.RawMessage
	if c != nil {
		in = c.Args
	}
	args, err := objectArgs(in)
	if err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	s := t.srv
	ex := exchangeOf(c)
	sess, err := s.awaitSession(ctx)
	if err != nil {
		err = fmt.Errorf("call %s: %w", t.spec.Name, err)
		s.record(ex, nil, nil, err)
		return tool.Result{}, err
	}

	var progress func(string, float64, float64)
	if c != nil {
		progress = c.Progress
	}
	var caller *Caller
	if ex != nil {
		caller = ex.Caller
	}
	var res *mcp.CallToolResult
	switch {
	case caller != nil && caller.PassInput && !isStateless(sess):
		res, err = s.bridgedCall(ctx, sess, t.upstream, args, caller, progress)
	case s.useTask(sess, t.upstream):
		res, sess, err = s.taskCall(ctx, sess, t.upstream, args, caller, progress, ex)
	default:
		start := time.Now()
		res, err = s.upstreamCall(ctx, sess, t.upstream, args, caller, progress)
		s.noteDuration(t.upstream, time.Since(start))
	}
	if isInputError(err) {
		res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s.redact(err.Error())}}, IsError: true}
		err = nil
	}
	if err != nil {
		out, cerr := s.callResult(ctx, sess, t.upstream, err)
		s.record(ex, nil, err, cerr)
		return out, cerr
	}
	s.record(ex, res, nil, nil)
	return renderResult(res), nil
}

// upstreamCall makes one call of the upstream tool for caller (nil for an
// agent), with the idle timeout and the hard cap, and runs the rounds of
// input a 2026-07-28 link asks for.
func (s *server) upstreamCall(ctx context.Context, sess *session, upstream string, args json.RawMessage, caller *Caller, progress func(string, float64, float64)) (*mcp.CallToolResult, error) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(s.idle, func() { cancel(errIdleTimeout) })
	defer idle.Stop()
	hard := time.AfterFunc(s.hard, func() { cancel(errHardCap) })
	defer hard.Stop()

	token := s.m.nextToken()
	in := &inflight{progress: progress, idle: idle, d: s.idle, cs: sess.cs, caller: caller}
	defer in.startRelays(cctx)()
	s.calls.Store(token, in)
	defer s.calls.Delete(token)

	params := &mcp.CallToolParams{Name: upstream, Arguments: args}
	params.SetProgressToken(token)
	// The call's trace goes on upstream: MCP carries W3C trace context in
	// _meta, as HTTP does in headers.
	telemetry.InjectMeta(ctx, params.Meta)
	if isStateless(sess) {
		// 2026-07-28 has no logging/setLevel: the level travels with
		// each request, and log messages with its response stream.
		params.Meta[mcp.MetaKeyLogLevel] = "info"
		// So do the client's capabilities: the caller's, or none for an
		// agent, whatever the link offered when it connected.
		var caps *mcp.ClientCapabilities
		if caller != nil {
			caps = caller.Capabilities
			params.InputResponses, params.RequestState = caller.InputResponses, caller.RequestState
		}
		params.Meta[mcp.MetaKeyClientCapabilities] = CapabilitiesMeta(caps)
	} else if caller != nil && (caller.RequestState != "" || caller.InputResponses != nil) {
		// An initialize-era server that itself answered with input
		// requests (a bridged call, see parked.go) gets the answers the
		// same way.
		params.InputResponses, params.RequestState = caller.InputResponses, caller.RequestState
	}

	returned := make(chan struct{})
	defer close(returned)
	stopWatch := context.AfterFunc(cctx, func() {
		timer := time.NewTimer(stuckGrace)
		defer timer.Stop()
		select {
		case <-returned:
		case <-timer.C:
			sess.fail(errors.New("a call could not be abandoned: the server stopped reading"))
		}
	})
	defer stopWatch()

	res, err := sessionCallTool(cctx, sess, params)
	if err == nil {
		res, err = s.inputRounds(cctx, sess, in, params, res)
	}
	if caller != nil && caller.Log != nil || progress != nil {
		// The caller gets the log messages and progress sent before the
		// result first.
		sess.logs.wait(cctx, logGrace)
	}
	if err != nil {
		if cause := context.Cause(cctx); cause == errIdleTimeout || cause == errHardCap {
			err = &timeoutError{cause: cause, err: err}
		}
	}
	return res, err
}

// sessionCallTool is sess.cs.CallTool, made by agentd itself on a stdio link of
// the initialize era (directcall.go).
func sessionCallTool(ctx context.Context, sess *session, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if c, ok := sess.conn.(*stdioConn); ok && !isStateless(sess) {
		return c.callTool(ctx, params)
	}
	return sess.cs.CallTool(ctx, params)
}

// timeoutError is a call ended by its idle timeout or the hard cap.
type timeoutError struct{ cause, err error }

func (e *timeoutError) Error() string { return e.cause.Error() + ": " + e.err.Error() }
func (e *timeoutError) Unwrap() error { return e.err }

// bridgedCall is a call for a 2026-07-28 caller on an initialize-era link
// (see parked.go): the first request parks the upstream call, and a
// request carrying a request state continues the call it names.
func (s *server) bridgedCall(ctx context.Context, sess *session, upstream string, args json.RawMessage, caller *Caller, progress func(string, float64, float64)) (*mcp.CallToolResult, error) {
	// Log messages reach the client's request that is attached to the
	// call (progress too): the request's context says which.
	var logTo func(context.Context, *mcp.LoggingMessageParams)
	if caller.Log != nil {
		logTo = func(_ context.Context, lp *mcp.LoggingMessageParams) { caller.Log(ctx, lp) }
	}
	// Answers sent without a state go to the server as they are, as on a
	// 2026-07-28 link: it may take them, or ask.
	answers := caller.InputResponses
	var upstreamState string
	if caller.RequestState != "" {
		p, up, err := s.parking.resume(s.name, "tools/call", caller.RequestState)
		if err != nil {
			return nil, err
		}
		if p != nil {
			p.attach(progress, logTo)
			p.answer(caller.InputResponses)
			return s.wrapState(toolResult(s.parking.next(ctx, s.name, p)))
		}
		// The server answered an earlier round with input requests of
		// its own: the call is made again with the answers.
		upstreamState = up
	}
	p, err := s.parking.park(caller.Capabilities, "tools/call", func(pctx context.Context, bc *Caller, progress func(string, float64, float64)) (mcp.Result, error) {
		bc.InputResponses, bc.RequestState = answers, upstreamState
		if s.cfg.Transport.Type == TransportStdio {
			// One process, one link: its requests go to the one call
			// in flight (several at once are refused, see soleCall).
			return asResult(s.upstreamCall(pctx, sess, upstream, args, bc, progress))
		}
		own, err := s.callSession(pctx, caller.Capabilities)
		if err != nil {
			return nil, err
		}
		defer own.close()
		return asResult(s.upstreamCall(pctx, own, upstream, args, bc, progress))
	}, func(reqs mcp.InputRequestMap, state string) mcp.Result {
		return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
	}, progress, logTo)
	if err != nil {
		return nil, err
	}
	// Until it asks for input, the call is the request's: a client that
	// gives up on it cancels it.
	stop := context.AfterFunc(ctx, func() {
		if !p.asked() {
			p.cancel()
		}
	})
	defer stop()
	return s.wrapState(toolResult(s.parking.next(ctx, s.name, p)))
}

// asResult is a typed result as an mcp.Result, nil staying nil (not an
// interface holding a nil pointer).
func asResult[R mcp.Result](r R, err error) (mcp.Result, error) {
	var zero R
	if any(r) == any(zero) {
		return nil, err
	}
	return r, err
}

// toolResult is a parked tool call's result as the tool call's type.
func toolResult(r mcp.Result, err error) (*mcp.CallToolResult, error) {
	if r == nil {
		return nil, err
	}
	res, ok := r.(*mcp.CallToolResult)
	if !ok && err == nil {
		err = fmt.Errorf("a parked tool call returned a %T", r)
	}
	return res, err
}

// wrapState signs the request state of a result in which an
// initialize-era server asked for input itself (its SDK turns only one
// round into requests of its own), so that the client's next request
// comes back to bridgedCall.
func (s *server) wrapState(res *mcp.CallToolResult, err error) (*mcp.CallToolResult, error) {
	if err != nil || res == nil || res.InputRequests == nil || s.parking.issued(s.name, res.RequestState) {
		return res, err
	}
	out := *res
	out.RequestState = s.parking.sealUpstream(s.name, res.RequestState)
	return &out, nil
}

// callResult turns a failed call into what the runner should see.
func (s *server) callResult(ctx context.Context, sess *session, name string, err error) (tool.Result, error) {
	what := fmt.Sprintf("mcp tool %q on server %q", name, s.name)
	if ctx.Err() != nil {
		return tool.Result{}, fmt.Errorf("%s: %w", what, ctx.Err())
	}
	var te *timeoutError
	if errors.As(err, &te) {
		switch te.cause {
		case errIdleTimeout:
			return tool.Result{}, fmt.Errorf("%s: no result and no progress for %s: %w", what, s.idle, context.DeadlineExceeded)
		case errHardCap:
			return tool.Result{}, fmt.Errorf("%s: still running after %s, the longest a call may take: %w", what, s.hard, context.DeadlineExceeded)
		}
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && !fromTransport(err) && !sess.rejected.Load() {
		if rpcErr.Code == codeTooLarge {
			return tool.Result{}, fmt.Errorf("%s: %w: %s", what, ErrResultTooLarge, rpcErr.Message)
		}
		// A protocol error (unknown tool, invalid arguments): something
		// the model can read and correct.
		return tool.Result{Content: fmt.Sprintf("MCP error %d: %s", rpcErr.Code, s.redact(rpcErr.Message)), IsError: true}, nil
	}
	// Anything else is the link failing under the call: the process died,
	// the stream broke, the session was forgotten.
	if !sess.isBroken() {
		s.requestProbe()
	}
	return tool.Result{}, fmt.Errorf("%s: %w: %s", what, tool.ErrDisconnected, s.redact(err.Error()))
}

// The go-sdk reports failures of its own transport layer as JSON-RPC
// errors with these codes (jsonrpc2.ErrClientClosing, ErrServerClosing,
// ErrRejected): they never come from the server.
var transportCodes = []int64{-32003, -32004, -32005}

// fromTransport reports whether err is the SDK's transport failing (an
// HTTP error status, a connection refused, a closing connection) rather
// than an error response of the server. The SDK wraps a server's error
// that came in an HTTP error status (2026-07-28 servers answer some that
// way) together with ErrRejected, the server's first: so the first
// JSON-RPC error of the chain decides.
func fromTransport(err error) bool {
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr) && slices.Contains(transportCodes, rpcErr.Code)
}

// objectArgs checks that args is a JSON object (or empty, meaning {}).
func objectArgs(args json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, errors.New("arguments must be a JSON object")
	}
	return json.RawMessage(trimmed), nil
}

// Built-in tools over every server's resources and prompts.
const (
	toolListResources = "mcp_list_resources"
	toolReadResource  = "mcp_read_resource"
	toolListPrompts   = "mcp_list_prompts"
	toolGetPrompt     = "mcp_get_prompt"
)

// builtinTool is one of the resource and prompt tools.
type builtinTool struct {
	m    *Manager
	spec tool.Spec
	call func(ctx context.Context, m *Manager, args json.RawMessage) (tool.Result, error)
}

// Spec implements tool.Tool.
func (b *builtinTool) Spec() tool.Spec { return b.spec }

// Call implements tool.Tool.
func (b *builtinTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var args json.RawMessage
	if c != nil {
		args = c.Args
	}
	args, err := objectArgs(args)
	if err != nil {
		return tool.Result{Content: err.Error(), IsError: true}, nil
	}
	return b.call(ctx, b.m, args)
}

func newBuiltins(m *Manager) []tool.Tool {
	spec := func(name, desc, schema string, readOnly bool) tool.Spec {
		return tool.Spec{
			Name: name, Description: desc, InputSchema: json.RawMessage(schema),
			Origin: tool.OriginMCP, Untrusted: true, ReadOnly: readOnly,
		}
	}
	return []tool.Tool{
		&builtinTool{m: m, call: listResources, spec: spec(toolListResources,
			"[MCP] List the resources (and resource templates) that connected MCP servers offer. Give server to list one server only.",
			`{"type":"object","properties":{"server":{"type":"string","description":"MCP server name; omit for all"}}}`, true)},
		&builtinTool{m: m, call: readResource, spec: spec(toolReadResource,
			"[MCP] Read one resource of an MCP server by URI.",
			`{"type":"object","properties":{"server":{"type":"string","description":"MCP server name"},"uri":{"type":"string","description":"resource URI"}},"required":["server","uri"]}`, true)},
		&builtinTool{m: m, call: listPrompts, spec: spec(toolListPrompts,
			"[MCP] List the prompts that connected MCP servers offer, with their arguments. Give server to list one server only.",
			`{"type":"object","properties":{"server":{"type":"string","description":"MCP server name; omit for all"}}}`, true)},
		&builtinTool{m: m, call: getPrompt, spec: spec(toolGetPrompt,
			"[MCP] Get a prompt of an MCP server, filled in with arguments.",
			`{"type":"object","properties":{"server":{"type":"string","description":"MCP server name"},"name":{"type":"string","description":"prompt name"},"arguments":{"type":"object","additionalProperties":{"type":"string"},"description":"prompt arguments"}},"required":["server","name"]}`, true)},
	}
}

type serverArgs struct {
	Server    string            `json:"server"`
	URI       string            `json:"uri"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments"`
}

func parseArgs(raw json.RawMessage) (serverArgs, error) {
	var a serverArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return a, fmt.Errorf("bad arguments: %v", err)
	}
	return a, nil
}

// targets returns the servers a listing covers: the named one, or every
// connected one.
func (m *Manager) targets(name string) ([]*server, error) {
	if name != "" {
		s := m.server(name)
		if s == nil {
			return nil, fmt.Errorf("no MCP server named %q", name)
		}
		return []*server{s}, nil
	}
	var out []*server
	for _, s := range m.serversInOrder() {
		s.mu.Lock()
		up := s.sess != nil
		s.mu.Unlock()
		if up {
			out = append(out, s)
		}
	}
	return out, nil
}

// withSession runs f on a server's session with the server's idle
// timeout, mapping a broken link to ErrDisconnected.
func withSession[T any](ctx context.Context, s *server, f func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	var zero T
	sess, err := s.awaitSession(ctx)
	if err != nil {
		return zero, err
	}
	cctx, cancel := context.WithTimeout(ctx, s.idle)
	defer cancel()
	v, err := f(cctx, sess.cs)
	if err == nil {
		return v, nil
	}
	var rpcErr *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return zero, ctx.Err()
	case cctx.Err() != nil:
		return zero, fmt.Errorf("mcp server %q: no answer within %s: %w", s.name, s.idle, context.DeadlineExceeded)
	case errors.As(err, &rpcErr) && !fromTransport(err) && !sess.rejected.Load():
		if rpcErr.Code == codeTooLarge {
			return zero, fmt.Errorf("mcp server %q: %w: %s", s.name, ErrResultTooLarge, rpcErr.Message)
		}
		return zero, fmt.Errorf("mcp server %q: MCP error %d: %s", s.name, rpcErr.Code, s.redact(rpcErr.Message))
	}
	if !sess.isBroken() {
		s.requestProbe()
	}
	return zero, fmt.Errorf("mcp server %q: %w: %s", s.name, tool.ErrDisconnected, s.redact(err.Error()))
}

// agentMeta is the _meta of an agent's request on cs: on a 2026-07-28
// link it declares no client capabilities, since an agent can answer no
// input request (the link itself offers some, for gateway callers).
func agentMeta(cs *mcp.ClientSession) mcp.Meta {
	if res := cs.InitializeResult(); res == nil || res.ProtocolVersion < "2026-07-28" {
		return nil
	}
	return mcp.Meta{mcp.MetaKeyClientCapabilities: CapabilitiesMeta(nil)}
}

// errorResult reports a failure the model can act on.
func errorResult(err error) (tool.Result, error) {
	return tool.Result{Content: err.Error(), IsError: true}, nil
}

// supports reports whether the server announced a capability; servers
// that did not are skipped by listings instead of failing them.
func supports(s *server, has func(*mcp.ServerCapabilities) bool) bool {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil || sess.cs == nil {
		return false
	}
	res := sess.cs.InitializeResult()
	return res != nil && res.Capabilities != nil && has(res.Capabilities)
}

func listResources(ctx context.Context, m *Manager, raw json.RawMessage) (tool.Result, error) {
	a, err := parseArgs(raw)
	if err != nil {
		return errorResult(err)
	}
	servers, err := m.targets(a.Server)
	if err != nil {
		return errorResult(err)
	}
	var b strings.Builder
	for _, s := range servers {
		if a.Server == "" && !supports(s, func(c *mcp.ServerCapabilities) bool { return c.Resources != nil }) {
			continue
		}
		type listing struct {
			resources []*mcp.Resource
			templates []*mcp.ResourceTemplate
		}
		l, err := withSession(ctx, s, func(ctx context.Context, cs *mcp.ClientSession) (listing, error) {
			var l listing
			for r, err := range cs.Resources(ctx, nil) {
				if err != nil {
					return l, err
				}
				l.resources = append(l.resources, r)
			}
			for t, err := range cs.ResourceTemplates(ctx, nil) {
				if err != nil {
					break // templates are optional; many servers lack the method
				}
				l.templates = append(l.templates, t)
			}
			return l, nil
		})
		if err != nil {
			if a.Server != "" {
				return errorResult(err)
			}
			fmt.Fprintf(&b, "server %s: error: %v\n", s.name, err)
			continue
		}
		fmt.Fprintf(&b, "server %s: %d resources", s.name, len(l.resources))
		if len(l.templates) > 0 {
			fmt.Fprintf(&b, ", %d templates", len(l.templates))
		}
		b.WriteString("\n")
		for _, r := range l.resources {
			fmt.Fprintf(&b, "- %s", r.URI)
			if name := firstNonEmpty(r.Title, r.Name); name != "" {
				fmt.Fprintf(&b, " (%s)", name)
			}
			if r.MIMEType != "" {
				fmt.Fprintf(&b, " [%s]", r.MIMEType)
			}
			if r.Description != "" {
				fmt.Fprintf(&b, ": %s", oneLine(r.Description))
			}
			b.WriteString("\n")
		}
		for _, t := range l.templates {
			fmt.Fprintf(&b, "- template %s", t.URITemplate)
			if name := firstNonEmpty(t.Title, t.Name); name != "" {
				fmt.Fprintf(&b, " (%s)", name)
			}
			if t.Description != "" {
				fmt.Fprintf(&b, ": %s", oneLine(t.Description))
			}
			b.WriteString("\n")
		}
	}
	if b.Len() == 0 {
		return tool.Result{Content: "No connected MCP server offers resources."}, nil
	}
	return tool.Result{Content: strings.TrimRight(b.String(), "\n")}, nil
}

func readResource(ctx context.Context, m *Manager, raw json.RawMessage) (tool.Result, error) {
	a, err := parseArgs(raw)
	if err != nil {
		return errorResult(err)
	}
	if a.Server == "" || a.URI == "" {
		return errorResult(errors.New("server and uri are required"))
	}
	servers, err := m.targets(a.Server)
	if err != nil {
		return errorResult(err)
	}
	res, err := withSession(ctx, servers[0], func(ctx context.Context, cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: agentMeta(cs), URI: a.URI})
	})
	if err != nil {
		if errors.Is(err, tool.ErrDisconnected) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrResultTooLarge) {
			return tool.Result{}, err
		}
		return errorResult(err)
	}
	if res.NeedsInput() {
		return errorResult(fmt.Errorf("mcp server %q asks for input (elicitation, sampling or roots) to read %s, which an agent cannot give", a.Server, a.URI))
	}
	parts := make([]string, 0, len(res.Contents))
	for _, c := range res.Contents {
		parts = append(parts, renderResourceContents(c))
	}
	return tool.Result{Content: strings.Join(parts, "\n")}, nil
}

func listPrompts(ctx context.Context, m *Manager, raw json.RawMessage) (tool.Result, error) {
	a, err := parseArgs(raw)
	if err != nil {
		return errorResult(err)
	}
	servers, err := m.targets(a.Server)
	if err != nil {
		return errorResult(err)
	}
	var b strings.Builder
	for _, s := range servers {
		if a.Server == "" && !supports(s, func(c *mcp.ServerCapabilities) bool { return c.Prompts != nil }) {
			continue
		}
		prompts, err := withSession(ctx, s, func(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Prompt, error) {
			var out []*mcp.Prompt
			for p, err := range cs.Prompts(ctx, nil) {
				if err != nil {
					return nil, err
				}
				out = append(out, p)
			}
			return out, nil
		})
		if err != nil {
			if a.Server != "" {
				return errorResult(err)
			}
			fmt.Fprintf(&b, "server %s: error: %v\n", s.name, err)
			continue
		}
		fmt.Fprintf(&b, "server %s: %d prompts\n", s.name, len(prompts))
		for _, p := range prompts {
			fmt.Fprintf(&b, "- %s", p.Name)
			if p.Description != "" {
				fmt.Fprintf(&b, ": %s", oneLine(p.Description))
			}
			b.WriteString("\n")
			for _, arg := range p.Arguments {
				req := ""
				if arg.Required {
					req = ", required"
				}
				fmt.Fprintf(&b, "    argument %s%s", arg.Name, req)
				if arg.Description != "" {
					fmt.Fprintf(&b, ": %s", oneLine(arg.Description))
				}
				b.WriteString("\n")
			}
		}
	}
	if b.Len() == 0 {
		return tool.Result{Content: "No connected MCP server offers prompts."}, nil
	}
	return tool.Result{Content: strings.TrimRight(b.String(), "\n")}, nil
}

func getPrompt(ctx context.Context, m *Manager, raw json.RawMessage) (tool.Result, error) {
	a, err := parseArgs(raw)
	if err != nil {
		return errorResult(err)
	}
	if a.Server == "" || a.Name == "" {
		return errorResult(errors.New("server and name are required"))
	}
	servers, err := m.targets(a.Server)
	if err != nil {
		return errorResult(err)
	}
	res, err := withSession(ctx, servers[0], func(ctx context.Context, cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: agentMeta(cs), Name: a.Name, Arguments: a.Arguments})
	})
	if err != nil {
		if errors.Is(err, tool.ErrDisconnected) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrResultTooLarge) {
			return tool.Result{}, err
		}
		return errorResult(err)
	}
	if res.NeedsInput() {
		return errorResult(fmt.Errorf("mcp server %q asks for input (elicitation, sampling or roots) to fill in prompt %q, which an agent cannot give", a.Server, a.Name))
	}
	var b strings.Builder
	if res.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", res.Description)
	}
	for _, msg := range res.Messages {
		if msg == nil {
			continue
		}
		fmt.Fprintf(&b, "[%s]\n%s\n\n", msg.Role, renderContent(msg.Content))
	}
	return tool.Result{Content: strings.TrimRight(b.String(), "\n")}, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
