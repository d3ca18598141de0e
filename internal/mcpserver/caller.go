//lint:file-ignore SA1019 sampling, roots and logging (deprecated in 2026-07-28, alive in every earlier version) are relayed on purpose

package mcpserver

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/mcpclient"
)

// A gateway is transparent for what the upstream asks of its client while
// a call runs, too: its log messages, and its sampling, elicitation and
// roots requests, reach the client that made the call, through the MCP
// client manager (mcpclient.Caller). How depends on the client's era:
//
//   - An initialize-era session can be sent requests: the gateway sends
//     the upstream's to it (ServerSession.CreateMessageWithTools, Elicit,
//     ListRoots) on the stream of the call they belong to, and only for
//     the capabilities the client declared; the others are refused.
//   - A 2026-07-28 client cannot be sent requests, but asks for input in
//     results (SEP-2322): the upstream's input requests are its result,
//     and the client's next call, with the answers and the upstream's
//     request state, goes to the upstream unchanged.
//
// Log messages go to the call's stream at the level the client chose
// (its session's, or the request's under 2026-07-28).

// gatewayCaller is the mcpclient.Caller of a gateway's tools/call r: its
// session, the client's capabilities, and its answers to earlier input
// requests.
func gatewayCaller(r *mcp.CallToolRequest) *mcpclient.Caller {
	var answers mcp.InputResponseMap
	var state string
	if r.Params != nil {
		answers, state = r.Params.InputResponses, r.Params.RequestState
	}
	if r.Session == nil && r.ProtocolVersion() >= statelessVersion {
		// A stateless call on the fast path (fastcall.go): no session of
		// the SDK's, and none needed, since the server sends no requests
		// of its own under 2026-07-28.
		return &mcpclient.Caller{Capabilities: r.ClientCapabilities(), PassInput: true, InputResponses: answers, RequestState: state}
	}
	return newCaller(r.Session, r.ClientCapabilities(), answers, state)
}

// newCaller is the Caller of one request of ss, a client with caps that
// answers earlier input requests with answers and state.
func newCaller(ss *mcp.ServerSession, caps *mcp.ClientCapabilities, answers mcp.InputResponseMap, state string) *mcpclient.Caller {
	c := &mcpclient.Caller{Capabilities: caps}
	if ss == nil {
		return c
	}
	c.Log = func(ctx context.Context, p *mcp.LoggingMessageParams) { _ = ss.Log(ctx, p) }
	if sessionless(ss) {
		c.PassInput = true
		c.InputResponses, c.RequestState = answers, state
		return c
	}
	if caps == nil {
		return c
	}
	if caps.Sampling != nil {
		c.CreateMessage = ss.CreateMessageWithTools
	}
	if caps.Elicitation != nil {
		c.Elicit = ss.Elicit
	}
	if caps.RootsV2 != nil {
		c.ListRoots = ss.ListRoots
	}
	return c
}

// sessionless reports whether ss speaks 2026-07-28, where the server sends
// no requests of its own.
func sessionless(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= statelessVersion
}

// modernLink reports whether the link to an upstream speaks 2026-07-28,
// where each request carries the client's capabilities.
func modernLink(cs *mcp.ClientSession) bool {
	res := cs.InitializeResult()
	return res != nil && res.ProtocolVersion >= statelessVersion
}

// forwardMeta is the _meta of a forwarded request that may ask for input:
// on a 2026-07-28 link, the downstream client's capabilities, so the
// upstream asks only for what that client can give.
func forwardMeta(cs *mcp.ClientSession, caps *mcp.ClientCapabilities) mcp.Meta {
	if !modernLink(cs) {
		return nil
	}
	return mcp.Meta{mcp.MetaKeyClientCapabilities: mcpclient.CapabilitiesMeta(caps)}
}

// maxForwardRounds bounds the rounds of input one forwarded request may
// ask an initialize-era client for.
const maxForwardRounds = 10

// withInput runs a forwarded request that may ask for input (prompts/get,
// resources/read). A 2026-07-28 client gets the upstream's input requests
// as the result and answers them in its next request; for a session the
// gateway asks the client itself and makes the request again.
func withInput[R interface{ NeedsInput() bool }](ctx context.Context, ss *mcp.ServerSession, caps *mcp.ClientCapabilities,
	call func(answers mcp.InputResponseMap, state string) (R, error),
	asks func(R) (mcp.InputRequestMap, string),
	answers mcp.InputResponseMap, state string) (R, error) {
	res, err := call(answers, state)
	if err != nil || ss == nil || sessionless(ss) {
		return res, err
	}
	c := newCaller(ss, caps, nil, "")
	for round := 1; res.NeedsInput(); round++ {
		var zero R
		if round > maxForwardRounds {
			return zero, wireError(errors.New("the upstream server still asks for input after several rounds"))
		}
		reqs, st := asks(res)
		got, err := c.Answer(ctx, reqs)
		if err != nil {
			return zero, wireError(err)
		}
		if res, err = call(got, st); err != nil {
			return res, err
		}
	}
	return res, nil
}
