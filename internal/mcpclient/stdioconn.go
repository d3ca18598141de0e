package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioLink is the mcp.Transport of a link to a stdio server: its stdout
// through a line frameReader, its stdin.
//
// The SDK's mcp.IOTransport starts a goroutine per connection that
// decodes each message and hands it over a channel to the connection's
// one reader (the SDK's read loop), so that Close can unblock a Read of
// a stream that closing does not unblock (a terminal's stdin). A child's
// stdout is a pipe, whose Close does unblock a Read: here the SDK's
// reader decodes each message itself, which spares every message a
// goroutine switch (a wake-up on a call's critical path) and every link
// a goroutine. TestStdioConnMatchesIOTransport and
// FuzzStdioConnMatchesIOTransport read the same streams both ways.
type stdioLink struct {
	r *frameReader
	w io.WriteCloser
	// sent sees each request written (taskWatch.sentCall); nil for none.
	sent func(id jsonrpc.ID, method string, params []byte)
}

// Connect implements mcp.Transport.
func (l *stdioLink) Connect(context.Context) (mcp.Connection, error) {
	return &stdioConn{r: l.r, w: l.w, sent: l.sent, closing: make(chan struct{})}, nil
}

// stdioConn implements mcp.Connection over a stdio server's pipes.
type stdioConn struct {
	r    *frameReader
	w    io.WriteCloser
	sent func(id jsonrpc.ID, method string, params []byte)

	// queue holds the unread messages of a batch. Only the SDK's read
	// loop calls Read, so it needs no lock.
	queue []jsonrpc.Message

	writeMu sync.Mutex

	// batched are the ids of the requests that came in batches and are
	// not answered yet.
	batchMu sync.Mutex
	batched map[jsonrpc.ID]bool

	// direct are the tools/calls agentd wrote itself (directcall.go).
	direct directCalls

	closeOnce sync.Once
	closing   chan struct{} // closed before the pipes are
	closeErr  error
}

var _ mcp.Connection = (*stdioConn)(nil)

// Read implements mcp.Connection: the next message, decoded in the
// caller's goroutine. Responses to the calls agentd wrote itself go to
// their callers instead. The SDK's read loop ends at the first error, so
// an error also ends every direct call.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.read(ctx)
		if err != nil {
			c.direct.fail(err, false)
			return nil, err
		}
		if !c.direct.deliver(msg) {
			return msg, nil
		}
	}
}

func (c *stdioConn) read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	frame, err := c.r.nextMessage()
	if err != nil {
		select {
		case <-c.closing:
			// Closed: io.EOF, as IOTransport's Read reports, whatever
			// the pipe's Read returned on being closed.
			return nil, io.EOF
		default:
		}
		return nil, err
	}
	msgs, err := c.decodeFrame(frame)
	if err != nil {
		return nil, err
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// decodeFrame decodes one frame: a JSON-RPC message, or a batch of them,
// as IOTransport does. The frame's bytes belong to the reader and are
// reused: what is decoded must not point into them.
func (c *stdioConn) decodeFrame(frame []byte) ([]jsonrpc.Message, error) {
	// IOTransport refuses a message followed on its line by anything but
	// the line's end, blanks included.
	if v := bytes.TrimRight(frame, " \t\r\n"); len(v) < len(frame) && frame[len(v)] != '\n' && frame[len(v)] != '\r' {
		return nil, errors.New("invalid trailing data at the end of stream")
	}
	t := bytes.TrimLeft(frame, " \t\r\n")
	if len(t) == 0 || t[0] != '[' {
		msg, err := decodeMessage(frame)
		if err != nil {
			return nil, err
		}
		return []jsonrpc.Message{msg}, nil
	}
	var batch []json.RawMessage // copies each element
	if err := json.Unmarshal(frame, &batch); err != nil {
		return nil, err
	}
	if len(batch) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(batch))
	ids := map[jsonrpc.ID]bool{}
	for _, raw := range batch {
		msg, err := decodeMessage(raw)
		if err != nil {
			return nil, err
		}
		// As IOTransport: every request of a batch, a notification's
		// absent id included, must have an id of its own.
		if req, ok := msg.(*jsonrpc.Request); ok {
			if ids[req.ID] {
				return nil, fmt.Errorf("duplicate message ID %q", req.ID)
			}
			ids[req.ID] = true
		}
		msgs = append(msgs, msg)
	}
	// ... and not one of an earlier batch's requests still unanswered
	// (which for a notification is for ever).
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for id := range ids {
		if c.batched[id] {
			return nil, fmt.Errorf("batch contains previously seen request %v", id.Raw())
		}
	}
	if c.batched == nil {
		c.batched = map[jsonrpc.ID]bool{}
	}
	for id := range ids {
		c.batched[id] = true
	}
	return msgs, nil
}

// Write implements mcp.Connection: one line per message. A server's
// batch of requests is answered one response at a time.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	data = append(data, '\n')
	if req, ok := msg.(*jsonrpc.Request); ok && c.sent != nil && req.IsCall() {
		c.sent(req.ID, req.Method, req.Params)
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.batchMu.Lock()
		delete(c.batched, resp.ID)
		c.batchMu.Unlock()
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.w.Write(data)
	return err
}

// Close implements mcp.Connection: it closes both pipes, which unblocks
// a Read in progress.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closing)
		// As Read will say to the SDK's calls once the pipes are closed.
		c.direct.fail(io.EOF, true)
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
	})
	return c.closeErr
}

// SessionID implements mcp.Connection; stdio has no session id.
func (c *stdioConn) SessionID() string { return "" }
