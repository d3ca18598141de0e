package jsonrpcwire

import (
	"bytes"
	"encoding/json"
)

// Fields is what the top level of a JSON-RPC message object shows.
type Fields struct {
	// ID is the raw value of the last complete top-level "id" member;
	// nil when there is none.
	ID json.RawMessage
	// Method is the value of "method"; HasMethod is set as soon as the
	// key is seen, even when its value is cut off.
	Method    string
	HasMethod bool
	// Complete reports that data is one object, well-formed up to its
	// closing brace, whose method (if any) is a string.
	Complete bool
}

// Scan reads the top-level members of a JSON-RPC message object without
// decoding their values (params may be megabytes). data may be cut
// anywhere, as the head of an oversized message is: what comes before the
// cut is reported. It is a small hand-written scanner rather than a
// decoder because the input may by definition be incomplete.
func Scan(data []byte) Fields {
	var f Fields
	badMethod := false
	s := scanner{b: data}
	s.space()
	if !s.eat('{') {
		return f
	}
	s.space()
	if s.eat('}') {
		f.Complete = true
		return f
	}
	for {
		s.space()
		key, ok := s.str()
		if !ok {
			return f
		}
		if string(key) == `"method"` {
			f.HasMethod = true
		}
		s.space()
		if !s.eat(':') {
			return f
		}
		s.space()
		start := s.i
		if !s.value(0) {
			return f
		}
		raw := data[start:s.i]
		switch string(key) {
		case `"id"`:
			f.ID = json.RawMessage(raw)
		case `"method"`:
			switch {
			case len(raw) < 2 || raw[0] != '"':
				badMethod = true
			case bytes.IndexByte(raw, '\\') < 0:
				f.Method = string(raw[1 : len(raw)-1])
			case json.Unmarshal(raw, &f.Method) != nil:
				badMethod = true
			}
		}
		s.space()
		if s.eat('}') {
			f.Complete = !badMethod
			return f
		}
		if !s.eat(',') {
			return f
		}
	}
}

// ScanID returns the id of a JSON-RPC message from its first bytes, for
// the error response to a message that is never read whole: a string, a
// number or null; nil when data does not show one.
func ScanID(data []byte) json.RawMessage { return scalarID(Scan(data).ID) }

// scalarID returns id if it is a valid string, number or null.
func scalarID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return nil
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if json.Valid(id) {
			return id
		}
	}
	return nil
}

// Kind is what the visible ends of an oversized message say it is.
type Kind int

// Kinds of oversized messages.
const (
	KindUnknown  Kind = iota
	KindResponse      // has an id and no method: the answer to a call
	KindRequest       // has "method": a notification or a request
)

// Classify looks at the first and last bytes of a JSON-RPC message too
// large to keep and returns what it is and, for a response, its id (a
// number or a string). head is scanned as JSON up to where it is cut;
// tail is matched against the way every serializer ends a message whose
// id comes last ({"result":...,"jsonrpc":"2.0","id":7}).
func Classify(head, tail []byte) (Kind, json.RawMessage) {
	f := Scan(head)
	if f.HasMethod {
		return KindRequest, nil
	}
	id := scalarID(f.ID)
	if string(id) == "null" {
		id = nil
	}
	if id == nil {
		id = scanTailID(tail)
	}
	if id == nil {
		return KindUnknown, nil
	}
	// An id with no method is a response even when "result" was not
	// seen: a request keeps "method" near its start in practice.
	return KindResponse, bytes.Clone(id)
}

// scanTailID finds the last `"id":<scalar>` of tail that is followed only
// by the end of the object, possibly after more scalar members (as in
// `,"id":3,"jsonrpc":"2.0"}`).
func scanTailID(tail []byte) json.RawMessage {
	tail = bytes.TrimRight(tail, " \t\r\n")
	for end := len(tail); end > 0; {
		i := bytes.LastIndex(tail[:end], []byte(`"id"`))
		if i < 0 {
			return nil
		}
		end = i
		if id := idAt(tail[i+len(`"id"`):]); id != nil {
			return id
		}
	}
	return nil
}

// idAt parses `:<scalar><rest>` where rest closes the enclosing object.
func idAt(b []byte) json.RawMessage {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != ':' {
		return nil
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	n := scalarLen(b)
	if n == 0 {
		return nil
	}
	val, rest := b[:n], bytes.TrimLeft(b[n:], " \t\r\n")
	if !json.Valid(val) {
		return nil
	}
	switch {
	case len(rest) == 1 && rest[0] == '}':
	case len(rest) > 1 && rest[0] == ',':
		// The remaining members must form a complete object on their own.
		obj := make([]byte, 0, len(rest))
		obj = append(obj, '{')
		obj = append(obj, rest[1:]...)
		if !json.Valid(obj) {
			return nil
		}
	default:
		return nil
	}
	return json.RawMessage(val)
}

// scalarLen returns the length of the JSON string or number at the start
// of b, or 0.
func scalarLen(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if b[0] == '"' {
		for i := 1; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return 0
	}
	i := 0
	for i < len(b) && bytes.IndexByte([]byte("-+.0123456789eE"), b[i]) >= 0 {
		i++
	}
	return i
}

// maxScanDepth bounds nesting, so hostile input cannot recurse deeply.
const maxScanDepth = 64

type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str consumes a string and returns it with its quotes.
func (s *scanner) str() ([]byte, bool) {
	start := s.i
	if !s.eat('"') {
		return nil, false
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
		case '"':
			s.i++
			return s.b[start:s.i], true
		default:
			s.i++
		}
	}
	return nil, false
}

// value consumes one JSON value; false if it is cut off or malformed.
func (s *scanner) value(depth int) bool {
	if depth > maxScanDepth || s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		_, ok := s.str()
		return ok
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		s.i++
		s.space()
		if s.eat(closer) {
			return true
		}
		for {
			s.space()
			if c == '{' {
				if _, ok := s.str(); !ok {
					return false
				}
				s.space()
				if !s.eat(':') {
					return false
				}
				s.space()
			}
			if !s.value(depth + 1) {
				return false
			}
			s.space()
			if s.eat(closer) {
				return true
			}
			if !s.eat(',') {
				return false
			}
		}
	default:
		start := s.i
		for s.i < len(s.b) && !isSpace(s.b[s.i]) && s.b[s.i] != ',' && s.b[s.i] != '}' && s.b[s.i] != ']' {
			s.i++
		}
		// A scalar that reaches the end of the data may be cut short.
		return s.i > start && s.i < len(s.b)
	}
}

// Members calls f with each top-level member of the JSON object data,
// in order: its key as written (quotes and escapes included) and its raw
// value. It stops when f returns false, and reports whether data is one
// object, with nothing after it, whose every member f accepted. Values
// are skipped, not checked: call it on data json.Valid accepts. The MCP
// edge's fast path reads a request's few members with it, without
// decoding what it passes on.
func Members(data []byte, f func(key, value []byte) bool) bool {
	s := scanner{b: data}
	s.space()
	if !s.eat('{') {
		return false
	}
	s.space()
	if !s.eat('}') {
		for {
			s.space()
			key, ok := s.str()
			if !ok {
				return false
			}
			s.space()
			if !s.eat(':') {
				return false
			}
			s.space()
			start := s.i
			if !s.value(0) || !f(key, data[start:s.i]) {
				return false
			}
			s.space()
			if s.eat('}') {
				break
			}
			if !s.eat(',') {
				return false
			}
		}
	}
	s.space()
	return s.i == len(s.b)
}

// Elements calls f with each element of the JSON array data, in order, as
// raw values. It stops when f returns false, and reports whether data is
// one array, with nothing after it, whose every element f accepted. Like
// Members, it skips values without checking them: call it on data
// json.Valid accepts. mcpclient reads a tool result's content with it.
func Elements(data []byte, f func(value []byte) bool) bool {
	s := scanner{b: data}
	s.space()
	if !s.eat('[') {
		return false
	}
	s.space()
	if !s.eat(']') {
		for {
			s.space()
			start := s.i
			if !s.value(0) || !f(data[start:s.i]) {
				return false
			}
			s.space()
			if s.eat(']') {
				break
			}
			if !s.eat(',') {
				return false
			}
		}
	}
	s.space()
	return s.i == len(s.b)
}
