//lint:file-ignore SA1019 sampling and roots (deprecated in 2026-07-28, alive in every earlier version) are relayed on purpose

package mcpclient

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 client of a gateway is asked for input in results and
// answers in its next request (SEP-2322); an initialize-era upstream asks
// by requests of its own while the call runs. A parked call joins the
// two: the upstream call runs on between the client's requests; what the
// upstream asks is handed to the client as an input-required result whose
// request state names the parked call; the client's next request answers
// the upstream's requests and waits for what the upstream does next.
//
// The request state is signed (HMAC with a key made at start), so a
// tampered or foreign state is refused; a parked call lives in the memory
// of the daemon that started it, for parkTTL between rounds.

const (
	// parkTTL is how long a parked call waits for the client's next round.
	parkTTL = 10 * time.Minute
	// askSettle is how long the requests the upstream sends together (one
	// round of its own, often concurrent) are gathered into one result.
	askSettle = 100 * time.Millisecond
	// maxParked bounds the parked calls of one server.
	maxParked = 256
	// workerIdle is how long a worker that ran a parked call waits for
	// the next one before it ends (see run).
	workerIdle = time.Second
)

// parking holds a server's parked calls.
type parking struct {
	key []byte

	mu    sync.Mutex
	calls map[string]*parkedCall
	wg    sync.WaitGroup

	idle      chan func()   // unbuffered: workers waiting for a call (run)
	workers   atomic.Int32  // running workers, for tests and nothing else
	closing   chan struct{} // closed by close: idle workers end
	closeOnce sync.Once
}

func newParking() *parking {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &parking{key: key, calls: map[string]*parkedCall{}, idle: make(chan func()), closing: make(chan struct{})}
}

// run runs a parked call on a worker: one waiting since its last call, or
// a new one. A parked call's goroutine grows its stack to the depth of an
// upstream call; a goroutine per call paid that copying and a goroutine
// start on every call (~4.5% of agentd's CPU for a 2026-07-28 gateway
// call at c=16, against ~1% of a 2025-11-25 session's call, which runs on
// its request's goroutine). A worker keeps its stack between calls and
// ends after workerIdle without one, or when the server closes.
func (pk *parking) run(f func()) {
	select {
	case pk.idle <- f:
		return
	default:
	}
	pk.workers.Add(1)
	pk.wg.Go(func() {
		defer pk.workers.Add(-1)
		timer := time.NewTimer(workerIdle)
		defer timer.Stop()
		for {
			f()
			timer.Reset(workerIdle)
			select {
			case f = <-pk.idle:
			case <-timer.C:
				return
			case <-pk.closing:
				return
			}
		}
	})
}

// parkedCall is one upstream call waiting between rounds.
type parkedCall struct {
	id     string
	method string // tools/call, prompts/get, resources/read: a state resumes only its own kind
	caps   *mcp.ClientCapabilities
	// asInput is the method's result that asks the client for input.
	asInput func(reqs mcp.InputRequestMap, state string) mcp.Result
	cancel  context.CancelFunc
	expiry  *time.Timer

	changed chan struct{} // cap 1: an ask arrived, or the call ended
	done    chan struct{} // closed when the call ended; res and err are set
	res     mcp.Result
	err     error

	mu    sync.Mutex
	round int
	seq   int
	asks  map[string]*ask // asked and not answered, by key
	busy  bool            // a client request is attached
	// progress and log report to the attached request, if any.
	progress func(message string, progress, total float64)
	log      func(context.Context, *mcp.LoggingMessageParams)
}

// attach makes the request that continues the call the one its progress
// and log messages reach.
func (p *parkedCall) attach(progress func(string, float64, float64), log func(context.Context, *mcp.LoggingMessageParams)) {
	p.mu.Lock()
	p.progress, p.log = progress, log
	p.mu.Unlock()
}

func (p *parkedCall) reportLog(ctx context.Context, params *mcp.LoggingMessageParams) {
	p.mu.Lock()
	f := p.log
	p.mu.Unlock()
	if f != nil {
		f(ctx, params)
	}
}

func (p *parkedCall) reportProgress(message string, progress, total float64) {
	p.mu.Lock()
	f := p.progress
	p.mu.Unlock()
	if f != nil {
		f(message, progress, total)
	}
}

// asked reports whether the call has asked its client for input: from
// then on it outlives the request that started it.
func (p *parkedCall) asked() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.round > 0
}

// ask is one request of the upstream waiting for the client's answer.
type ask struct {
	req    mcp.InputRequest
	answer chan mcp.InputResponse // cap 1
}

// park starts call (the upstream request of method, made with the Caller
// it is given) as a parked call for a client with caps; asInput is the
// method's result asking the client for input.
func (pk *parking) park(caps *mcp.ClientCapabilities, method string, call func(ctx context.Context, c *Caller, progress func(string, float64, float64)) (mcp.Result, error),
	asInput func(mcp.InputRequestMap, string) mcp.Result,
	progress func(string, float64, float64), log func(context.Context, *mcp.LoggingMessageParams)) (*parkedCall, error) {
	idb := make([]byte, 16)
	_, _ = rand.Read(idb)
	ctx, cancel := context.WithCancel(context.Background())
	p := &parkedCall{
		id: base64.RawURLEncoding.EncodeToString(idb), method: method, caps: caps, asInput: asInput, cancel: cancel,
		changed: make(chan struct{}, 1), done: make(chan struct{}), asks: map[string]*ask{}, busy: true,
		progress: progress, log: log,
	}
	pk.mu.Lock()
	if len(pk.calls) >= maxParked {
		pk.mu.Unlock()
		cancel()
		return nil, errors.New("too many calls are waiting for their clients' input on this server")
	}
	pk.calls[p.id] = p
	pk.mu.Unlock()
	// The call outlives the client's request that started it, so it is
	// cancelled only by expiry, by its end, or by the server's removal.
	p.expiry = time.AfterFunc(parkTTL, cancel)
	pk.run(func() {
		res, err := call(ctx, p.caller(), p.reportProgress)
		p.expiry.Stop()
		cancel()
		// Forgotten before it is seen to end: a state of an ended call
		// names nothing.
		pk.mu.Lock()
		delete(pk.calls, p.id)
		pk.mu.Unlock()
		p.res, p.err = res, err
		close(p.done)
		p.signal()
	})
	return p, nil
}

// close cancels every parked call and waits for them and the workers.
func (pk *parking) close() {
	pk.mu.Lock()
	for _, p := range pk.calls {
		p.cancel()
	}
	pk.mu.Unlock()
	pk.closeOnce.Do(func() { close(pk.closing) })
	pk.wg.Wait()
}

func (p *parkedCall) signal() {
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// caller is what the upstream's requests reach while the call runs: each
// becomes an ask the client sees in its next result. Kinds the client did
// not declare are answered at once the way such a client would: an
// elicitation is declined, roots are none, sampling is refused.
func (p *parkedCall) caller() *Caller {
	caps := p.caps
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	return &Caller{
		Capabilities: caps,
		Log:          p.reportLog,
		Elicit: func(ctx context.Context, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			if caps.Elicitation == nil {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			r, err := p.ask(ctx, "elicitation", params)
			if err != nil {
				return nil, err
			}
			if er, ok := r.(*mcp.ElicitResult); ok {
				return er, nil
			}
			return nil, answerKind("elicitation/create", r)
		},
		CreateMessage: func(ctx context.Context, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
			if caps.Sampling == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "sampling/createMessage is not supported by the calling client: it did not declare sampling"}
			}
			r, err := p.ask(ctx, "sampling", params)
			if err != nil {
				return nil, err
			}
			switch sr := r.(type) {
			case *mcp.CreateMessageWithToolsResult:
				return sr, nil
			case *mcp.CreateMessageResult:
				res := &mcp.CreateMessageWithToolsResult{Meta: sr.Meta, Model: sr.Model, Role: sr.Role, StopReason: sr.StopReason}
				if sr.Content != nil {
					res.Content = []mcp.Content{sr.Content}
				}
				return res, nil
			}
			return nil, answerKind("sampling/createMessage", r)
		},
		ListRoots: func(ctx context.Context, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
			if caps.RootsV2 == nil && !caps.Roots.ListChanged {
				return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
			}
			r, err := p.ask(ctx, "roots", params)
			if err != nil {
				return nil, err
			}
			if rr, ok := r.(*mcp.ListRootsResult); ok {
				return rr, nil
			}
			return nil, answerKind("roots/list", r)
		},
	}
}

func answerKind(method string, r mcp.InputResponse) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("the calling client answered %s with a %T", method, r)}
}

// ask hands req to the client and waits for its answer.
func (p *parkedCall) ask(ctx context.Context, kind string, req mcp.InputRequest) (mcp.InputResponse, error) {
	a := &ask{req: req, answer: make(chan mcp.InputResponse, 1)}
	p.mu.Lock()
	p.seq++
	key := kind + "-" + strconv.Itoa(p.seq)
	p.asks[key] = a
	p.mu.Unlock()
	p.signal()
	select {
	case r := <-a.answer:
		return r, nil
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.asks, key)
		p.mu.Unlock()
		return nil, ctx.Err()
	}
}

// A request state is "p.ID.ROUND.MAC" for a parked call's round, or
// "u.STATE.MAC" for the state of the server's own input-required result
// (STATE base64url), MAC binding it to the server.

// seal is the request state of round of p, signed for server.
func (pk *parking) seal(server string, p *parkedCall, round int) string {
	body := "p." + p.id + "." + strconv.Itoa(round)
	return body + "." + pk.mac(server, body)
}

// sealUpstream is the request state carrying the server's own.
func (pk *parking) sealUpstream(server, state string) string {
	body := "u." + base64.RawURLEncoding.EncodeToString([]byte(state))
	return body + "." + pk.mac(server, body)
}

// issued reports whether state is one of pk's for server.
func (pk *parking) issued(server, state string) bool {
	i := strings.LastIndexByte(state, '.')
	return i >= 0 && hmac.Equal([]byte(state[i+1:]), []byte(pk.mac(server, state[:i])))
}

func (pk *parking) mac(server, body string) string {
	h := hmac.New(sha256.New, pk.key)
	h.Write([]byte(server))
	h.Write([]byte{0})
	h.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// errBadState is a request state this daemon did not issue, or no longer
// knows: a JSON-RPC error, as SEP-2322 wants for state that fails its
// integrity check.
func errBadState(why string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "requestState " + why}
}

// resume checks a request state issued for server and returns the parked
// call of method it names (attached to the caller's request: the call's
// latest round), or the server's own state it carries.
func (pk *parking) resume(server, method, state string) (*parkedCall, string, error) {
	if !pk.issued(server, state) {
		return nil, "", errBadState("fails its integrity check (tampered, or not issued by this agentd)")
	}
	body := state[:strings.LastIndexByte(state, '.')]
	kind, rest, _ := strings.Cut(body, ".")
	if kind == "u" {
		up, err := base64.RawURLEncoding.DecodeString(rest)
		if err != nil {
			return nil, "", errBadState("is malformed")
		}
		return nil, string(up), nil
	}
	id, roundText, _ := strings.Cut(rest, ".")
	round, _ := strconv.Atoi(roundText)
	pk.mu.Lock()
	p := pk.calls[id]
	pk.mu.Unlock()
	if p == nil {
		return nil, "", errBadState("names a call that has ended or expired (or agentd restarted); make the request again")
	}
	if p.method != method {
		return nil, "", errBadState("was issued for " + p.method + ", not " + method)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy {
		return nil, "", errBadState("names a call that another request is answering")
	}
	if round != p.round {
		return nil, "", errBadState("is from an earlier round of the call")
	}
	p.busy = true
	return p, "", nil
}

// answer hands the client's responses to the asks they answer; responses
// to nothing asked are ignored.
func (p *parkedCall) answer(responses mcp.InputResponseMap) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, r := range responses {
		if a, ok := p.asks[key]; ok && r != nil {
			a.answer <- r
			delete(p.asks, key)
		}
	}
}

// next waits, for the client's request ctx, until the call ends or asks
// for input, and returns the result the client gets: the call's own, or
// one asking for the open asks with the next round's request state.
func (pk *parking) next(ctx context.Context, server string, p *parkedCall) (mcp.Result, error) {
	defer func() {
		p.mu.Lock()
		p.busy, p.progress, p.log = false, nil, nil
		p.mu.Unlock()
	}()
	var settle <-chan time.Time
	p.mu.Lock()
	if len(p.asks) > 0 {
		// Asks the client left unanswered, or made while no request
		// was attached.
		settle = time.After(askSettle)
	}
	p.mu.Unlock()
	for {
		select {
		case <-p.done:
			return p.res, p.err
		case <-ctx.Done():
			// The client gave up on this round; the call waits for the
			// next one (the same state) until it expires.
			return nil, ctx.Err()
		case <-p.changed:
			if settle == nil {
				p.mu.Lock()
				n := len(p.asks)
				p.mu.Unlock()
				if n > 0 {
					settle = time.After(askSettle)
				}
			}
			continue
		case <-settle:
		}
		p.mu.Lock()
		reqs := make(mcp.InputRequestMap, len(p.asks))
		for _, key := range slices.Sorted(maps.Keys(p.asks)) {
			reqs[key] = p.asks[key].req
		}
		p.round++
		round := p.round
		p.mu.Unlock()
		if len(reqs) == 0 {
			settle = nil
			continue
		}
		p.expiry.Reset(parkTTL)
		return p.asInput(reqs, pk.seal(server, p, round)), nil
	}
}
