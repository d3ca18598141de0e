package mcpserver

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
const (
	FramingUnknown Framing = iota
	FramingLines
	FramingContentLength
)

func (f Framing) String() string {
	switch f {
	case FramingLines:
		return "lines"
	case FramingContentLength:
		return "content-length"
	}
	return "unknown"
}

// headMax is how much of an oversized frame is kept, to find its id.
const headMax = 4096

// maxHeaderBytes bounds a Content-Length header block.
const maxHeaderBytes = 8192

// errFraming is wrapped by unrecoverable framing errors: after one the
// stream cannot be resynchronised, so the connection ends.
var errFraming = errors.New("bad message framing")

// tooLargeError reports a frame over the size limit. The frame has been
// skipped, so reading can go on; Head holds its first bytes, from which the
// request id can often be recovered for the error response.
type tooLargeError struct {
	Size  int64 // bytes seen (at least Limit+1)
	Limit int64
	Head  []byte
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("message too large: over the %s limit", byteSize(e.Limit))
}

// frameReader reads frames from a byte stream whose framing it detects from
// the first bytes: "Content-Length:" (any case) selects header framing,
// anything else newline-delimited JSON.
type frameReader struct {
	br    *bufio.Reader
	limit int64
	mode  atomic.Int32
	buf   []byte // reused for lines that span several bufio chunks
}

func newFrameReader(r io.Reader, limit int64) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// Framing returns the detected framing; FramingUnknown until the first
// bytes have arrived.
func (r *frameReader) Framing() Framing { return Framing(r.mode.Load()) }

// Next returns the next frame. The returned slice is valid until the next
// call. Errors: io.EOF at a clean end, *tooLargeError for a skipped
// oversized frame (call Next again), an errFraming error when the stream
// cannot be read any further.
func (r *frameReader) Next() ([]byte, error) {
	if r.Framing() == FramingUnknown {
		m, err := r.detect()
		if err != nil {
			return nil, err
		}
		r.mode.Store(int32(m))
	}
	if r.Framing() == FramingContentLength {
		return r.nextCL()
	}
	return r.nextLine()
}

const clPrefix = "content-length:"

// detect skips leading white space and decides the framing. It peeks one
// byte at a time and stops at the first byte that cannot start
// "Content-Length:", so a short first message is never waited on.
func (r *frameReader) detect() (Framing, error) {
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
func (r *frameReader) nextLine() ([]byte, error) {
	for {
		r.buf = r.buf[:0]
		var size int64 // bytes of the line, line ending included
		var last []byte
		over := false
		var err error
		for {
			var chunk []byte
			chunk, err = r.br.ReadSlice('\n')
			size += int64(len(chunk))
			last = chunk
			if !over {
				r.buf = append(r.buf, chunk...)
				// +2: the line ending is not part of the message.
				if int64(len(r.buf)) > r.limit+2 {
					over = true
					r.buf = r.buf[:min(len(r.buf), headMax)]
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
			return nil, &tooLargeError{Size: size - lineEnding(last), Limit: r.limit, Head: bytes.Clone(r.buf)}
		}
		line := bytes.TrimRight(r.buf, "\r\n")
		if len(bytes.TrimSpace(line)) == 0 {
			if err == io.EOF {
				return nil, io.EOF
			}
			continue
		}
		if int64(len(line)) > r.limit {
			return nil, &tooLargeError{Size: int64(len(line)), Limit: r.limit, Head: bytes.Clone(line[:min(len(line), headMax)])}
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
func (r *frameReader) nextCL() ([]byte, error) {
	length := int64(-1)
	headerBytes := 0
	sawHeader := false
	for {
		line, err := r.br.ReadSlice('\n')
		headerBytes += len(line)
		if err == bufio.ErrBufferFull || headerBytes > maxHeaderBytes {
			return nil, fmt.Errorf("%w: header block longer than %d bytes", errFraming, maxHeaderBytes)
		}
		if err != nil {
			if err == io.EOF && headerBytes == 0 {
				return nil, io.EOF
			}
			if err == io.EOF && len(bytes.TrimSpace(line)) == 0 && !sawHeader {
				return nil, io.EOF
			}
			if err == io.EOF {
				return nil, fmt.Errorf("%w: stream ended inside a header block", errFraming)
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
			return nil, fmt.Errorf("%w: header line without ':'", errFraming)
		}
		if bytes.EqualFold(bytes.TrimSpace(name), []byte("content-length")) {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: invalid Content-Length", errFraming)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, fmt.Errorf("%w: header block without Content-Length", errFraming)
	}
	if length > r.limit {
		head := make([]byte, min(length, headMax))
		n, err := io.ReadFull(r.br, head)
		if err != nil {
			return nil, fmt.Errorf("%w: stream ended inside a message", errFraming)
		}
		if _, err := io.CopyN(io.Discard, r.br, length-int64(n)); err != nil {
			return nil, fmt.Errorf("%w: stream ended inside a message", errFraming)
		}
		return nil, &tooLargeError{Size: length, Limit: r.limit, Head: head}
	}
	if int64(cap(r.buf)) < length {
		r.buf = make([]byte, length)
	}
	r.buf = r.buf[:length]
	if _, err := io.ReadFull(r.br, r.buf); err != nil {
		return nil, fmt.Errorf("%w: stream ended inside a message", errFraming)
	}
	return r.buf, nil
}

// frameWriter writes whole frames in the framing its reader detected.
// It is safe for concurrent use.
type frameWriter struct {
	mu     sync.Mutex
	w      io.Writer
	mode   func() Framing
	header []byte
}

// WriteFrame writes msg, which must be compact JSON (no raw newlines).
func (w *frameWriter) WriteFrame(msg []byte) error {
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

// byteSize renders n for error messages: "10 MB", "512 KB", "100 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
