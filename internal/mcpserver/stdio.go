package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/jsonrpcwire"
)

// frameSource turns a framed byte stream into JSON-RPC messages. Frames
// that are not messages (oversized, malformed JSON, batches) are answered
// with a JSON-RPC error on the writer and skipped, instead of ending the
// connection as the SDK's own stdio transport does: one bad message from
// an editor should not kill the server.
type frameSource struct {
	fr  *jsonrpcwire.Reader
	fw  *jsonrpcwire.Writer
	log *slog.Logger
}

func newFrameSource(in io.Reader, out io.Writer, maxBytes int64, log *slog.Logger) *frameSource {
	fr := jsonrpcwire.NewReader(in, jsonrpcwire.FramingUnknown, maxBytes)
	return &frameSource{fr: fr, fw: jsonrpcwire.NewWriter(out, fr.Framing), log: log}
}

// next returns the next valid frame, copied, or the error that ends the
// stream (io.EOF at a clean end).
func (s *frameSource) next() ([]byte, error) {
	for {
		frame, err := s.fr.Next()
		var tl *jsonrpcwire.TooLargeError
		if errors.As(err, &tl) {
			s.log.Warn("mcp: message over the size limit skipped", "bytes", tl.Size, "limit", tl.Limit)
			s.reply(errorResponse(jsonrpcwire.ScanID(tl.Head), tl))
			continue
		}
		if err != nil {
			return nil, err
		}
		if rej := checkFrame(frame); rej != nil {
			s.reply(rej)
			continue
		}
		return bytes.Clone(frame), nil
	}
}

func (s *frameSource) reply(msg []byte) {
	if err := s.fw.WriteFrame(msg); err != nil {
		s.log.Debug("mcp: writing an error response failed", "err", err)
	}
}

// checkFrame returns the error response for a frame that is not a single
// JSON-RPC message, or nil.
func checkFrame(frame []byte) []byte {
	if !json.Valid(frame) {
		return errorResponse(nil, errNotJSON)
	}
	if t := bytes.TrimSpace(frame); len(t) > 0 && t[0] == '[' {
		return errorResponse(nil, &protocolError{errInvalidRequest, "invalid request: JSON-RPC batches are not supported; send one message per frame"})
	}
	return nil
}

// errNotJSON answers a message that does not parse.
var errNotJSON = &protocolError{errParse, "parse error: the message is not valid JSON"}

// stdioTransport is an mcp.Transport over a framed byte stream; see
// frameSource for how it differs from mcp.IOTransport.
type stdioTransport struct{ conn *stdioConn }

func (t stdioTransport) Connect(context.Context) (mcp.Connection, error) { return t.conn, nil }

// stdioConn implements mcp.Connection. A reader goroutine feeds decoded
// messages to Read; Close stops it, closing the input when it can be
// closed (an *os.File pipe is), which unblocks a pending read.
//
// When the input ends, Read reports it only once the requests already read
// have been answered (or after eofGrace): a client that writes its requests
// and closes stdin, as a shell pipeline does, still gets its answers, while
// an editor that closes stdin to stop the server is not kept waiting by a
// long agent run.
type stdioConn struct {
	src   *frameSource
	in    io.Reader
	msgs  chan jsonrpc.Message
	done  chan struct{}
	ended chan struct{} // closed when the reader goroutine returns
	err   error         // why reading ended; read after ended is closed

	grace time.Duration
	mu    sync.Mutex
	// pending are the requests read and not yet answered. Neither the
	// answer to a request the client cancelled nor its progress is sent
	// (see flights); cancelledTokens are the progress tokens of those.
	pending         map[jsonrpc.ID]*stdioCall
	cancelledTokens map[jsonrpc.ID]bool
	answered        chan struct{} // signalled when pending shrinks

	closeOnce sync.Once
}

// eofGrace bounds how long answers are awaited after the input ends.
const eofGrace = 5 * time.Second

var _ mcp.Connection = (*stdioConn)(nil)

func newStdioConn(in io.Reader, out io.Writer, maxBytes int64, grace time.Duration, log *slog.Logger) *stdioConn {
	c := &stdioConn{
		grace: grace,
		src:   newFrameSource(in, out, maxBytes, log),
		in:    in,
		msgs:  make(chan jsonrpc.Message),
		done:  make(chan struct{}),
		ended: make(chan struct{}),

		pending:         map[jsonrpc.ID]*stdioCall{},
		cancelledTokens: map[jsonrpc.ID]bool{},
		answered:        make(chan struct{}, 1),
	}
	go c.readLoop()
	return c
}

func (c *stdioConn) readLoop() {
	defer close(c.ended)
	for {
		frame, err := c.src.next()
		if err != nil {
			c.err = err
			return
		}
		msg, err := jsonrpc.DecodeMessage(frame)
		if err != nil {
			c.src.reply(errorResponse(jsonrpcwire.ScanID(frame), &protocolError{errInvalidRequest, "invalid request: " + err.Error()}))
			continue
		}
		select {
		case c.msgs <- msg:
		case <-c.done:
			return
		}
	}
}

// Read implements mcp.Connection.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.msgs:
		if req, ok := msg.(*jsonrpc.Request); ok {
			c.mu.Lock()
			if req.IsCall() {
				c.pending[req.ID] = &stdioCall{params: req.Params}
			} else if req.Method == "notifications/cancelled" {
				// Marked before the SDK sees the notification and
				// cancels the handler, which then answers.
				if id, ok := cancelledRequest(req.Params); ok {
					if call := c.pending[id]; call != nil && !call.cancelled {
						call.cancelled = true
						call.token, call.hasToken = progressToken(call.params)
						if call.hasToken {
							c.cancelledTokens[call.token] = true
						}
					}
				}
			}
			c.mu.Unlock()
		}
		return msg, nil
	case <-c.ended:
		if c.err == nil || errors.Is(c.err, io.EOF) {
			c.awaitAnswers(ctx)
			return nil, io.EOF
		}
		return nil, fmt.Errorf("read stdin: %w", c.err)
	case <-c.done:
		return nil, mcp.ErrConnectionClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write implements mcp.Connection.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.done:
		return mcp.ErrConnectionClosed
	default:
	}
	resp, isResp := msg.(*jsonrpc.Response)
	if c.aboutCancelled(msg) {
		if isResp {
			c.answer(resp.ID)
		}
		return nil
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	if err := c.src.fw.WriteFrame(data); err != nil {
		if errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) {
			// The client stopped reading: it hung up, as if stdin ended.
			return fmt.Errorf("write stdout: %w: %w", err, mcp.ErrConnectionClosed)
		}
		return fmt.Errorf("write stdout: %w", err)
	}
	if isResp {
		c.answer(resp.ID)
	}
	return nil
}

// stdioCall is a request read and not yet answered.
type stdioCall struct {
	params    json.RawMessage
	cancelled bool
	// token is the request's progress token, known once it is cancelled.
	token    jsonrpc.ID
	hasToken bool
}

// aboutCancelled reports whether msg is the response to a request the
// client cancelled, or a progress notification about one.
func (c *stdioConn) aboutCancelled(msg jsonrpc.Message) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Response:
		call := c.pending[m.ID]
		return call != nil && call.cancelled
	case *jsonrpc.Request:
		if m.Method != "notifications/progress" || len(c.cancelledTokens) == 0 {
			return false
		}
		tok, ok := progressToken(m.Params)
		return ok && c.cancelledTokens[tok]
	}
	return false
}

// answer forgets a pending request once it is answered (or its answer
// dropped).
func (c *stdioConn) answer(id jsonrpc.ID) {
	c.mu.Lock()
	if call := c.pending[id]; call != nil && call.hasToken {
		delete(c.cancelledTokens, call.token)
	}
	delete(c.pending, id)
	c.mu.Unlock()
	select {
	case c.answered <- struct{}{}:
	default:
	}
}

// awaitAnswers waits until every request read has been answered, for at
// most the grace period.
func (c *stdioConn) awaitAnswers(ctx context.Context) {
	timer := time.NewTimer(c.grace)
	defer timer.Stop()
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-c.answered:
		case <-timer.C:
			return
		case <-c.done:
			return
		case <-ctx.Done():
			return
		}
	}
}

// Close implements mcp.Connection.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		if cl, ok := c.in.(io.Closer); ok {
			_ = cl.Close()
		}
	})
	return nil
}

// SessionID implements mcp.Connection; stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }

// wait waits for the reader goroutine, which Close unblocks when closing
// the input interrupts its read (a pipe). A terminal or an inherited
// stdin may not be interruptible: after readerGrace the goroutine is left
// to end with the process, rather than keeping a stopping server alive.
func (c *stdioConn) wait() {
	timer := time.NewTimer(readerGrace)
	defer timer.Stop()
	select {
	case <-c.ended:
	case <-timer.C:
	}
}

// readerGrace bounds how long stopping waits for a blocked read.
const readerGrace = time.Second
