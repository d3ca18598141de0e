package jsonrpcwire

import (
	"bytes"
	"io"
	"strconv"
	"time"
)

// Event is one server-sent event (the subset MCP uses: data, event, id
// and retry fields; comments; LF or CRLF line endings).
type Event struct {
	ID    string
	Name  string
	Data  []byte // the data fields joined by newlines
	Retry time.Duration
}

// ParseEvent decodes one event as Reader.Next returns it. ok is false when
// it sets no field (only comments or blank lines).
func ParseEvent(raw []byte) (ev Event, ok bool) {
	hasData := false
	for len(raw) > 0 {
		line := raw
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			raw = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 || line[0] == ':' {
			continue // the end of the event, or a comment
		}
		ok = true
		field, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(field) {
		case "data":
			if hasData {
				ev.Data = append(ev.Data, '\n')
			}
			hasData = true
			ev.Data = append(ev.Data, value...)
		case "event":
			ev.Name = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.ID = string(value)
			}
		case "retry":
			if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
				ev.Retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
	return ev, ok
}

// NextEvent returns the next event of an event stream (FramingSSE) that
// sets a field. The stream ends with io.EOF, also when its last event is
// left without its blank line (the spec drops it), and with
// io.ErrUnexpectedEOF when it stops inside a line; an oversized event is
// a *TooLargeError.
func (r *Reader) NextEvent() (Event, error) {
	for {
		raw, err := r.Next()
		if err == io.EOF && len(raw) > 0 && !bytes.HasSuffix(raw, []byte{'\n'}) {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return Event{}, err
		}
		if ev, ok := ParseEvent(raw); ok {
			return ev, nil
		}
	}
}

// eventField returns the first line of ev starting with prefix, with its
// line ending, copied; nil if there is none.
func eventField(ev []byte, prefix string) []byte {
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i+1], ev[i+1:]
		} else {
			ev = nil
		}
		if bytes.HasPrefix(line, []byte(prefix)) {
			return bytes.Clone(line)
		}
	}
	return nil
}

// eventData returns the beginning of the first data field of an event's
// head.
func eventData(head []byte) []byte {
	for len(head) > 0 {
		if rest, ok := bytes.CutPrefix(head, []byte("data:")); ok {
			return bytes.TrimPrefix(rest, []byte(" "))
		}
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			return nil
		}
		head = head[i+1:]
	}
	return nil
}

// eventTail returns the end of the last data field of an event's tail.
func eventTail(tail []byte) []byte {
	tail = bytes.TrimRight(tail, "\r\n")
	for {
		i := bytes.LastIndexByte(tail, '\n')
		if i < 0 {
			return tail // the data line is longer than the tail: all JSON
		}
		last := tail[i+1:]
		if rest, ok := bytes.CutPrefix(last, []byte("data:")); ok {
			return bytes.TrimPrefix(rest, []byte(" "))
		}
		if !bytes.Contains(last, []byte(":")) || bytes.HasPrefix(last, []byte("{")) {
			return last
		}
		tail = bytes.TrimRight(tail[:i], "\r")
	}
}
