// Package jsonrpcwire reads and writes JSON-RPC 2.0 messages on the byte
// streams MCP uses: newline-delimited JSON and Content-Length frames
// (stdio), server-sent events and whole bodies (HTTP). Every reader caps
// the size of a message without ever holding an oversized one, yet keeps
// what is needed to answer it: its first and last bytes, from which Scan
// and Classify recover its id, and an event's id field.
//
// Both MCP edges are thin adapters over it: mcpserver for what clients
// send, mcpclient for what upstream servers answer. It is vocabulary: it
// imports no protocol SDK, so JSON-RPC error codes are passed in by the
// edges, which take them from go-sdk's jsonrpc package.
package jsonrpcwire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
)

// Framing is how JSON-RPC messages are delimited on a byte stream.
type Framing int32

// Framings. MCP's stdio transport is newline-delimited JSON; Content-Length
// headers (LSP style) are not MCP, but some older clients and the seed
// systems speak them, so a stream that starts with one is answered in kind.
// FramingSSE is a text/event-stream body: one frame per event.
const (
	FramingUnknown Framing = iota // lines or Content-Length, detected from the first bytes
	FramingLines
	FramingContentLength
	FramingSSE
)

func (f Framing) String() string {
	switch f {
	case FramingLines:
		return "lines"
	case FramingContentLength:
		return "content-length"
	case FramingSSE:
		return "sse"
	}
	return "unknown"
}

// HeadMax is how much of each end of an oversized message is kept.
const HeadMax = 4096

// maxHeaderBytes bounds a Content-Length header block.
const maxHeaderBytes = 8192

// Read buffer sizes: messages that fit are handed out without a copy. An
// event stream gets a smaller one, as one is made per HTTP response;
// longer events are assembled.
const (
	streamBufSize = 64 << 10
	eventBufSize  = 8 << 10
)

// ErrFraming is wrapped by unrecoverable framing errors: after one the
// stream cannot be resynchronised, so the connection ends.
var ErrFraming = errors.New("bad message framing")

// TooLargeError reports a message over the size limit. The reader has
// skipped it, so reading can go on.
type TooLargeError struct {
	Size  int64 // bytes seen: at least Limit+1 (a line's ending not counted)
	Limit int64
	// Head and Tail are the message's first and last HeadMax bytes; for
	// an event, of its data. Scan and Classify find its id in them.
	Head, Tail []byte
	// EventID is the id field of an oversized event, "" if none.
	EventID string
}

// Error is the one text of every "too large" reply, on either edge.
func (e *TooLargeError) Error() string {
	return "message too large: over the " + Size(e.Limit) + " limit"
}

// Size renders a byte count for messages: "10 MB", "512 KB", "100 bytes".
// Limits are usually round; other counts are printed exactly.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Reader reads frames of at most a limit from a byte stream.
type Reader struct {
	br    *bufio.Reader
	limit int64
	mode  atomic.Int32
	buf   []byte // a frame that spans several bufio chunks
	edges edges  // the ends of an oversized frame
}

// NewReader returns a Reader of frames of at most limit bytes in framing
// f; FramingUnknown detects lines or Content-Length from the first bytes.
func NewReader(r io.Reader, f Framing, limit int64) *Reader {
	size := streamBufSize
	if f == FramingSSE {
		size = eventBufSize
	}
	return NewBufferedReader(bufio.NewReaderSize(r, size), f, limit)
}

// NewBufferedReader is NewReader reading through br, which the caller
// has set (bufio.Reader.Reset) to the stream: a client that reads one
// short event stream per call can reuse buffers instead of allocating one
// per stream. br must not be used by anyone else until the Reader is done.
func NewBufferedReader(br *bufio.Reader, f Framing, limit int64) *Reader {
	rd := &Reader{br: br, limit: limit}
	rd.mode.Store(int32(f))
	return rd
}

// Framing returns the framing; FramingUnknown until detection has seen
// the first bytes.
func (r *Reader) Framing() Framing { return Framing(r.mode.Load()) }

// Next returns the next frame: a non-blank line without its line ending,
// a Content-Length body, or an event with the blank line that ends it.
// The slice is valid until the next call. Errors: io.EOF at a clean end;
// *TooLargeError for a skipped oversized frame (call Next again); an
// ErrFraming error when the stream cannot be read any further. An event
// stream that ends inside an event returns what came of it with io.EOF.
func (r *Reader) Next() ([]byte, error) {
	if cap(r.buf) > 1<<20 {
		r.buf = nil // do not keep a huge buffer after one huge message
	}
	r.buf = r.buf[:0]
	r.edges.reset()
	if r.Framing() == FramingUnknown {
		m, err := r.detect()
		if err != nil {
			return nil, err
		}
		r.mode.Store(int32(m))
	}
	switch r.Framing() {
	case FramingContentLength:
		return r.nextCL()
	case FramingSSE:
		return r.nextEvent()
	}
	return r.nextLine()
}

const clPrefix = "content-length:"

// detect skips leading white space and decides the framing. It peeks one
// byte at a time and stops at the first byte that cannot start
// "Content-Length:", so a short first message is never waited on.
func (r *Reader) detect() (Framing, error) {
	for {
		b, err := r.br.Peek(1)
		if err != nil {
			return FramingUnknown, err
		}
		if !isSpace(b[0]) {
			break
		}
		_, _ = r.br.ReadByte()
	}
	for n := 1; n <= len(clPrefix); n++ {
		b, err := r.br.Peek(n)
		if len(b) < n {
			if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
				// A stream that ends mid-prefix is read as lines: the
				// line reader reports what is left as a frame.
				return FramingLines, nil
			}
			return FramingUnknown, err
		}
		if lower(b[n-1]) != clPrefix[n-1] {
			return FramingLines, nil
		}
	}
	return FramingContentLength, nil
}

// nextLine returns the next non-blank line without its line ending.
func (r *Reader) nextLine() ([]byte, error) {
	for {
		r.buf = r.buf[:0]
		var (
			size  int64 // bytes of the line, line ending included
			chunk []byte
			err   error
			over  bool
		)
		for {
			chunk, err = r.br.ReadSlice('\n')
			size += int64(len(chunk))
			switch {
			case over:
				_, _ = r.edges.Write(chunk)
			case err != bufio.ErrBufferFull && len(r.buf) == 0:
				// The whole line is in the read buffer: no copy.
			default:
				r.buf = append(r.buf, chunk...)
				// +2: the line ending is not part of the message.
				if int64(len(r.buf)) > r.limit+2 {
					over = true
					_, _ = r.edges.Write(r.buf)
					r.buf = r.buf[:0]
				}
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if over {
			return nil, r.tooLarge(size-lineEnding(chunk), "")
		}
		line := chunk
		if len(r.buf) > 0 {
			line = r.buf
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			if err == io.EOF {
				return nil, io.EOF
			}
			continue
		}
		if int64(len(line)) > r.limit {
			_, _ = r.edges.Write(line)
			return nil, r.tooLarge(int64(len(line)), "")
		}
		return line, nil
	}
}

// lineEnding is the length of the line ending at the end of chunk.
func lineEnding(chunk []byte) int64 {
	switch {
	case bytes.HasSuffix(chunk, []byte("\r\n")):
		return 2
	case bytes.HasSuffix(chunk, []byte("\n")):
		return 1
	}
	return 0
}

// nextCL reads one header block and the body it announces.
func (r *Reader) nextCL() ([]byte, error) {
	length := int64(-1)
	headerBytes := 0
	sawHeader := false
	for {
		line, err := r.br.ReadSlice('\n')
		headerBytes += len(line)
		if err == bufio.ErrBufferFull || headerBytes > maxHeaderBytes {
			return nil, fmt.Errorf("%w: header block longer than %d bytes", ErrFraming, maxHeaderBytes)
		}
		if err != nil {
			if err == io.EOF && (headerBytes == 0 || len(bytes.TrimSpace(line)) == 0 && !sawHeader) {
				return nil, io.EOF
			}
			if err == io.EOF {
				return nil, fmt.Errorf("%w: stream ended inside a header block", ErrFraming)
			}
			return nil, err
		}
		text := bytes.TrimRight(line, "\r\n")
		if len(text) == 0 {
			if !sawHeader {
				continue // blank lines between frames
			}
			break
		}
		sawHeader = true
		name, value, ok := bytes.Cut(text, []byte{':'})
		if !ok {
			return nil, fmt.Errorf("%w: header line without ':'", ErrFraming)
		}
		if bytes.EqualFold(bytes.TrimSpace(name), []byte("content-length")) {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: invalid Content-Length", ErrFraming)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("%w: header block without Content-Length", ErrFraming)
	}
	if length > r.limit {
		if _, err := io.CopyN(&r.edges, r.br, length); err != nil {
			return nil, fmt.Errorf("%w: stream ended inside a message", ErrFraming)
		}
		return nil, r.tooLarge(length, "")
	}
	if int64(cap(r.buf)) < length {
		r.buf = make([]byte, length)
	}
	r.buf = r.buf[:length]
	if _, err := io.ReadFull(r.br, r.buf); err != nil {
		return nil, fmt.Errorf("%w: stream ended inside a message", ErrFraming)
	}
	return r.buf, nil
}

// nextEvent reads one event, up to and including its blank line.
func (r *Reader) nextEvent() ([]byte, error) {
	var (
		size      int64
		over      bool
		id        []byte // the event's id line
		lineStart = true
	)
	for {
		chunk, err := r.br.ReadSlice('\n')
		startedLine := lineStart
		lineStart = err == nil // the chunk ended with its newline
		size += int64(len(chunk))
		if !over && size > r.limit {
			over = true
			id = eventField(r.buf, "id:")
			_, _ = r.edges.Write(r.buf)
			r.buf = r.buf[:0]
		}
		if over {
			if startedLine && id == nil && bytes.HasPrefix(chunk, []byte("id:")) {
				id = bytes.Clone(chunk)
			}
			_, _ = r.edges.Write(chunk)
		} else {
			r.buf = append(r.buf, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err != io.EOF {
				return nil, err
			}
			if !over {
				if len(r.buf) == 0 {
					return nil, io.EOF
				}
				return r.buf, io.EOF
			}
			break // the next call reports the end
		}
		// A blank line ends the event.
		if startedLine && (len(chunk) == 1 || len(chunk) == 2 && chunk[0] == '\r') {
			break
		}
	}
	if !over {
		return r.buf, nil
	}
	value := bytes.TrimRight(bytes.TrimPrefix(id, []byte("id:")), "\r\n")
	e := r.tooLarge(size, string(bytes.TrimPrefix(value, []byte(" "))))
	e.Head, e.Tail = eventData(e.Head), eventTail(e.Tail)
	return nil, e
}

func (r *Reader) tooLarge(size int64, eventID string) *TooLargeError {
	e := &TooLargeError{Size: size, Limit: r.limit, Head: bytes.Clone(r.edges.head), Tail: bytes.Clone(r.edges.tailBytes()), EventID: eventID}
	r.edges.reset()
	return e
}

// edges remembers the first and the last HeadMax bytes of a stream of
// chunks without holding the rest.
type edges struct {
	head []byte
	tail []byte // compacted when it grows past 2*HeadMax
}

// Write implements io.Writer (for io.CopyN); it never fails.
func (e *edges) Write(p []byte) (int, error) {
	if len(e.head) < HeadMax {
		k := min(HeadMax-len(e.head), len(p))
		e.head = append(e.head, p[:k]...)
	}
	if len(p) >= HeadMax {
		e.tail = append(e.tail[:0], p[len(p)-HeadMax:]...)
		return len(p), nil
	}
	e.tail = append(e.tail, p...)
	if len(e.tail) > 2*HeadMax {
		e.tail = append(e.tail[:0], e.tail[len(e.tail)-HeadMax:]...)
	}
	return len(p), nil
}

func (e *edges) tailBytes() []byte {
	if len(e.tail) > HeadMax {
		return e.tail[len(e.tail)-HeadMax:]
	}
	return e.tail
}

func (e *edges) reset() { e.head, e.tail = e.head[:0], e.tail[:0] }

// Writer writes whole frames in the framing of its Reader. It is safe for
// concurrent use.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	mode   func() Framing
	header []byte
}

// NewWriter returns a Writer to w in the framing mode returns at each
// write (a Reader's Framing: answers go out as the requests came in).
func NewWriter(w io.Writer, mode func() Framing) *Writer {
	return &Writer{w: w, mode: mode}
}

// WriteFrame writes msg, which must be compact JSON (no raw newlines).
func (w *Writer) WriteFrame(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mode() == FramingContentLength {
		w.header = append(w.header[:0], "Content-Length: "...)
		w.header = strconv.AppendInt(w.header, int64(len(msg)), 10)
		w.header = append(w.header, "\r\n\r\n"...)
		if _, err := w.w.Write(w.header); err != nil {
			return err
		}
		_, err := w.w.Write(msg)
		return err
	}
	// One Write per frame keeps frames whole even if w is shared.
	w.header = append(append(w.header[:0], msg...), '\n')
	_, err := w.w.Write(w.header)
	return err
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
