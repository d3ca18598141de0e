package mcpserver

import (
	"net/http"
)

// One MCP POST, from the wire to its answer:
//
//	httpHandler: Origin check, method, body read (capped), precheck
//	     │
//	   route ──────────────┬───────────────┬───────────────┬────────────────┐
//	     │                 │               │               │                │
//	  pathFast        pathStateless   pathInitialize  pathSessionFast   pathSession
//	  fastcall.go     sdkpath.go      sdkpath.go      fastsession.go    session.go
//	  agentd answers  the SDK's       the SDK's       agentd answers    the SDK's stateful
//	  a 2026-07-28    stateless       stateful        a 2025-11-25      handler (or the
//	  tools/call      handler         handler opens   session's         replicas' table),
//	  itself                          a session       tools/call        with cancellation
//	                                                  itself            bookkeeping
//
// Both fast paths run the tool through the same middleware and handler
// as the SDK's path (endpoint.fastChain), and each has a differential
// fuzz against the SDK's answer. GET and DELETE exist only for sessions
// and go to the stateful handler as they are (a DELETE that ends a
// session also ends it in the session fast path's book).

// mcpPath is the way a POST is served.
type mcpPath int

const (
	// pathFast: a stateless tools/call that agentd answers itself,
	// as the SDK would (fastcall.go).
	pathFast mcpPath = iota
	// pathStateless: the SDK's stateless handler, which serves
	// 2026-07-28 requests and session-less requests of older clients.
	pathStateless
	// pathInitialize: the SDK's stateful handler, for a POST that
	// holds an initialize request (a new session).
	pathInitialize
	// pathSessionFast: a tools/call of an open initialize-era session
	// that agentd answers itself, as the SDK would (fastsession.go).
	pathSessionFast
	// pathSession: a request, notification or answer of an open
	// session (Mcp-Session-Id), through the stateful handler
	// (session.go).
	pathSession
)

// route decides the path of a POST whose body passed precheck, in this
// order: a MCP-Protocol-Version of 2026-07-28 or later → the fast path
// when it can serve the request as the SDK would, else stateless; an
// Mcp-Session-Id → the session fast path when it can serve the request
// as the SDK would, else the session; an initialize → a new session;
// anything else → stateless. For the fast paths it returns the planned
// call.
func (s *Server) route(r *http.Request, e *endpoint, body []byte) (mcpPath, *fastPlan, *sessionPlan) {
	switch {
	case r.Header.Get(headerProtocolVersion) >= statelessVersion:
		if !s.sdkOnly.Load() {
			if plan := s.planFastCall(r, e, body); plan != nil {
				return pathFast, plan, nil
			}
		}
		return pathStateless, nil, nil
	case r.Header.Get(headerSessionID) != "":
		if !s.sdkOnly.Load() {
			if plan := s.planSessionCall(r, e, body); plan != nil {
				return pathSessionFast, nil, plan
			}
		}
		return pathSession, nil, nil
	case hasInitialize(body):
		return pathInitialize, nil, nil
	}
	return pathStateless, nil, nil
}

// httpHandler serves one URL of the MCP edge (the main endpoint or a
// gateway): the checks every request passes, then route's path.
func (s *Server) httpHandler(e *endpoint) http.Handler {
	origins := newOriginPolicy(s.opts.Config.AllowedOrigins)
	limit := s.opts.MaxMessageBytes
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" {
			if !origins.allowed(origin) {
				writeHTTPError(w, http.StatusForbidden, &protocolError{errInvalidRequest, "forbidden: origin " + strconvQuote(origin) + " is not allowed (loopback origins and [mcp] allowed_origins are)"})
				return
			}
			corsHeaders(w, origin)
		}
		switch r.Method {
		case http.MethodOptions:
			if origin == "" {
				w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
			}
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodGet:
			e.bound[e.stateful].ServeHTTP(w, r)
			return
		case http.MethodDelete:
			if e.book == nil {
				e.bound[e.stateful].ServeHTTP(w, r)
				return
			}
			sw := &statusWriter{ResponseWriter: w}
			e.bound[e.stateful].ServeHTTP(sw, r)
			if sw.status == http.StatusNoContent {
				e.book.forget(r.Header.Get(headerSessionID)) // fastsession.go
			}
			return
		case http.MethodPost:
		default:
			w.Header().Set("Allow", "GET, POST, DELETE, OPTIONS")
			writeHTTPError(w, http.StatusMethodNotAllowed, &protocolError{errInvalidRequest, "method not allowed: use POST, GET or DELETE"})
			return
		}

		// The body is read (and capped) here rather than by the SDK, so an
		// oversized or malformed message gets a JSON-RPC error instead of
		// a plain-text 4xx, and so routing can look at it.
		buf := s.bufs.get()
		defer s.bufs.put(buf)
		body, ok := readBody(w, r, buf, limit)
		if !ok {
			return
		}
		tasks := s.tasks.Load() != nil
		modern := r.Header.Get(headerProtocolVersion) >= statelessVersion
		gwTasks := e.name != "" && s.gwTasks != nil && !modern
		if tasks || e.name != "" {
			markTask(r, body) // tasks.go
		}
		if !precheck(w, body, modern, tasks || gwTasks) {
			return
		}
		if tasks && s.tasks.Load().serveReplicated(w, r, e, body) {
			return // tasks.go
		}
		if gwTasks && s.serveGatewayTask(w, r, e, body) {
			return // gatewaytasks.go
		}
		path, plan, splan := s.route(r, e, body)
		switch path {
		case pathFast:
			s.serveFast(w, r, e, plan)
		case pathSessionFast:
			s.serveSessionFast(w, r, e, splan)
		case pathStateless:
			serveSDK(w, r, e, e.stateless, body)
		case pathInitialize:
			serveSDK(w, r, e, e.stateful, body)
		case pathSession:
			serveSession(w, r, e, body)
		}
	})
}

// statusWriter notes the status a handler answers.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
