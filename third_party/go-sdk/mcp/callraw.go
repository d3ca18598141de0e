// Copyright 2026 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

// This file is agentd's second patch (see PATCH.md): a gateway passes a
// tool's result on as the upstream server sent it, so decoding it into
// Content values only to encode them again is wasted work on every call.

package mcp

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// RawCallToolResult returns a result that is sent as raw, the JSON object
// of a CallToolResult as another server sent it; isError should be what
// raw says, for middleware that reads it. When the session's protocol
// has a resultType (2026-07-28), it is added unless raw has one.
func RawCallToolResult(raw json.RawMessage, isError bool) *CallToolResult {
	return &CallToolResult{raw: raw, IsError: isError}
}

// Raw returns the JSON a result made by RawCallToolResult is sent as, or
// nil.
func (x *CallToolResult) Raw() json.RawMessage { return x.raw }

func (x *CallToolResult) marshalRaw() ([]byte, error) {
	raw := bytes.TrimSpace(x.raw)
	if (x.resultType == "" && len(x.Meta) == 0) || len(raw) < 2 || raw[0] != '{' {
		return raw, nil
	}
	if bytes.Contains(raw, []byte(`"resultType"`)) || bytes.Contains(raw, []byte(`"_meta"`)) {
		// raw may have either already: merge field by field.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		if _, ok := m["resultType"]; !ok && x.resultType != "" {
			m["resultType"], _ = json.Marshal(x.resultType)
		}
		if len(x.Meta) > 0 {
			meta := map[string]json.RawMessage{}
			if old, ok := m["_meta"]; ok {
				if err := json.Unmarshal(old, &meta); err != nil {
					return nil, err
				}
			}
			for k, v := range x.Meta {
				if _, ok := meta[k]; !ok {
					b, err := json.Marshal(v)
					if err != nil {
						return nil, err
					}
					meta[k] = b
				}
			}
			m["_meta"], _ = json.Marshal(meta)
		}
		return json.Marshal(m)
	}
	// The usual case: neither is there, and both go in front.
	out := make([]byte, 0, len(raw)+64)
	out = append(out, '{')
	if x.resultType != "" {
		rt, err := json.Marshal(x.resultType)
		if err != nil {
			return nil, err
		}
		out = append(out, `"resultType":`...)
		out = append(out, rt...)
	}
	if len(x.Meta) > 0 {
		meta, err := json.Marshal(x.Meta)
		if err != nil {
			return nil, err
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, `"_meta":`...)
		out = append(out, meta...)
	}
	if rest := bytes.TrimSpace(raw[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, raw[1:]...), nil
}

// rawResult keeps the JSON of a result undecoded.
type rawResult struct {
	ResultBase
	json json.RawMessage
}

func (r *rawResult) UnmarshalJSON(data []byte) error {
	r.json = append(r.json[:0], data...)
	return nil
}

// CallToolRaw is [ClientSession.CallTool] returning the result as the
// server sent it, undecoded. Sending middleware is not run. A protocol
// error is returned as a *jsonrpc.Error, as CallTool returns it.
func (cs *ClientSession) CallToolRaw(ctx context.Context, params *CallToolParams) (json.RawMessage, error) {
	if params == nil {
		params = new(CallToolParams)
	}
	if params.Arguments == nil {
		params.Arguments = map[string]any{}
	}
	if tool := cs.lookupTool(params.Name); tool != nil {
		ctx = context.WithValue(ctx, toolContextKey, tool)
	}
	if cs.usesNewProtocol() {
		params = injectRequestMeta(cs, params)
	}
	var res rawResult
	if err := call(ctx, cs.getConn(), methodCallTool, params, &res); err != nil {
		return nil, err
	}
	return res.json, nil
}

// MarshalCallToolResult returns the JSON a server with impl sends as the
// result of tools/call for res, to a client speaking protocolVersion,
// shaped as a [ServerSession] shapes it: from 2026-07-28 on with its
// resultType and the server's info in _meta, and with content never null.
// It is for a server that answers some calls outside a session (agentd's
// stateless fast path) and must answer them exactly as a session would.
// A result with both content and input requests is an error, as it is
// there.
func MarshalCallToolResult(res *CallToolResult, protocolVersion string, impl *Implementation) ([]byte, error) {
	out := *res
	hasInputRequests := out.InputRequests != nil
	if hasInputRequests && out.hasContent() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}
	}
	if protocolVersion >= protocolVersion20260728 {
		out.resultType = resultTypeComplete
		if hasInputRequests {
			out.resultType = resultTypeInputRequired
		}
		if _, ok := out.Meta[MetaKeyServerInfo]; !ok && impl != nil {
			m := make(Meta, len(out.Meta)+1)
			for k, v := range out.Meta {
				m[k] = v
			}
			m[MetaKeyServerInfo] = impl
			out.Meta = m
		}
	}
	if out.raw == nil && out.Content == nil && out.resultType != resultTypeInputRequired {
		out.Content = []Content{}
	}
	return out.MarshalJSON()
}

// HoldSession returns the session of id, after the checks a POST to it
// passes (it exists; tok names the user that opened it), held as a POST
// holds it: its idle timeout is paused until release is called. It is
// for a server that answers some requests of a session itself (agentd's
// fast path for a gateway's tools/call), which must keep the session
// alive as the handler's own requests do.
func (h *StreamableHTTPHandler) HoldSession(id string, tok *auth.TokenInfo) (ss *ServerSession, release func(), ok bool) {
	h.mu.Lock()
	info := h.sessions[id]
	h.mu.Unlock()
	if info == nil || (info.userID != "" && (tok == nil || tok.UserID != info.userID)) {
		return nil, nil, false
	}
	info.startPOST()
	return info.session, info.endPOST, true
}
