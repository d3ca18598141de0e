//lint:file-ignore SA1019 the initialize-era features (roots, sampling, logging; deprecated in 2026-07-28, alive in every earlier version) are served on purpose

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/jsonrpcwire"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/telemetry"
)

// The stateless fast path.
//
// A 2026-07-28 request stands alone: it carries the client's capabilities
// in its _meta and has no session. The SDK still serves each one by
// building a server session around it (a connection, its goroutines, a
// logical stream), which costs more than a gateway call's whole pipeline.
// A tools/call of a registry or gateway tool needs none of it: its answer
// is one JSON-RPC response, and the upstream's result goes back as it came
// (encodeCallToolResult). So the MCP edge serves such a call itself,
// through the same tool handler and the same middleware (callSet
// tracking, observation) as the SDK's path, and answers application/json,
// which every client of the transport accepts.
//
// Only a call the SDK would serve without complaint takes this path; any
// other (a progress token or a log level, whose messages need a stream; a
// header or _meta the SDK would refuse; a tool it does not serve) goes to
// the SDK, which answers it as before, errors included.

// fastTool is a tool of an endpoint whose stateless calls may take the
// fast path.
type fastTool struct {
	h mcp.ToolHandler
	// relayed is h with the caller given; set for gateway tools.
	relayed func(context.Context, *mcp.CallToolRequest, *mcpclient.Caller) (*mcp.CallToolResult, error)
	// paramHeaders: the tool's schema binds arguments to Mcp-Param-*
	// headers, which the SDK checks; its calls take the SDK's path.
	paramHeaders bool
}

// paramHeaders reports whether t's input schema carries an x-mcp-header
// annotation.
func paramHeaders(t *mcp.Tool) bool {
	b, err := json.Marshal(t.InputSchema)
	return err != nil || bytes.Contains(b, []byte(`"x-mcp-header"`))
}

// fastEnvelope is a JSON-RPC request as the fast path reads it.
type fastEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// readCall reads a tools/call request as the SDK would: field names
// match exactly as written (encoding/json would take "NAME" for "name";
// the SDK's decoder does not), each once, and no field the fast path
// does not know. It reports false for anything else, which the SDK then
// reads. Only the members it needs are decoded; the arguments are kept
// as they came (copied: body's buffer is reused once the request ends,
// and a parked call may outlive it).
func readCall(body []byte, metas *metaCache) (fastEnvelope, mcp.CallToolParamsRaw, *mcp.ClientCapabilities, bool) {
	var env fastEnvelope
	var p mcp.CallToolParamsRaw
	var caps *mcp.ClientCapabilities
	var seen uint8
	once := func(bit uint8) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	ok := jsonrpcwire.Members(body, func(k, v []byte) bool {
		switch string(k) {
		case `"jsonrpc"`:
			return once(1) && string(v) == `"2.0"`
		case `"id"`:
			env.ID = v
			return once(2) && scalarID(v)
		case `"method"`:
			env.Method = "tools/call"
			return once(4) && string(v) == `"tools/call"`
		case `"params"`:
			env.Params = v
			return once(8) && len(v) > 0 && v[0] == '{'
		}
		return false
	})
	if !ok || seen != 15 {
		return env, p, nil, false
	}
	seen = 0
	ok = jsonrpcwire.Members(env.Params, func(k, v []byte) bool {
		switch string(k) {
		case `"name"`:
			return once(1) && json.Unmarshal(v, &p.Name) == nil
		case `"arguments"`:
			p.Arguments = bytes.Clone(v)
			return once(2)
		case `"_meta"`:
			if !once(4) || len(v) == 0 || v[0] != '{' {
				return false
			}
			e, ok := metas.decode(v)
			p.Meta, caps = e.meta, e.caps
			return ok
		}
		return false
	})
	return env, p, caps, ok && p.Name != ""
}

// metaCache keeps the _meta of recent fast-path requests decoded. A
// client sends the same _meta with each stateless request (its protocol
// version, capabilities and info), and decoding it with encoding/json
// was ~3.6% of agentd's CPU per 2026-07-28 gateway call. The maps it
// hands out are shared between requests: nothing on the call path writes
// a request's _meta (the SDK and agentd only read it). A _meta that
// differs per request (a trace context) is decoded each time, and the
// cache is emptied when it fills.
type metaCache struct {
	mu sync.Mutex
	m  map[string]metaEntry
}

// metaEntry is a decoded _meta and the client capabilities it declares,
// decoded once too (the SDK's ClientCapabilities re-encodes and decodes
// them on every call: ~1.7% of agentd's CPU per 2026-07-28 gateway call).
type metaEntry struct {
	meta mcp.Meta
	caps *mcp.ClientCapabilities
}

const (
	metaCacheSize = 256     // entries
	metaCacheMax  = 4 << 10 // bytes of one _meta
)

// decode returns raw (a JSON object) decoded as encoding/json does, with
// the capabilities it declares as the SDK reads them, and false if it
// does not decode. A nil cache decodes each time.
func (c *metaCache) decode(raw []byte) (metaEntry, bool) {
	if c != nil {
		c.mu.Lock()
		e, ok := c.m[string(raw)]
		c.mu.Unlock()
		if ok {
			return e, true
		}
	}
	var m mcp.Meta
	if json.Unmarshal(raw, &m) != nil {
		return metaEntry{}, false
	}
	e := metaEntry{meta: m, caps: (&mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: m}}).ClientCapabilities()}
	if c != nil && len(raw) <= metaCacheMax {
		c.mu.Lock()
		if len(c.m) >= metaCacheSize || c.m == nil {
			c.m = make(map[string]metaEntry, metaCacheSize)
		}
		c.m[string(raw)] = e
		c.mu.Unlock()
	}
	return e, true
}

// fastPlan is a stateless tools/call that the fast path serves.
type fastPlan struct {
	env  fastEnvelope
	p    mcp.CallToolParamsRaw
	caps *mcp.ClientCapabilities
	ft   fastTool
}

// planFastCall reports how body, a 2026-07-28 request to endpoint e,
// takes the fast path, or nil when the SDK must serve it (route).
func (s *Server) planFastCall(r *http.Request, e *endpoint, body []byte) *fastPlan {
	h := r.Header
	if h.Get(headerProtocolVersion) != statelessVersion || h.Get("Mcp-Method") != "tools/call" ||
		!jsonContent(h.Get("Content-Type")) || len(h.Values("Last-Event-ID")) > 0 || !sdkHostAllowed(r) {
		return nil
	}
	if jsonOK, streamOK := accepts(h.Values("Accept")); !jsonOK || !streamOK {
		return nil
	}
	env, p, caps, ok := readCall(body, &s.metas)
	if !ok || h.Get("Mcp-Name") != p.Name || !fastMeta(p.Meta) {
		return nil
	}
	e.mu.Lock()
	ft, ok := e.fast[p.Name]
	e.mu.Unlock()
	if !ok || ft.paramHeaders {
		return nil
	}
	return &fastPlan{env: env, p: p, caps: caps, ft: ft}
}

// serveFast serves a call planFastCall planned (pathFast).
func (s *Server) serveFast(w http.ResponseWriter, r *http.Request, e *endpoint, plan *fastPlan) {
	h := r.Header
	env, p := plan.env, &plan.p
	tok := tokenInfo(r)
	// Handlers find the request's span in the headers, as on the SDK's
	// path (see serveSDK).
	telemetry.Inject(r.Context(), h)
	req := &mcp.CallToolRequest{Params: p, Extra: &mcp.RequestExtra{TokenInfo: tok, Header: h}}
	var chained mcp.Request = req
	if plan.ft.relayed != nil {
		// A gateway tool gets the caller gatewayCaller would make, with
		// the capabilities decoded once per distinct _meta. The fast
		// path takes no input responses or request state (readCall).
		chained = &fastRequest{CallToolRequest: req, caller: &mcpclient.Caller{Capabilities: plan.caps, PassInput: true}}
	}
	res, err := e.fastChain(r.Context(), "tools/call", chained)
	var out []byte
	if err == nil {
		ctr, _ := res.(*mcp.CallToolResult)
		if ctr == nil {
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no result"}
		} else {
			out, err = encodeCallToolResult(ctr, e.impl)
		}
	}
	if err != nil {
		we := toWire(err)
		b, _ := json.Marshal(wireResponse{"2.0", env.ID, we})
		writeJSON(w, errorStatus(we.Code), b)
		return
	}
	writeJSON(w, http.StatusOK, resultResponse(env.ID, out))
}

// callFast is the handler at the core of endpoint e's fastChain.
func (e *endpoint) callFast(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
	var r *mcp.CallToolRequest
	switch q := req.(type) {
	case *mcp.CallToolRequest:
		r = q
	case *fastRequest:
		r = q.CallToolRequest
	default:
		return nil, fmt.Errorf("tools/call: unexpected request %T", req)
	}
	e.mu.Lock()
	ft, ok := e.fast[r.Params.Name]
	e.mu.Unlock()
	if !ok {
		// Removed since planFastCall looked: the SDK's answer.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool " + strconvQuote(r.Params.Name)}
	}
	if fr, ok := req.(*fastRequest); ok && ft.relayed != nil {
		return ft.relayed(ctx, r, fr.caller)
	}
	return ft.h(ctx, r)
}

// fastRequest is a stateless call on the fast path with its caller: the
// one gatewayCaller would make (serveFast).
type fastRequest struct {
	*mcp.CallToolRequest
	caller *mcpclient.Caller
}

// fastMeta reports whether a stateless request's _meta is one the SDK
// takes as it is and that needs no stream: the protocol version of the
// header, capabilities and client info as objects, no progress token and
// no log level (whose messages would need an event stream).
func fastMeta(m mcp.Meta) bool {
	if v, _ := m[mcp.MetaKeyProtocolVersion].(string); v != statelessVersion {
		return false
	}
	if _, ok := m[mcp.MetaKeyClientCapabilities].(map[string]any); !ok {
		return false
	}
	if v, present := m[mcp.MetaKeyClientInfo]; present {
		if _, ok := v.(map[string]any); !ok {
			return false
		}
	}
	if _, present := m[mcp.MetaKeyLogLevel]; present {
		return false
	}
	_, progress := m["progressToken"]
	return !progress
}

// jsonContent reports whether a Content-Type is application/json, as the
// SDK reads it.
func jsonContent(v string) bool {
	if !strings.Contains(v, ";") {
		return strings.EqualFold(strings.TrimSpace(v), "application/json")
	}
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}

// scalarID reports whether id is a request id the fast path may echo as
// it came: a string without escapes, or an integer of at most 15 digits.
// The SDK decodes an id and encodes it again, so any other spelling
// ("\u0041", 1.0, 1e3) would come back different; those go to the SDK.
func scalarID(id json.RawMessage) bool {
	if len(id) >= 2 && id[0] == '"' {
		return bytes.IndexByte(id, '\\') < 0 && utf8.Valid(id)
	}
	digits := bytes.TrimPrefix(id, []byte("-"))
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(id) > 1) {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// tokenInfo is what bindPrincipal hands the SDK for r: the token info of
// a non-local principal that presented a key, nil otherwise.
func tokenInfo(r *http.Request) *auth.TokenInfo {
	p := principal.FromContext(r.Context())
	if p == nil || p == principal.Local || r.Header.Get("Authorization") == "" {
		return nil
	}
	return principalToken(p)
}

// principalToken is the token info that carries p to the handlers.
func principalToken(p *principal.Principal) *auth.TokenInfo {
	return &auth.TokenInfo{UserID: p.Name, Extra: map[string]any{principalKey: p}}
}

// toWire is the JSON-RPC error the SDK answers for a handler's err.
func toWire(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we == err {
		return we
	}
	out := &jsonrpc.Error{Message: err.Error()}
	if we != nil {
		out.Code = we.Code
	}
	return out
}

// errorStatus is the HTTP status of a 2026-07-28 error response, as the
// SDK maps it (SEP-2575).
func errorStatus(code int64) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// wireResponse is a JSON-RPC error response.
type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *jsonrpc.Error  `json:"error"`
}

// resultResponse is the JSON-RPC response carrying result.
func resultResponse(id json.RawMessage, result []byte) []byte {
	b := make([]byte, 0, len(result)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// sdkHostAllowed is the SDK's DNS rebinding check: a loopback listener
// answers only requests naming a loopback host. The fast paths leave a
// refused request to the SDK, which answers 403.
func sdkHostAllowed(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return true
	}
	return !sdkLoopback(la.String()) || sdkLoopback(r.Host)
}

// sdkLoopback is the SDK's loopback test (internal/util.IsLoopback).
func sdkLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// encodeCallToolResult is the JSON result a 2026-07-28 session of the SDK
// (v1.8.0) sends for a tool handler's res: the server's info added to
// _meta unless there, resultType "complete" (or "input_required" when
// res asks for input), content never null, and a result that both asks
// for input and has content refused as a server bug. The SDK keeps that
// shaping in unexported code (mcp.Server.callTool,
// handleMultiRoundTripResult, annotateServerInfo), so it is restated
// here; TestFastPathMatchesSDK and FuzzFastPathMatchesSDK compare the
// two answers.
func encodeCallToolResult(res *mcp.CallToolResult, impl *mcp.Implementation) ([]byte, error) {
	// The exported fields only: a result decoded from an upstream keeps
	// its resultType, which MarshalJSON would write beside this one's.
	out := mcp.CallToolResult{
		Meta: res.Meta, Content: res.Content, StructuredContent: res.StructuredContent,
		IsError: res.IsError, InputRequests: res.InputRequests, RequestState: res.RequestState,
	}
	inputRequired := out.InputRequests != nil
	if inputRequired && (len(out.Content) > 0 || out.StructuredContent != nil) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}
	}
	if _, ok := out.Meta[mcp.MetaKeyServerInfo]; !ok && impl != nil {
		m := make(mcp.Meta, len(out.Meta)+1)
		for k, v := range out.Meta {
			m[k] = v
		}
		m[mcp.MetaKeyServerInfo] = impl
		out.Meta = m
	}
	if out.Content == nil && !inputRequired {
		out.Content = []mcp.Content{}
	}
	// The SDK's MarshalJSON writes compact JSON; through json.Marshal its
	// output would be validated and compacted again (~2% of agentd's CPU
	// per 2026-07-28 gateway call at c=16). FuzzFastPathMatchesSDK holds
	// the bytes to the SDK's.
	b, err := out.MarshalJSON()
	if err != nil {
		return nil, err
	}
	rt := `{"resultType":"complete"`
	if inputRequired {
		rt = `{"resultType":"input_required"`
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("tools/call result encodes as %.20q, not an object", b)
	}
	if rest := bytes.TrimSpace(b[1:]); len(rest) > 0 && rest[0] != '}' {
		rt += ","
	}
	return append([]byte(rt), b[1:]...), nil
}
