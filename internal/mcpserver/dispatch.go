package mcpserver

import (
	"net/http"
)

// One MCP POST, from the wire to its answer:
//
//	httpHandler: Origin check, method, body read (capped), precheck
//	     │
//	   route ──────────────┬───────────────┬────────────────┐
//	     │                 │               │                │
//	  pathFast        pathStateless   pathInitialize    pathSession
//	  fastcall.go     sdkpath.go      sdkpath.go        session.go
//	  agentd answers  the SDK's       the SDK's         the SDK's stateful
//	  a 2026-07-28    stateless       stateful handler  handler (or the
//	  tools/call      handler         opens a session   replicas' table),
//	  itself                                            with cancellation
//	                                                    bookkeeping
//
// GET and DELETE exist only for sessions and go to the stateful handler
// as they are.

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
	// pathSession: a request, notification or answer of an open
	// session (Mcp-Session-Id), through the stateful handler
	// (session.go).
	pathSession
)

// route decides the path of a POST whose body passed precheck, in this
// order: a MCP-Protocol-Version of 2026-07-28 or later → the fast path
// when it can serve the request as the SDK would, else stateless; an
// Mcp-Session-Id → the session; an initialize → a new session; anything
// else → stateless. For pathFast it returns the planned call.
func (s *Server) route(r *http.Request, e *endpoint, body []byte) (mcpPath, *fastPlan) {
	switch {
	case r.Header.Get(headerProtocolVersion) >= statelessVersion:
		if !s.sdkOnly.Load() {
			if plan := s.planFastCall(r, e, body); plan != nil {
				return pathFast, plan
			}
		}
		return pathStateless, nil
	case r.Header.Get(headerSessionID) != "":
		return pathSession, nil
	case hasInitialize(body):
		return pathInitialize, nil
	}
	return pathStateless, nil
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
		case http.MethodGet, http.MethodDelete:
			e.bound[e.stateful].ServeHTTP(w, r)
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
		path, plan := s.route(r, e, body)
		switch path {
		case pathFast:
			s.serveFast(w, r, e, plan)
		case pathStateless:
			serveSDK(w, r, e, e.stateless, body)
		case pathInitialize:
			serveSDK(w, r, e, e.stateful, body)
		case pathSession:
			serveSession(w, r, e, body)
		}
	})
}
