package mcpclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// Frame readers sit between an upstream and the go-sdk's decoders. They
// hand messages through unchanged, except that a message larger than the
// cap is never held in memory: its edges are kept, and when they show it
// is the response to one of our calls it becomes a JSON-RPC error
// response for that call (the call fails with ErrResultTooLarge, the
// session lives on). The SDK's own caps would instead break the whole
// connection.

// frameEvents receives what the readers notice; any field may be nil.
type frameEvents struct {
	// noise is a stdout line that is not JSON (a server printing logs to
	// stdout). It is skipped.
	noise func(line []byte)
	// oversize reports a dropped message: its size and whether it was
	// turned into an error response (otherwise dropped or fatal).
	oversize func(size int64, kind oversizeKind, replaced bool)
	// logMessage is a notifications/message about to reach the SDK. It is
	// called on the reader's goroutine, so before anything read after the
	// message (the result of the call it is about) reaches the SDK.
	logMessage func()
}

// bufSize is the read buffer of frame readers; messages up to this size
// are passed on without a copy.
const bufSize = 64 << 10

// lineReader reads newline-delimited JSON (stdio) line by line.
type lineReader struct {
	src     io.ReadCloser
	br      *bufio.Reader
	max     int64
	ev      frameEvents
	pending []byte // rest of the current line still to hand out
	big     []byte // a line longer than the buffer, being assembled
	edges   edges
	err     error // sticky: returned once pending is drained
}

func newLineReader(src io.ReadCloser, max int64, ev frameEvents) *lineReader {
	return &lineReader{src: src, br: bufio.NewReaderSize(src, bufSize), max: max, ev: ev}
}

// Read implements io.Reader. Only one goroutine (the SDK's reader) calls it.
func (l *lineReader) Read(p []byte) (int, error) {
	for len(l.pending) == 0 {
		if l.err != nil {
			return 0, l.err
		}
		l.next()
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	return n, nil
}

// Close closes the source, unblocking a pending Read.
func (l *lineReader) Close() error { return l.src.Close() }

// next reads one line into pending, or sets err.
func (l *lineReader) next() {
	if cap(l.big) > 1<<20 {
		l.big = nil // do not keep a huge buffer after one huge message
	}
	l.big = l.big[:0]
	var (
		size       int64
		discarding bool
		line       []byte
	)
	for {
		chunk, err := l.br.ReadSlice('\n')
		size += int64(len(chunk))
		switch {
		case discarding:
			l.edges.write(chunk)
		case size > l.max:
			discarding = true
			l.edges.reset()
			l.edges.write(l.big)
			l.edges.write(chunk)
			l.big = l.big[:0]
		case err == bufio.ErrBufferFull || len(l.big) > 0:
			l.big = append(l.big, chunk...)
		default:
			line = chunk // valid until the next ReadSlice, after pending drains
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			l.err = err
		}
		break
	}
	if discarding {
		kind, id := classifyOversized(l.edges.head, l.edges.tailBytes())
		replaced := kind == kindResponse
		if l.ev.oversize != nil {
			l.ev.oversize(size, kind, replaced)
		}
		switch kind {
		case kindResponse:
			l.pending = append(tooLargeResponse(id, size, l.max), '\n')
		case kindUnknown:
			l.err = errFrameTooLarge
		}
		l.edges.reset()
		return
	}
	if len(l.big) > 0 {
		line = l.big
	}
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if len(trimmed) == 0 {
		return
	}
	if trimmed[0] != '{' && trimmed[0] != '[' {
		if l.ev.noise != nil {
			l.ev.noise(line)
		}
		return
	}
	if !json.Valid(line) {
		// The SDK's decoder would wait for the rest of a cut message
		// forever, holding every call; a broken line means the stream
		// can no longer be trusted.
		l.err = errBadLine
		return
	}
	l.pending = line
	if l.ev.logMessage != nil && isLogMessage(line) {
		l.ev.logMessage()
	}
}

// isLogMessage reports whether msg is one notifications/message. The
// substring test keeps the common case to one scan.
func isLogMessage(msg []byte) bool {
	if !bytes.Contains(msg, []byte(`"notifications/message"`)) {
		return false
	}
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == "notifications/message" && m.ID == nil
}

// sseEventData returns the data of an event: its data fields joined by
// newlines.
func sseEventData(ev []byte) []byte {
	var data []byte
	n := 0
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i], ev[i+1:]
		} else {
			ev = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		rest, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		if n > 0 {
			data = append(data, '\n')
		}
		n++
		data = append(data, bytes.TrimPrefix(rest, []byte(" "))...)
	}
	return data
}

// errBadLine breaks a stdio session whose server wrote a line that looks
// like JSON but is not.
var errBadLine = errors.New("server wrote an invalid JSON message")

// sseReader reads a text/event-stream body event by event, so that an
// oversized event can be replaced before the SDK sees any of it.
type sseReader struct {
	body    io.ReadCloser
	br      *bufio.Reader
	max     int64
	ev      frameEvents
	callID  func() json.RawMessage // the id of the POSTed call; nil on GET streams
	broken  func(err error)        // called when the stream fails (not on EOF)
	pending []byte
	event   []byte
	edges   edges
	err     error
}

// Read implements io.Reader.
func (s *sseReader) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.next()
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// Close closes the body.
func (s *sseReader) Close() error { return s.body.Close() }

// next reads one event (up to and including its blank line) into pending.
func (s *sseReader) next() {
	if cap(s.event) > 1<<20 {
		s.event = nil
	}
	s.event = s.event[:0]
	var (
		size       int64
		discarding bool
		idLine     []byte
		lineStart  = true
	)
	for {
		chunk, err := s.br.ReadSlice('\n')
		startedLine := lineStart
		lineStart = err == nil // the chunk ended with its newline
		size += int64(len(chunk))
		if !discarding && size > s.max {
			discarding = true
			s.edges.reset()
			s.edges.write(s.event)
			s.event = s.event[:0]
		}
		if discarding {
			if startedLine && idLine == nil && bytes.HasPrefix(chunk, []byte("id:")) {
				idLine = bytes.Clone(chunk)
			}
			s.edges.write(chunk)
		} else {
			s.event = append(s.event, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err != io.EOF && s.broken != nil {
				s.broken(err)
			}
			s.err = err
			break
		}
		// A blank line ends the event.
		if startedLine && (len(chunk) == 1 || len(chunk) == 2 && chunk[0] == '\r') {
			break
		}
	}
	if !discarding {
		s.pending = s.event
		if s.ev.logMessage != nil && bytes.Contains(s.event, []byte(`"notifications/message"`)) && isLogMessage(sseEventData(s.event)) {
			s.ev.logMessage()
		}
		return
	}
	if idLine == nil {
		idLine = sseField(s.edges.head, "id:")
	}
	kind, id := classifyOversized(sseData(s.edges.head), sseTail(s.edges.tailBytes()))
	if kind == kindUnknown && s.callID != nil {
		if id = s.callID(); id != nil {
			kind = kindResponse
		}
	}
	if s.ev.oversize != nil {
		s.ev.oversize(size, kind, kind == kindResponse)
	}
	switch kind {
	case kindResponse:
		var b bytes.Buffer
		b.WriteString("event: message\n")
		b.Write(idLine)
		b.WriteString("data: ")
		b.Write(tooLargeResponse(id, size, s.max))
		b.WriteString("\n\n")
		s.pending = b.Bytes()
	case kindUnknown:
		if s.err == nil {
			s.err = errFrameTooLarge
		}
	}
	s.edges.reset()
}

// sseField returns the first line of ev starting with prefix, with its
// newline, or nil.
func sseField(ev []byte, prefix string) []byte {
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i+1], ev[i+1:]
		} else {
			ev = nil
			if !bytes.HasPrefix(line, []byte(prefix)) {
				return nil
			}
			return append(bytes.Clone(line), '\n')
		}
		if bytes.HasPrefix(line, []byte(prefix)) {
			return bytes.Clone(line)
		}
	}
	return nil
}

// sseData returns the beginning of the first data field of an event head.
func sseData(head []byte) []byte {
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

// sseTail returns the end of the last data field of an event tail.
func sseTail(tail []byte) []byte {
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

// jsonBody caps an application/json response body. The body is read
// whole on the first Read (the SDK reads it whole anyway); an oversized
// one becomes an error response for the POSTed call.
type jsonBody struct {
	body    io.ReadCloser
	max     int64
	ev      frameEvents
	callID  func() json.RawMessage
	started bool
	r       io.Reader
}

// Read implements io.Reader.
func (j *jsonBody) Read(p []byte) (int, error) {
	if !j.started {
		j.started = true
		data, err := io.ReadAll(io.LimitReader(j.body, j.max+1))
		switch {
		case err != nil:
			j.r = &errReader{err}
		case int64(len(data)) <= j.max:
			j.r = bytes.NewReader(data)
		default:
			kind, id := classifyOversized(data[:min(len(data), keepEdge)], nil)
			if kind != kindRequest && id == nil && j.callID != nil {
				id = j.callID()
			}
			replaced := kind != kindRequest && id != nil
			if j.ev.oversize != nil {
				j.ev.oversize(int64(len(data)), kindResponse, replaced)
			}
			if replaced {
				j.r = bytes.NewReader(tooLargeResponse(id, int64(len(data)), j.max))
			} else {
				j.r = &errReader{errFrameTooLarge}
			}
		}
	}
	return j.r.Read(p)
}

// Close closes the body.
func (j *jsonBody) Close() error { return j.body.Close() }

// cappedBody fails once more than max bytes were read: error bodies and
// anything else the SDK reads whole.
type cappedBody struct {
	body io.ReadCloser
	left int64
}

// Read implements io.Reader.
func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errFrameTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.body.Read(p)
	c.left -= int64(n)
	return n, err
}

// Close closes the body.
func (c *cappedBody) Close() error { return c.body.Close() }

type errReader struct{ err error }

func (e *errReader) Read([]byte) (int, error) { return 0, e.err }

var (
	_ io.ReadCloser = (*lineReader)(nil)
	_ io.ReadCloser = (*sseReader)(nil)
	_ io.ReadCloser = (*jsonBody)(nil)
	_ io.ReadCloser = (*cappedBody)(nil)
)

// httpBufSize is the read buffer of an HTTP body: one is made per
// response, so smaller than bufSize; longer events are assembled.
const httpBufSize = 8 << 10

func newBufReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, httpBufSize) }
