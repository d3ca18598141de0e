package mcpclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// codeTooLarge is the JSON-RPC error code of the error response this
// package puts in place of an upstream message larger than the cap. It is
// in the implementation-defined server-error range, so no upstream can be
// expected to use it for anything else.
const codeTooLarge = -32099

// ErrResultTooLarge is wrapped by the error of a call whose upstream
// result was larger than Options.MaxResultBytes. The call fails; the
// session goes on.
var ErrResultTooLarge = errors.New("mcp result too large")

// errFrameTooLarge breaks a connection whose oversized message could not
// be tied to a call: the caller of that call learns of it through the
// disconnect instead of waiting for its timeout.
var errFrameTooLarge = errors.New("upstream message larger than the size cap, and not a response")

// keepEdge is how much of the beginning and of the end of an oversized
// message is kept to find its id.
const keepEdge = 4096

// edges remembers the first and the last keepEdge bytes of a stream of
// chunks without holding the rest.
type edges struct {
	head []byte
	tail []byte // ring-less: compacted when it grows past 2*keepEdge
	n    int64
}

func (e *edges) write(p []byte) {
	e.n += int64(len(p))
	if len(e.head) < keepEdge {
		k := min(keepEdge-len(e.head), len(p))
		e.head = append(e.head, p[:k]...)
	}
	e.tail = append(e.tail, p...)
	if len(e.tail) > 2*keepEdge {
		e.tail = append(e.tail[:0], e.tail[len(e.tail)-keepEdge:]...)
	}
}

func (e *edges) tailBytes() []byte {
	if len(e.tail) > keepEdge {
		return e.tail[len(e.tail)-keepEdge:]
	}
	return e.tail
}

func (e *edges) reset() {
	e.head, e.tail, e.n = e.head[:0], e.tail[:0], 0
}

// oversizeKind is what the visible edges of an oversized message say it is.
type oversizeKind int

const (
	kindUnknown  oversizeKind = iota
	kindResponse              // has "result" or "error": answer to one of our calls
	kindRequest               // has "method": a notification or a server request
)

// classifyOversized looks at the first and last bytes of a JSON-RPC
// message too large to keep and returns what it is and, for a response,
// its id as raw JSON (a number or a string). head is scanned as JSON up to
// where it is cut; tail is matched against the way every serializer ends a
// message whose id comes last ({"result":...,"jsonrpc":"2.0","id":7}).
func classifyOversized(head, tail []byte) (oversizeKind, json.RawMessage) {
	kind, id := scanHead(head)
	if kind == kindRequest {
		return kind, nil
	}
	if id == nil {
		id = scanTailID(tail)
	}
	if id == nil {
		return kindUnknown, nil
	}
	// Both ends can be seen for an id but not "result": an id with no
	// method is still a response (a request always starts with or keeps
	// "method" near its start in practice, and "method" seen anywhere in
	// head wins above).
	return kindResponse, id
}

// scanHead tokenises head, which may be cut anywhere, and reports the
// top-level keys it saw: "method" makes a request, "result"/"error" a
// response, and a scalar "id" is returned.
func scanHead(head []byte) (oversizeKind, json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return kindUnknown, nil
	}
	kind := kindUnknown
	var id json.RawMessage
	depth, wantKey, key := 1, true, ""
	for {
		tok, err := dec.Token()
		if err != nil {
			return kind, id
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				if depth == 1 {
					wantKey = true // once this nested value ends
				}
				depth++
			} else if depth--; depth == 0 {
				return kind, id
			}
			continue
		}
		if depth != 1 {
			continue
		}
		if wantKey {
			key, _ = tok.(string)
			switch key {
			case "method":
				kind = kindRequest
			case "result", "error":
				if kind == kindUnknown {
					kind = kindResponse
				}
			}
			wantKey = false
			continue
		}
		if key == "id" {
			switch v := tok.(type) {
			case json.Number:
				id = json.RawMessage(v.String())
			case string:
				id, _ = json.Marshal(v)
			}
		}
		wantKey = true
	}
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
	return json.RawMessage(bytes.Clone(val))
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

// tooLargeResponse is the JSON-RPC error response put in place of an
// oversized response to call id.
func tooLargeResponse(id json.RawMessage, size, limit int64) []byte {
	msg := fmt.Sprintf("response of %s exceeds the %s limit", sizeString(size), sizeString(limit))
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{codeTooLarge, msg}})
	return b
}

// sizeString prints a byte count for humans; "more than" because an
// oversized message is not read to its end when the stream breaks.
func sizeString(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
