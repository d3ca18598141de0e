package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// flights tracks the requests in flight on a server's connections and
// whether their client cancelled them, so that no response is sent for a
// cancelled request: the MCP spec says the receiver of
// notifications/cancelled should not answer, and clients (the TypeScript
// SDK among them) report an answer to a request they forgot as an error.
//
// The go-sdk writes a response for every request whose handler returns,
// cancelled or not, and its HTTP transport has no hook between the two, so
// the answer is dropped where its bytes leave agentd: by stdioConn on
// stdio, and by answerFilter on the POST stream of a session's request.
// Progress notifications about a cancelled request are dropped too (a
// handler may send one before it notices the cancellation). Every kind of
// request benefits: agent tools, bridged A2A agents, registry and gateway
// tools alike.
type flights struct {
	mu sync.Mutex
	m  map[flightKey]flight
}

// flightKey names a request: request ids are unique per session (stdio
// has one, named "").
type flightKey struct {
	session string
	id      jsonrpc.ID
}

// flight is a request in flight.
type flight struct {
	// cancelled: its client cancelled it, so its answer is not sent.
	cancelled bool
	// cancel ends the call's context: set for a call on the session
	// fast path (fastsession.go), which the SDK does not know of; the
	// SDK cancels its own calls when it reads the notification.
	cancel context.CancelFunc
}

// start registers k, a request the SDK serves, and reports false when a
// request of that id is in flight already (the SDK refuses the second;
// the first keeps its entry), and whether that one is on the fast path.
func (f *flights) start(k flightKey) (ok, fast bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, dup := f.m[k]; dup {
		return false, fl.cancel != nil
	}
	if f.m == nil {
		f.m = map[flightKey]flight{}
	}
	f.m[k] = flight{}
	return true, false
}

// startFast registers k, a call the session fast path serves with its
// context's cancel, and reports false when a request of that id is in
// flight already, on either path.
func (f *flights) startFast(k flightKey, cancel context.CancelFunc) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, dup := f.m[k]; dup {
		return false
	}
	if f.m == nil {
		f.m = map[flightKey]flight{}
	}
	f.m[k] = flight{cancel: cancel}
	return true
}

// cancel marks k cancelled if it is in flight (and ends its context when
// it is on the fast path); a cancellation of a request already answered
// (or never seen) is ignored, as the spec says.
func (f *flights) cancel(k flightKey) {
	f.mu.Lock()
	fl, ok := f.m[k]
	if ok {
		fl.cancelled = true
		f.m[k] = fl
	}
	f.mu.Unlock()
	if ok && fl.cancel != nil {
		fl.cancel()
	}
}

// running reports whether k is in flight and not cancelled yet.
func (f *flights) running(k flightKey) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.m[k]
	return ok && !fl.cancelled
}

func (f *flights) cancelled(k flightKey) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.m[k].cancelled
}

// finish forgets k and reports whether it was cancelled.
func (f *flights) finish(k flightKey) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.m[k].cancelled
	delete(f.m, k)
	return c
}

// cancelledRequest returns the request id a notifications/cancelled names
// in its params.
func cancelledRequest(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	return parseID(p.RequestID)
}

// progressToken returns the progress token in a request's params (in
// _meta) or a progress notification's params, in the form of an id
// (tokens are strings or numbers too).
func progressToken(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		Token json.RawMessage `json:"progressToken"`
		Meta  struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	if len(p.Token) == 0 {
		p.Token = p.Meta.Token
	}
	return parseID(p.Token)
}

// parseID turns a raw JSON-RPC id into the SDK's form (as the SDK's own
// decoder does: numbers are integers), so raw and decoded ids compare.
func parseID(raw json.RawMessage) (jsonrpc.ID, bool) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil && id.IsValid()
}

// answerFilter is the ResponseWriter of the POST that carries one request
// of a session. The stream carries that request's notifications and
// requests (progress, elicitation) and then its response; once the client
// has cancelled the request, nothing more is written, and the stream ends
// without the response.
type answerFilter struct {
	http.ResponseWriter
	flights *flights
	key     flightKey
}

// Write receives one whole message per call (the SDK formats each SSE
// event in a buffer and writes it at once), so a message is dropped whole.
func (a *answerFilter) Write(b []byte) (int, error) {
	if a.flights.cancelled(a.key) {
		return len(b), nil
	}
	return a.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush the stream.
func (a *answerFilter) Unwrap() http.ResponseWriter { return a.ResponseWriter }
