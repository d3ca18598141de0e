package mcpserver

import (
	"bytes"
	"encoding/json"
)

// scanID finds the top-level "id" of a JSON-RPC message from its first
// bytes, which may be cut anywhere: an oversized message is never read
// whole, yet its error response should carry its id. It returns nil when
// the id cannot be found in data (or is not a string, number or null).
//
// It is a small hand-written scanner rather than a decoder because the
// input is by definition incomplete.
func scanID(data []byte) json.RawMessage {
	s := scanner{b: data}
	s.space()
	if !s.eat('{') {
		return nil
	}
	for {
		s.space()
		if s.eat('}') {
			return nil
		}
		key, ok := s.str()
		if !ok {
			return nil
		}
		s.space()
		if !s.eat(':') {
			return nil
		}
		s.space()
		start := s.i
		if !s.value(0) {
			return nil
		}
		if string(key) == `"id"` {
			raw := data[start:s.i]
			switch raw[0] {
			case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				if json.Valid(raw) {
					return json.RawMessage(raw)
				}
			}
			return nil
		}
		s.space()
		if !s.eat(',') {
			return nil
		}
	}
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

// topFields returns the raw "id" and the "method" of a complete JSON-RPC
// message object without decoding the rest (params may be megabytes).
// ok is false when data is not an object.
func topFields(data []byte) (id json.RawMessage, method string, ok bool) {
	s := scanner{b: data}
	s.space()
	if !s.eat('{') {
		return nil, "", false
	}
	s.space()
	if s.eat('}') {
		return nil, "", true
	}
	for {
		s.space()
		key, good := s.str()
		if !good {
			return nil, "", false
		}
		s.space()
		if !s.eat(':') {
			return nil, "", false
		}
		s.space()
		start := s.i
		if !s.value(0) {
			return nil, "", false
		}
		raw := data[start:s.i]
		switch string(key) {
		case `"id"`:
			id = raw
		case `"method"`:
			if len(raw) < 2 || raw[0] != '"' {
				return nil, "", false
			}
			if bytes.IndexByte(raw, '\\') < 0 {
				method = string(raw[1 : len(raw)-1])
			} else if json.Unmarshal(raw, &method) != nil {
				return nil, "", false
			}
		}
		s.space()
		if s.eat('}') {
			return id, method, true
		}
		if !s.eat(',') {
			return nil, "", false
		}
	}
}
