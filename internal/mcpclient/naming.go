package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"path"
	"strings"
)

// maxToolNameLen is the longest tool name every provider accepts (OpenAI
// refuses a whole request when one function name is longer than 64).
const maxToolNameLen = 64

// ToolName returns the name agents see for tool of server:
// "mcp_{server}_{tool}", lower-cased, with every character outside
// [a-z0-9_] (a '-' included) replaced by '_'. It depends on nothing but its
// arguments, so a tool's name never changes when another server is added.
//
// Names longer than 64 characters are cut to 55 and given an '_' and 8
// hex digits of a hash of the full name: still stable, and two long names
// that share a prefix stay apart.
func ToolName(server, tool string) string {
	var b strings.Builder
	b.Grow(5 + len(server) + len(tool))
	b.WriteString("mcp_")
	writeNormalized(&b, server)
	b.WriteByte('_')
	writeNormalized(&b, tool)
	name := b.String()
	if len(name) <= maxToolNameLen {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%s_%08x", name[:maxToolNameLen-9], h.Sum32())
}

// writeNormalized writes s lower-cased, one '_' for every rune outside
// [a-z0-9_] (so invalid UTF-8 and non-ASCII letters become '_' too).
func writeNormalized(b *strings.Builder, s string) {
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
}

// serverKey is the normalised form of a server name; two servers whose
// keys are equal would give every one of their tools the same names.
func serverKey(name string) string {
	var b strings.Builder
	writeNormalized(&b, name)
	return b.String()
}

// allowedTool reports whether upstream tool name passes allowed_tools:
// nil allows everything, an empty list nothing, otherwise a name must
// equal or path.Match one of the patterns. Patterns are validated when
// the server is added, so a bad one here simply does not match.
func allowedTool(allowed *[]string, name string) bool {
	if allowed == nil {
		return true
	}
	for _, p := range *allowed {
		if p == name {
			return true
		}
		if ok, err := path.Match(p, name); err == nil && ok {
			return true
		}
	}
	return false
}

// emptyObjectSchema is what a tool without a usable schema gets.
var emptyObjectSchema = json.RawMessage(`{"type":"object"}`)

// NormalizeSchema turns an upstream tool's input schema into a JSON Schema
// object every model provider and the go-sdk server (which panics on
// anything else) accept: nil, empty, invalid or non-object JSON becomes
// {"type":"object"}; a missing or different "type" becomes "object";
// "properties" is kept when it is an object and "required" when it is an
// array of strings; every other keyword is kept as is.
func NormalizeSchema(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return emptyObjectSchema
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return emptyObjectSchema
	}
	m["type"] = json.RawMessage(`"object"`)
	if p, ok := m["properties"]; ok {
		var props map[string]json.RawMessage
		if json.Unmarshal(p, &props) != nil || props == nil {
			delete(m, "properties")
		}
	}
	if r, ok := m["required"]; ok {
		var req []string
		if json.Unmarshal(r, &req) != nil {
			delete(m, "required")
		} else if req == nil {
			delete(m, "required")
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return emptyObjectSchema
	}
	return out
}
