package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/jsonrpcwire"
)

// serveSession serves a POST of an open session (pathSession): the SDK's
// stateful handler answers it, and this path keeps what the SDK does
// not: which requests are in flight and which the client cancelled (so
// that a cancelled request's late answer is dropped, see flights), the
// replicas' routing of cancellations and answers to the replica running
// the request (sessionTable), and the cancellation of a request whose
// client dropped its response stream.
func serveSession(w http.ResponseWriter, r *http.Request, e *endpoint, body []byte) {
	sid := r.Header.Get(headerSessionID)
	f := jsonrpcwire.Scan(body)
	var id json.RawMessage
	if f.Complete && f.Method != "" && string(f.ID) != "null" {
		id = f.ID
	}
	if e.book != nil && f.Complete && !f.HasMethod && e.book.answered(r, sid, f.ID, body) {
		// The client's answer to a request a call on the session
		// fast path sent it (fastsession.go): accepted, as the SDK
		// accepts a response.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w, tracked, dupFast := e.trackCancellation(w, sid, id, f.Method, body)
	if dupFast {
		// The id is in flight on the session fast path, which the SDK
		// does not know of: its answer to a duplicate, given here.
		rid, _ := parseID(id)
		writeDuplicate(w, rid)
		return
	}
	if t, ok := e.stateful.(*sessionTable); ok {
		switch {
		case f.Method == "notifications/cancelled":
			// The request may run on another replica.
			t.cancelled(r.Context(), sid, body)
		case f.Complete && !f.HasMethod && len(f.ID) > 0 && string(f.ID) != "null":
			// The client's answer to a question a call asked it
			// (elicitation, sampling, roots): the call may run on
			// another replica.
			t.answered(r.Context(), sid, body)
		}
	}
	if e.book != nil {
		// The SDK's idle timer of the session pauses while this
		// POST runs and starts again when it ends (fastsession.go).
		e.book.sdkStart(sid)
		defer e.book.sdkEnd(sid)
	}
	serveSDK(w, r, e, e.stateful, body)
	if tracked {
		e.flights.finish(w.(*answerFilter).key)
	}
	if len(id) > 0 && r.Context().Err() != nil {
		cancelAbandoned(e, r, id)
	}
}

// trackCancellation notes a session's cancellations before the SDK acts
// on them, and wraps the stream of a session's request so that its
// response is dropped once the client has cancelled it (see flights). It
// reports whether the request is tracked (w is then an answerFilter),
// and whether its id is in flight on the session fast path already.
func (e *endpoint) trackCancellation(w http.ResponseWriter, sid string, id json.RawMessage, method string, body []byte) (_ http.ResponseWriter, tracked, dupFast bool) {
	if method == "notifications/cancelled" {
		var n struct {
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &n) == nil {
			if rid, ok := cancelledRequest(n.Params); ok {
				e.flights.cancel(flightKey{sid, rid})
			}
		}
		return w, false, false
	}
	rid, ok := parseID(id)
	if !ok {
		return w, false, false
	}
	k := flightKey{sid, rid}
	if ok, fast := e.flights.start(k); !ok {
		// A duplicate: the SDK refuses it when it knows the first.
		// Only a request alone in its POST is answered here (the SDK
		// reads a batch's other messages first).
		return w, false, fast && method != ""
	}
	return &answerFilter{ResponseWriter: w, flights: &e.flights, key: k}, true, false
}

// cancelAbandoned cancels a session's request whose POST stream the
// client dropped before the answer. Without an event store the answer
// could never be delivered, yet the SDK lets the handler run on: an agent
// run would go on for minutes for nobody. A notifications/cancelled is
// handed to the session as if the client had sent it.
func cancelAbandoned(e *endpoint, r *http.Request, id json.RawMessage) {
	msg := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + string(id) + `,"reason":"the client dropped the response stream"}}`
	if t, ok := e.stateful.(*sessionTable); ok {
		t.injectID(r.Header.Get(headerSessionID), []byte(msg))
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL.String(), strings.NewReader(msg))
	if err != nil {
		return
	}
	for _, k := range []string{headerSessionID, headerProtocolVersion, "Authorization"} {
		if v := r.Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Host = r.Host // the SDK checks it against DNS rebinding
	e.stateful.ServeHTTP(discard{}, req)
}

// discard is a ResponseWriter that drops everything.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
