package mcpclient

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/agentd/agentd/internal/jsonrpcwire"
)

// Frame readers sit between an upstream and the go-sdk's decoders, as thin
// adapters over jsonrpcwire. They hand messages through unchanged, except
// that a message larger than the cap is never held in memory: its edges
// are kept, and when they show it is the response to one of our calls it
// becomes a JSON-RPC error response for that call (the call fails with
// ErrResultTooLarge, the session lives on). The SDK's own caps would
// instead break the whole connection.

// codeTooLarge is the JSON-RPC error code of the error response put in
// place of an upstream message larger than the cap. It is in the
// implementation-defined server-error range, so no upstream can be
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

// errBadLine breaks a stdio session whose server wrote a line that looks
// like JSON but is not.
var errBadLine = errors.New("server wrote an invalid JSON message")

// frameEvents receives what the readers notice; any field may be nil.
type frameEvents struct {
	// noise is a stdout line that is not JSON (a server printing logs to
	// stdout). It is skipped.
	noise func(line []byte)
	// oversize reports a dropped message: its size and whether it was
	// turned into an error response (otherwise dropped or fatal).
	oversize func(size int64, kind jsonrpcwire.Kind, replaced bool)
	// callNotification is a notifications/message or a
	// notifications/progress about to reach the SDK. It is called on the
	// reader's goroutine, so before anything read after the notification
	// (the result of the call it is about) reaches the SDK.
	callNotification func()
	// response sees every message read (an SSE event when sse is set),
	// for what the SDK's types drop (taskWatch.observe). Like
	// callNotification, it runs before the message reaches the SDK.
	response func(msg []byte, sse bool)
}

// oversized decides what to do with a message over the cap: the reply
// that fails the call it answers, or nil when there is none (a request,
// dropped, or an unknown message, when the connection must break).
func oversized(tl *jsonrpcwire.TooLargeError, callID func() json.RawMessage, ev frameEvents) (jsonrpcwire.Kind, []byte) {
	kind, id := jsonrpcwire.Classify(tl.Head, tl.Tail)
	if kind == jsonrpcwire.KindUnknown && callID != nil {
		if id = callID(); id != nil {
			kind = jsonrpcwire.KindResponse
		}
	}
	if ev.oversize != nil {
		ev.oversize(tl.Size, kind, kind == jsonrpcwire.KindResponse)
	}
	if kind != jsonrpcwire.KindResponse {
		return kind, nil
	}
	return kind, jsonrpcwire.ErrorResponse(id, codeTooLarge, tl.Error())
}

// frameReader hands an upstream's messages to the SDK's decoder: the
// lines of a stdio server, each with a newline, or the events of an event
// stream, as they came.
type frameReader struct {
	src    io.Closer
	r      *jsonrpcwire.Reader
	ev     frameEvents
	callID func() json.RawMessage // the id of the POSTed call; nil on stdio and GET streams
	broken func(err error)        // called when an event stream fails (not on EOF)

	pending []byte // read and not yet handed out
	eol     bool   // a newline is owed after pending
	err     error  // sticky: returned once pending is drained

	// A pooled read buffer goes back to pool once the reader is closed
	// and no Read is running: Close may come from another goroutine
	// while a Read waits on the stream, and pending may point into the
	// buffer. state is frameIdle, frameReading or frameClosed; whoever
	// moves it to its last holder's exit returns br.
	pool  *sync.Pool
	br    *bufio.Reader
	state atomic.Int32
}

// States of a frameReader with a pooled buffer.
const (
	frameIdle int32 = iota
	frameReading
	frameClosed
)

// errReadAfterClose is what a Read after Close returns.
var errReadAfterClose = errors.New("read on a closed upstream stream")

func newLineReader(src io.ReadCloser, max int64, ev frameEvents) *frameReader {
	return &frameReader{src: src, r: jsonrpcwire.NewReader(src, jsonrpcwire.FramingLines, max), ev: ev}
}

// sseBufSize is the read buffer of an event stream: most events fit.
const sseBufSize = 8 << 10

// newSSEReader reads an event stream. With a pool (of *bufio.Reader), its
// read buffer comes from and returns to it: a client makes one event
// stream per call, and a fresh 8 KiB buffer each time was a tenth of the
// bytes a gateway call allocated.
func newSSEReader(body io.ReadCloser, max int64, ev frameEvents, callID func() json.RawMessage, pool *sync.Pool) *frameReader {
	f := &frameReader{src: body, ev: ev, callID: callID}
	if pool == nil {
		f.r = jsonrpcwire.NewReader(body, jsonrpcwire.FramingSSE, max)
		return f
	}
	br, _ := pool.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(body, sseBufSize)
	}
	br.Reset(body)
	f.pool, f.br = pool, br
	f.r = jsonrpcwire.NewBufferedReader(f.br, jsonrpcwire.FramingSSE, max)
	return f
}

// Read implements io.Reader. Only one goroutine (the SDK's reader) calls it.
func (f *frameReader) Read(p []byte) (int, error) {
	if f.pool == nil {
		return f.read(p)
	}
	if !f.state.CompareAndSwap(frameIdle, frameReading) {
		return 0, errReadAfterClose
	}
	n, err := f.read(p)
	if !f.state.CompareAndSwap(frameReading, frameIdle) {
		f.release() // closed while reading: the buffer is ours to return
	}
	return n, err
}

// release returns the buffer to its pool; nothing of the reader is used
// afterwards.
func (f *frameReader) release() {
	f.pending, f.r = nil, nil
	f.br.Reset(nil)
	f.pool.Put(f.br)
	f.br = nil
}

func (f *frameReader) read(p []byte) (int, error) {
	for len(f.pending) == 0 && len(p) > 0 {
		if f.eol {
			f.eol = false
			p[0] = '\n'
			return 1, nil
		}
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// nextMessage returns the next message whole, for a reader of messages
// rather than bytes (stdioConn). Its bytes are valid until the next
// call. Only one goroutine calls it, and never beside Read.
func (f *frameReader) nextMessage() ([]byte, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return nil, f.err
		}
		f.next()
	}
	msg := f.pending
	f.pending, f.eol = nil, false
	return msg, nil
}

// Close closes the source, unblocking a pending Read.
func (f *frameReader) Close() error {
	err := f.src.Close()
	if f.pool != nil && f.state.Swap(frameClosed) == frameIdle {
		f.release() // no Read running, and none will use the buffer
	}
	return err
}

// next reads one message into pending, or sets err.
func (f *frameReader) next() {
	frame, err := f.r.Next()
	sse := f.r.Framing() == jsonrpcwire.FramingSSE
	var tl *jsonrpcwire.TooLargeError
	switch {
	case errors.As(err, &tl):
		kind, reply := oversized(tl, f.callID, f.ev)
		switch {
		case reply != nil && sse:
			b := []byte("event: message\n")
			if tl.EventID != "" {
				b = append(append(append(b, "id: "...), tl.EventID...), '\n')
			}
			f.pending = append(append(append(b, "data: "...), reply...), "\n\n"...)
		case reply != nil:
			f.pending, f.eol = reply, true
		case kind == jsonrpcwire.KindUnknown:
			f.err = errFrameTooLarge
		}
		return
	case err == io.EOF && len(frame) > 0:
		// The stream ended inside an event: the SDK gets what came.
		f.pending, f.err = frame, io.EOF
		return
	case err != nil:
		if err != io.EOF && f.broken != nil {
			f.broken(err)
		}
		f.err = err
		return
	}
	msg := frame
	if sse {
		if f.ev.callNotification != nil && (bytes.Contains(frame, []byte(`"notifications/message"`)) || bytes.Contains(frame, []byte(`"notifications/progress"`))) {
			ev, _ := jsonrpcwire.ParseEvent(frame)
			msg = ev.Data
		}
	} else {
		if t := bytes.TrimLeft(frame, " \t\r\n"); len(t) == 0 || t[0] != '{' && t[0] != '[' {
			if f.ev.noise != nil {
				f.ev.noise(frame)
			}
			return
		}
		if !json.Valid(frame) {
			// The SDK's decoder would wait for the rest of a cut message
			// forever, holding every call; a broken line means the stream
			// can no longer be trusted.
			f.err = errBadLine
			return
		}
		f.eol = true
	}
	f.pending = frame
	if f.ev.callNotification != nil && isCallNotification(msg) {
		f.ev.callNotification()
	}
	if f.ev.response != nil {
		f.ev.response(frame, sse)
	}
}

// isCallNotification reports whether msg is one notifications/message or
// notifications/progress: what a server sends about a call before its
// result, and a caller must get before the result. The substring tests
// keep the common case to two scans.
func isCallNotification(msg []byte) bool {
	if !bytes.Contains(msg, []byte(`"notifications/message"`)) && !bytes.Contains(msg, []byte(`"notifications/progress"`)) {
		return false
	}
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	return json.Unmarshal(msg, &m) == nil && (m.Method == "notifications/message" || m.Method == "notifications/progress") && m.ID == nil
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
		var buf bytes.Buffer
		err := jsonrpcwire.ReadBody(&buf, j.body, -1, j.max)
		var tl *jsonrpcwire.TooLargeError
		switch {
		case errors.As(err, &tl):
			// The whole body is one message: a request shows "method".
			if _, reply := oversized(tl, j.callID, j.ev); reply != nil {
				j.r = bytes.NewReader(reply)
			} else {
				j.r = errReader{errFrameTooLarge}
			}
		case err != nil:
			j.r = errReader{err}
		default:
			if j.ev.response != nil {
				j.ev.response(buf.Bytes(), false)
			}
			j.r = &buf
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

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

var (
	_ io.ReadCloser = (*frameReader)(nil)
	_ io.ReadCloser = (*jsonBody)(nil)
	_ io.ReadCloser = (*cappedBody)(nil)
)
