package mcpclient

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BridgeRequest runs a request other than a tool call that may need the
// client's input (prompts/get, resources/read) for a 2026-07-28 caller
// with caps on server's initialize-era link, as a bridged tool call runs
// (see parked.go): the upstream asks by requests of its own while the
// request runs, and the caller gets them as the method's input-required
// result (asInput) and answers them with its next request of the same
// method, carrying answers and state. do makes the request on the session
// it is given: one of its own over HTTP, which declares exactly the
// caller's capabilities; the link's over stdio (one process, one link).
func (m *Manager) BridgeRequest(ctx context.Context, server, method string, caps *mcp.ClientCapabilities, answers mcp.InputResponseMap, state string,
	do func(ctx context.Context, cs *mcp.ClientSession) (mcp.Result, error),
	asInput func(reqs mcp.InputRequestMap, state string) mcp.Result) (mcp.Result, error) {
	s := m.server(server)
	if s == nil {
		return nil, fmt.Errorf("%s: no MCP server %q", method, server)
	}
	if state != "" {
		p, _, err := s.parking.resume(s.name, method, state)
		if err != nil {
			return nil, err
		}
		if p == nil {
			// A state of the upstream's own: an initialize-era
			// server asks by requests, never in results.
			return nil, errBadState("does not name a request of this gateway")
		}
		p.attach(nil, nil)
		p.answer(answers)
		return s.parking.next(ctx, s.name, p)
	}
	sess, err := s.awaitSession(ctx)
	if err != nil {
		return nil, err
	}
	p, err := s.parking.park(caps, method, func(pctx context.Context, bc *Caller, _ func(string, float64, float64)) (mcp.Result, error) {
		target := sess
		if s.cfg.Transport.Type != TransportStdio {
			own, err := s.callSession(pctx, caps)
			if err != nil {
				return nil, err
			}
			defer own.close()
			target = own
		}
		return s.requestForCaller(pctx, target, bc, do)
	}, asInput, nil, nil)
	if err != nil {
		return nil, err
	}
	// Until it asks for input, the request is the client's: a client
	// that gives up on it cancels it.
	stop := context.AfterFunc(ctx, func() {
		if !p.asked() {
			p.cancel()
		}
	})
	defer stop()
	return s.parking.next(ctx, s.name, p)
}

// requestForCaller makes one request on sess for caller, with the idle
// timeout and the hard cap of a tool call, as the one call in flight on
// its session: what the upstream asks meanwhile reaches caller (soleCall).
func (s *server) requestForCaller(ctx context.Context, sess *session, caller *Caller, do func(context.Context, *mcp.ClientSession) (mcp.Result, error)) (mcp.Result, error) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(s.idle, func() { cancel(errIdleTimeout) })
	defer idle.Stop()
	hard := time.AfterFunc(s.hard, func() { cancel(errHardCap) })
	defer hard.Stop()
	token := s.m.nextToken()
	in := &inflight{idle: idle, d: s.idle, cs: sess.cs, caller: caller}
	defer in.startRelays(cctx)()
	s.calls.Store(token, in)
	defer s.calls.Delete(token)
	res, err := do(cctx, sess.cs)
	if err != nil {
		if cause := context.Cause(cctx); cause == errIdleTimeout || cause == errHardCap {
			err = &timeoutError{cause: cause, err: err}
		}
	}
	return res, err
}
