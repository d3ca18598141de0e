//lint:file-ignore SA1019 sampling, roots and logging (deprecated in 2026-07-28, alive in every earlier version) are relayed on purpose

package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Caller is the MCP client a tool call is made for, when that is not one
// of agentd's agents but a client of a gateway. What the upstream server
// asks of its client while the call runs (log messages, sampling,
// elicitation, roots) is handed to the caller instead of being refused.
//
// How it reaches the caller depends on the upstream link. On a 2026-07-28
// link everything is per request: the call carries the caller's
// capabilities, and input requests come back in the call's result
// (SEP-2322), to be answered by the Caller's functions and the call made
// again, or handed up whole (PassInput). On an initialize-era link the
// server sends requests of its own, unrelated to any call on the wire:
// they go to the caller of the one call in flight on that link, and are
// refused when there are several (which one asked is unknowable) or none.
// Log messages are matched the same way on both kinds of link, and always
// reach the daemon log too.
//
// An initialize-era link's capabilities are fixed when it connects,
// before any call: so that a caller can be asked at all, every link offers
// sampling and elicitation when it connects (a 2026-07-28 call then
// declares its own caller's, or none for an agent), and a request no
// caller can answer (a call of an agent, several calls at once) gets a
// JSON-RPC error saying why.
type Caller struct {
	// Capabilities are the caller's own; on a 2026-07-28 link they are sent
	// as the call's capabilities, so the server asks only for what the
	// caller can give. nil means none.
	Capabilities *mcp.ClientCapabilities
	// PassInput hands the input requests of a 2026-07-28 link to the
	// caller instead of answering them: the result that asks for input is
	// the call's result (see CallRecord), and the caller calls again with
	// InputResponses and RequestState set.
	PassInput bool
	// InputResponses and RequestState answer the input requests of an
	// earlier round of this call (PassInput).
	InputResponses mcp.InputResponseMap
	RequestState   string
	// Log receives the server's log messages about the call; nil drops
	// them. The context carries the values of the call's context.
	Log func(context.Context, *mcp.LoggingMessageParams)
	// CreateMessage, Elicit and ListRoots answer sampling/createMessage,
	// elicitation/create and roots/list; a nil one refuses its kind. The
	// context carries the values of the call's context and ends with the
	// call or the server's request.
	CreateMessage func(context.Context, *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	Elicit        func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error)
	ListRoots     func(context.Context, *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
}

// maxInputRounds bounds the rounds of input one call may ask for.
const maxInputRounds = 10

// Answer answers input requests (SEP-2322) one at a time with c's
// functions. A nil c, or a missing function, refuses with an error naming
// what was asked.
func (c *Caller) Answer(ctx context.Context, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	ids := make([]string, 0, len(reqs))
	for id := range reqs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make(mcp.InputResponseMap, len(reqs))
	for _, id := range ids {
		resp, err := c.answer(ctx, reqs[id])
		if err != nil {
			return nil, fmt.Errorf("input request %q: %w", id, err)
		}
		out[id] = resp
	}
	return out, nil
}

func (c *Caller) answer(ctx context.Context, req mcp.InputRequest) (mcp.InputResponse, error) {
	switch p := req.(type) {
	case *mcp.ElicitParams:
		if c == nil || c.Elicit == nil {
			return nil, refusal("elicitation/create", c)
		}
		return c.Elicit(ctx, p)
	case *mcp.CreateMessageParams:
		if c == nil || c.CreateMessage == nil {
			return nil, refusal("sampling/createMessage", c)
		}
		return c.CreateMessage(ctx, withTools(p))
	case *mcp.CreateMessageWithToolsParams:
		if c == nil || c.CreateMessage == nil {
			return nil, refusal("sampling/createMessage", c)
		}
		return c.CreateMessage(ctx, p)
	case *mcp.ListRootsParams:
		if c == nil || c.ListRoots == nil {
			return nil, refusal("roots/list", c)
		}
		return c.ListRoots(ctx, p)
	}
	return nil, fmt.Errorf("unknown kind of input request %T", req)
}

// refusal is the error a request no caller can answer gets: invalid
// params, as the SDK answers for a capability it lacks (method not found
// would lose the message: the SDK rewrites those).
func refusal(method string, c *Caller) error {
	why := "the calling client does not offer it"
	switch {
	case c == nil:
		why = "the call was made by an agentd agent, which cannot answer it"
	case c.PassInput:
		why = "the calling client speaks 2026-07-28, where it is asked for input in results, not by requests of the server's own"
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + " is not supported by the calling client: " + why}
}

// withTools is p in the form that also carries tools; a message's one
// content block becomes a list of one.
func withTools(p *mcp.CreateMessageParams) *mcp.CreateMessageWithToolsParams {
	msgs := make([]*mcp.SamplingMessageV2, 0, len(p.Messages))
	for _, m := range p.Messages {
		if m == nil {
			continue
		}
		var content []mcp.Content
		if m.Content != nil {
			content = []mcp.Content{m.Content}
		}
		msgs = append(msgs, &mcp.SamplingMessageV2{Role: m.Role, Content: content})
	}
	return &mcp.CreateMessageWithToolsParams{
		Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Messages: msgs,
		Metadata: p.Metadata, ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences,
		SystemPrompt: p.SystemPrompt, Temperature: p.Temperature,
	}
}

// CapabilitiesMeta is c as a 2026-07-28 request carries it in
// _meta["io.modelcontextprotocol/clientCapabilities"], limited to what a
// Caller can relay: sampling, elicitation and roots. (The SDK's own JSON
// form of ClientCapabilities always announces roots.)
func CapabilitiesMeta(c *mcp.ClientCapabilities) map[string]any {
	m := map[string]any{}
	if c == nil {
		return m
	}
	if c.Sampling != nil {
		m["sampling"] = c.Sampling
	}
	if c.Elicitation != nil {
		m["elicitation"] = c.Elicitation
	}
	switch {
	case c.RootsV2 != nil:
		m["roots"] = c.RootsV2
	case c.Roots.ListChanged:
		m["roots"] = &mcp.RootCapabilities{ListChanged: true}
	}
	return m
}

// linkCapabilities are what every link offers when it connects (see
// Caller): calls made for nobody are refused one by one instead.
func linkCapabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{
		Sampling:    &mcp.SamplingCapabilities{},
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
	}
}

// inflight is a tool call in progress on a link: it receives progress,
// and what the server asks of its caller.
type inflight struct {
	progress func(message string, progress, total float64)
	d        time.Duration
	cs       *mcp.ClientSession
	caller   *Caller // nil for an agent's call
	// relay runs what the server asks of the caller under the call's
	// context, in a goroutine the call owns, and reports false once the
	// call has returned: the SDK hands a server's own requests and
	// notifications to handlers under the link's context, and the caller
	// must be reached under the call's (its values say which downstream
	// request this is). nil for an agent's call, which has no caller to
	// reach.
	relay func(f func(callCtx context.Context)) bool
	// over is closed when the call has returned.
	over chan struct{}

	mu   sync.Mutex
	idle *time.Timer
	held int // requests of the server being answered; the idle clock stops meanwhile
}

// startRelays readies the relays of a call made for a caller under ctx,
// the call's context; the returned function ends them and waits. Most
// calls relay nothing, so nothing runs until the server first asks: a
// goroutine per call, started and woken for nothing, cost a gateway call
// at c=1 about 1.5% of agentd's CPU, and a scheduler wake-up.
func (in *inflight) startRelays(ctx context.Context) (stop func()) {
	in.over = make(chan struct{})
	if in.caller == nil {
		return func() { close(in.over) }
	}
	var (
		mu     sync.Mutex
		ended  bool
		rctx   context.Context
		cancel context.CancelFunc
		wg     sync.WaitGroup
	)
	in.relay = func(f func(context.Context)) bool {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			return false
		}
		if rctx == nil {
			rctx, cancel = context.WithCancel(ctx)
		}
		wg.Go(func() { f(rctx) })
		return true
	}
	return func() {
		mu.Lock()
		ended = true
		mu.Unlock()
		close(in.over)
		// Relays still running end with the call.
		if cancel != nil {
			cancel()
		}
		wg.Wait()
	}
}

// errCallOver refuses what the server asks once the call has returned.
var errCallOver = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the tool call this request belongs to is over"}

// underCall runs f under the call's context, in a goroutine of the call's,
// and waits for it; ctx is the server's request's (or notification's).
func (in *inflight) underCall(ctx context.Context, f func(callCtx context.Context)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan struct{})
	if !in.relay(func(callCtx context.Context) {
		defer close(done)
		f(callCtx)
	}) {
		return errCallOver
	}
	<-done
	return nil
}

// touch restarts the idle clock (progress arrived), unless the server is
// waiting for the caller.
func (in *inflight) touch() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.held == 0 {
		in.idle.Reset(in.d)
	}
}

// hold stops the idle clock while the caller answers: the server is not
// idle but waiting, maybe for a person. The hard cap still applies.
func (in *inflight) hold() (release func()) {
	in.mu.Lock()
	in.held++
	in.idle.Stop()
	in.mu.Unlock()
	return func() {
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.held--; in.held == 0 {
			in.idle.Reset(in.d)
		}
	}
}

// soleCall returns the one tool call in flight on cs, or an error saying
// why a server's request cannot be given to a caller.
func (s *server) soleCall(cs *mcp.ClientSession, method string) (*inflight, error) {
	var (
		found *inflight
		n     int
	)
	s.calls.Range(func(_, v any) bool {
		if in := v.(*inflight); in.cs == cs {
			found = in
			n++
		}
		return n < 2
	})
	switch {
	case n == 0:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + " is not supported outside a tool call: agentd relays it to the client that made the call"}
	case n > 1:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + " cannot be relayed: several tool calls are in flight on this connection and the request does not say which one it belongs to"}
	}
	return found, nil
}

// relayed runs f, the answer to a request the server sent on an
// initialize-era link, for the caller of the one call in flight, under a
// context with the call's values that ends with either the call or the
// server's request (ctx).
func relayed[R any](ctx context.Context, s *server, cs *mcp.ClientSession, method string, f func(context.Context, *Caller) (R, error)) (R, error) {
	var zero R
	in, err := s.soleCall(cs, method)
	if err != nil {
		return zero, err
	}
	if in.caller == nil {
		// An agent's call: f refuses without needing the call's context.
		return f(ctx, nil)
	}
	var res R
	rerr := in.underCall(ctx, func(callCtx context.Context) {
		rctx, cancel := context.WithCancel(callCtx)
		defer cancel()
		stop := context.AfterFunc(ctx, cancel)
		defer stop()
		defer in.hold()()
		res, err = f(rctx, in.caller)
	})
	if rerr != nil {
		return zero, rerr
	}
	return res, err
}

// createMessage answers a server's sampling/createMessage request.
func (s *server) createMessage(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	return relayed(ctx, s, req.Session, "sampling/createMessage", func(ctx context.Context, c *Caller) (*mcp.CreateMessageWithToolsResult, error) {
		if c == nil || c.CreateMessage == nil {
			return nil, refusal("sampling/createMessage", c)
		}
		return c.CreateMessage(ctx, req.Params)
	})
}

// relayElicitation answers a server's elicitation/create request. It is a
// receiving middleware rather than the SDK's ElicitationHandler because
// the SDK checks the requested schema first, and refuses forms newer than
// it (SEP-1330's titled multi-select): a relay leaves judging the form to
// the client that shows it.
func (s *server) relayElicitation(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.ElicitRequest)
		if method != "elicitation/create" || !ok || r.Params == nil {
			return next(ctx, method, req)
		}
		res, err := relayed(ctx, s, r.Session, method, func(ctx context.Context, c *Caller) (*mcp.ElicitResult, error) {
			if c == nil || c.Elicit == nil {
				return nil, refusal(method, c)
			}
			return c.Elicit(ctx, r.Params)
		})
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// relayRoots answers a server's roots/list request for the caller of the
// one call in flight when that caller can answer it; otherwise the SDK
// answers with the link's own roots (none).
func (s *server) relayRoots(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		r, ok := req.(*mcp.ListRootsRequest)
		if method != "roots/list" || !ok {
			return next(ctx, method, req)
		}
		in, err := s.soleCall(r.Session, method)
		if err != nil || in.caller == nil || in.caller.ListRoots == nil {
			return next(ctx, method, req)
		}
		params := r.Params
		if params == nil {
			params = &mcp.ListRootsParams{}
		}
		res, err := relayed(ctx, s, r.Session, method, func(ctx context.Context, c *Caller) (*mcp.ListRootsResult, error) {
			return c.ListRoots(ctx, params)
		})
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// callerLog hands a server's log message to the caller of the one call in
// flight on cs, if any: with several, which one it is about is unknowable,
// and another client's call is no place for it.
func (s *server) callerLog(cs *mcp.ClientSession, p *mcp.LoggingMessageParams) {
	in, err := s.soleCall(cs, "notifications/message")
	if err != nil || in.caller == nil || in.caller.Log == nil || p == nil {
		return
	}
	_ = in.underCall(context.Background(), func(callCtx context.Context) { in.caller.Log(callCtx, p) })
}

// inputRounds runs the multi round-trip of SEP-2322 on a 2026-07-28
// link: while the result asks for input, the caller answers and the call
// is made again with the answers. A caller that answers input itself
// (PassInput) gets the result that asks. errInput wraps a failure to
// answer, which fails the call as a tool error rather than a broken link.
func (s *server) inputRounds(ctx context.Context, sess *session, in *inflight, params *mcp.CallToolParams, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	for round := 1; res != nil && res.NeedsInput(); round++ {
		if in.caller != nil && in.caller.PassInput {
			return res, nil
		}
		if round > maxInputRounds {
			return nil, &inputError{fmt.Errorf("the server still asks for input after %d rounds", maxInputRounds)}
		}
		release := in.hold()
		answers, err := in.caller.Answer(ctx, res.InputRequests)
		release()
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &inputError{err}
		}
		p := *params
		p.InputResponses, p.RequestState = answers, res.RequestState
		if res, err = sess.cs.CallTool(ctx, &p); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// inputError is a failure to give the input a server asked for.
type inputError struct{ err error }

func (e *inputError) Error() string {
	return "the server asked for input that could not be given: " + e.err.Error()
}
func (e *inputError) Unwrap() error { return e.err }

func isInputError(err error) bool {
	var e *inputError
	return errors.As(err, &e)
}
