package mcpclient

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agentd/agentd/internal/jsonrpcwire"
)

// decodeMessage is jsonrpc.DecodeMessage for the messages a stdio server
// sends on a call's path: a response with a result, a progress or log
// notification. The SDK's decoder allocates a 32 KiB read buffer for
// each of its Unmarshal calls (two for a request: the envelope, then the
// method), which on a gateway call was most of what agentd allocated.
// This one reads the envelope's members in place (jsonrpcwire.Members)
// and builds the same message, for the plain shape only: the five usual
// members, each at most once, a "2.0" tag, an id that is a plain string
// or a small integer, a method without escapes. Anything else (an error
// member, escapes, an unknown member, a duplicate) goes to the SDK's
// decoder as it is, so its answer is the SDK's by construction.
// FuzzDecodeMessageMatchesSDK holds the two equal on any input.
//
// data may be reused by the caller once it returns: what the message
// holds is copied.
func decodeMessage(data []byte) (jsonrpc.Message, error) {
	if msg, ok := decodePlain(data); ok {
		return msg, nil
	}
	return jsonrpc.DecodeMessage(bytes.Clone(data))
}

func decodePlain(data []byte) (jsonrpc.Message, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	var tag, id, method, params, result []byte
	seen := 0
	ok := jsonrpcwire.Members(data, func(key, value []byte) bool {
		var slot *[]byte
		var bit int
		switch string(key) {
		case `"jsonrpc"`:
			slot, bit = &tag, 1
		case `"id"`:
			slot, bit = &id, 2
		case `"method"`:
			slot, bit = &method, 4
		case `"params"`:
			slot, bit = &params, 8
		case `"result"`:
			slot, bit = &result, 16
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		*slot = value
		return true
	})
	if !ok || string(tag) != `"2.0"` {
		return nil, false
	}
	msgID, ok := plainID(id)
	if !ok {
		return nil, false
	}
	if method != nil {
		name, ok := plainString(method)
		if !ok || result != nil {
			return nil, false
		}
		return &jsonrpc.Request{ID: msgID, Method: name, Params: rawCopy(params)}, true
	}
	if !msgID.IsValid() || params != nil {
		return nil, false
	}
	return &jsonrpc.Response{ID: msgID, Result: rawCopy(result)}, true
}

// plainID is the id of a message: absent or null (a notification), a
// string of printable ASCII without escapes, or an integer a float64
// holds exactly (the SDK reads ids as float64s).
func plainID(raw []byte) (jsonrpc.ID, bool) {
	if raw == nil || string(raw) == "null" {
		return jsonrpc.ID{}, true
	}
	var v any
	if s, ok := plainString(raw); ok {
		v = s
	} else {
		if len(raw) > 15 || bytes.ContainsAny(raw, ".eE+") || (raw[0] == '0' && len(raw) > 1) || bytes.HasPrefix(raw, []byte("-0")) {
			return jsonrpc.ID{}, false
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return jsonrpc.ID{}, false
		}
		v = float64(n)
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil
}

// plainString is the value of a JSON string of printable ASCII without
// escapes, the only strings whose decoding nothing can differ on.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == '\\' || c == '"' {
			return "", false
		}
	}
	return string(s), true
}

// rawCopy copies a member's value out of the frame, whose bytes the
// reader reuses; an absent member stays nil.
func rawCopy(v []byte) json.RawMessage {
	if v == nil {
		return nil
	}
	return bytes.Clone(v)
}
