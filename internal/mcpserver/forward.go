package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ForwardOptions configure Forward.
type ForwardOptions struct {
	// URL is the daemon's MCP endpoint, such as http://127.0.0.1:4200/mcp.
	URL string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// HTTPClient defaults to a client without a timeout (answers stream).
	HTTPClient *http.Client
	// MaxMessageBytes caps one message read from in; default
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64
	Logger          *slog.Logger

	eofGrace time.Duration // tests shorten the wait for answers at EOF
}

// Forward relays MCP between a byte stream (an editor on stdin/stdout) and
// a running daemon's Streamable HTTP endpoint, until in ends or ctx is
// done. Each message becomes a POST; answers, whether JSON or an SSE
// stream, are written back as frames in the framing the editor used; after
// initialize, a GET stream carries the server's own messages (list_changed
// notifications, elicitation requests). Messages are relayed as raw bytes:
// only ids and methods are looked at.
func Forward(ctx context.Context, in io.Reader, out io.Writer, opts ForwardOptions) error {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &relay{opts: opts, log: log, src: newFrameSource(in, out, opts.MaxMessageBytes, log)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if c, ok := in.(io.Closer); ok {
		// Closing the input unblocks a pending read when ctx ends.
		stop := context.AfterFunc(ctx, func() { _ = c.Close() })
		defer stop()
	}
	// Frames are read on their own goroutine so that a stop (ctx) is not
	// held up by a read that closing the input cannot interrupt.
	frames := make(chan []byte)
	readDone := make(chan error, 1)
	go func() {
		for {
			frame, err := r.src.next()
			if err != nil {
				readDone <- err
				return
			}
			select {
			case frames <- frame:
			case <-ctx.Done():
				readDone <- ctx.Err()
				return
			}
		}
	}()
	var readErr error
	readerEnded := false
loop:
	for {
		var frame []byte
		select {
		case frame = <-frames:
		case err := <-readDone:
			readerEnded = true
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				readErr = fmt.Errorf("read mcp input: %w", err)
			}
			break loop
		case <-ctx.Done():
			break loop
		}
		id, method, _ := topFields(frame)
		if method == "initialize" {
			// The session id comes with its answer: nothing may be sent
			// before it is known.
			r.post(ctx, frame, id, method, nil)
			continue
		}
		// Each message is posted on its own goroutine (answers stream for
		// as long as a run lasts), but the next one waits until this one's
		// body is on the wire, so a cancellation cannot overtake its
		// request.
		sent := make(chan struct{})
		r.posts.Go(func() { r.post(ctx, frame, id, method, sent) })
		select {
		case <-sent:
		case <-ctx.Done():
		}
	}
	// The input ended. Answers already on their way are still delivered
	// (a pipeline closes stdin after its requests), for a grace period;
	// then what still runs is cancelled, as an editor that closed stdin
	// wants the server to stop.
	posted := make(chan struct{})
	go func() { r.posts.Wait(); close(posted) }()
	select {
	case <-posted:
	case <-time.After(r.grace()):
	case <-ctx.Done():
	}
	cancel()
	<-posted
	r.wg.Wait()
	r.endSession()
	if !readerEnded {
		// Cancelled or closed, the reader ends at once unless its read
		// cannot be interrupted (see stdioConn.wait).
		select {
		case <-readDone:
		case <-time.After(readerGrace):
		}
	}
	return readErr
}

func (r *relay) grace() time.Duration {
	if r.opts.eofGrace > 0 {
		return r.opts.eofGrace
	}
	return eofGrace
}

// relay is the state of one Forward.
type relay struct {
	opts ForwardOptions
	log  *slog.Logger
	src  *frameSource
	// posts are the POSTs in flight; wg the GET stream.
	posts sync.WaitGroup
	wg    sync.WaitGroup

	mu        sync.Mutex
	sessionID string
	version   string
	listening bool
}

func (r *relay) session() (id, version string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessionID, r.version
}

func (r *relay) newRequest(ctx context.Context, method string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.opts.URL, body)
	if err != nil {
		return nil, err
	}
	if r.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.opts.APIKey)
	}
	if sid, _ := r.session(); sid != "" {
		req.Header.Set(headerSessionID, sid)
	}
	return req, nil
}

// post sends one message and relays what comes back. sent, if not nil, is
// closed once the body has been handed to the connection.
func (r *relay) post(ctx context.Context, frame []byte, id json.RawMessage, method string, sent chan struct{}) {
	var once sync.Once
	done := func() {
		if sent != nil {
			once.Do(func() { close(sent) })
		}
	}
	defer done()
	isRequest := method != "" && len(id) > 0 && string(id) != "null"
	req, err := r.newRequest(ctx, http.MethodPost, &signalReader{r: bytes.NewReader(frame), eof: done})
	if err != nil {
		r.fail(id, isRequest, err.Error())
		return
	}
	req.ContentLength = int64(len(frame))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	_, version := r.session()
	setRequestHeaders(req.Header, frame, version)
	resp, err := r.opts.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			r.fail(id, isRequest, "cannot reach the agentd daemon: "+err.Error())
		}
		return
	}
	defer resp.Body.Close()
	if method == "initialize" {
		if sid := resp.Header.Get(headerSessionID); sid != "" {
			r.mu.Lock()
			r.sessionID = sid
			r.mu.Unlock()
		}
	}
	r.relayResponse(ctx, resp, id, isRequest)
}

// relayResponse writes the messages of a response to the editor; an
// error status without a JSON-RPC body becomes an error response.
func (r *relay) relayResponse(ctx context.Context, resp *http.Response, id json.RawMessage, isRequest bool) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream" && resp.StatusCode/100 == 2:
		sr := newSSEReader(resp.Body, int(r.opts.MaxMessageBytes)+1024)
		for {
			ev, err := sr.next()
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, io.EOF) {
					r.fail(id, isRequest, "the answer stream broke: "+err.Error())
				}
				return
			}
			if len(ev.data) > 0 {
				r.deliver(ctx, ev.data)
			}
		}
	case ct == "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, r.opts.MaxMessageBytes+1))
		if err == nil && json.Valid(body) && len(body) > 0 {
			r.deliver(ctx, body)
			return
		}
		r.fail(id, isRequest, fmt.Sprintf("the agentd daemon answered HTTP %d with an unreadable body", resp.StatusCode))
	case resp.StatusCode/100 == 2:
		// 202 Accepted for notifications and responses.
	default:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		msg := fmt.Sprintf("the agentd daemon answered HTTP %d", resp.StatusCode)
		if t := strings.TrimSpace(string(body)); t != "" {
			msg += ": " + t
		}
		r.fail(id, isRequest, msg)
	}
}

// deliver writes one message to the editor. The answer to initialize
// fixes the protocol version and, for session-based versions, opens the
// GET stream.
func (r *relay) deliver(ctx context.Context, msg []byte) {
	var res struct {
		Result *struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if bytes.Contains(msg, []byte(`"protocolVersion"`)) && json.Unmarshal(msg, &res) == nil && res.Result != nil && res.Result.ProtocolVersion != "" {
		r.mu.Lock()
		r.version = res.Result.ProtocolVersion
		start := !r.listening && r.sessionID != "" && r.version < statelessVersion
		if start {
			r.listening = true
		}
		r.mu.Unlock()
		if start {
			r.wg.Go(func() { r.listen(ctx) })
		}
	}
	r.src.reply(msg)
}

func (r *relay) fail(id json.RawMessage, isRequest bool, msg string) {
	r.log.Warn("mcp relay: " + msg)
	if isRequest {
		r.src.reply(errorResponse(id, jsonrpcInternalError, msg))
	}
}

// listen keeps the session's GET stream open, reconnecting with backoff
// and Last-Event-ID, until ctx ends or the server says there is no stream
// (405) or no session (404).
func (r *relay) listen(ctx context.Context) {
	lastID := ""
	delay := time.Second
	for ctx.Err() == nil {
		req, err := r.newRequest(ctx, http.MethodGet, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		if _, v := r.session(); v != "" {
			req.Header.Set(headerProtocolVersion, v)
		}
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := r.opts.HTTPClient.Do(req)
		if err == nil {
			switch {
			case resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotFound:
				resp.Body.Close()
				return
			case resp.StatusCode/100 == 2:
				delay = time.Second
				sr := newSSEReader(resp.Body, int(r.opts.MaxMessageBytes)+1024)
				for {
					ev, err := sr.next()
					if err != nil {
						break
					}
					if ev.id != "" {
						lastID = ev.id
					}
					if ev.retry > 0 {
						delay = ev.retry
					}
					if len(ev.data) > 0 {
						r.deliver(ctx, ev.data)
					}
				}
			}
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, 30*time.Second)
	}
}

// endSession deletes the daemon-side session, best effort.
func (r *relay) endSession() {
	sid, _ := r.session()
	if sid == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := r.newRequest(ctx, http.MethodDelete, nil)
	if err != nil {
		return
	}
	if resp, err := r.opts.HTTPClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// signalReader calls eof once its reader is exhausted (all Len bytes read,
// or EOF): the HTTP client has then written the whole body.
type signalReader struct {
	r   *bytes.Reader
	eof func()
}

func (s *signalReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil || s.r.Len() == 0 {
		s.eof()
	}
	return n, err
}

// setRequestHeaders sets the headers the Streamable HTTP transport wants
// for msg: MCP-Protocol-Version (from the message's _meta under the
// 2026-07-28 protocol, else the negotiated version), and for 2026-07-28
// Mcp-Method and Mcp-Name.
func setRequestHeaders(h http.Header, msg []byte, negotiated string) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name string                     `json:"name"`
			URI  string                     `json:"uri"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &m) != nil {
		if negotiated != "" {
			h.Set(headerProtocolVersion, negotiated)
		}
		return
	}
	version := negotiated
	if raw, ok := m.Params.Meta["io.modelcontextprotocol/protocolVersion"]; ok {
		var v string
		if json.Unmarshal(raw, &v) == nil && v != "" {
			version = v
		}
	}
	if version != "" {
		h.Set(headerProtocolVersion, version)
	}
	if version < statelessVersion || m.Method == "" {
		return
	}
	h.Set("Mcp-Method", m.Method)
	switch m.Method {
	case "tools/call", "prompts/get":
		h.Set("Mcp-Name", m.Params.Name)
	case "resources/read":
		h.Set("Mcp-Name", m.Params.URI)
	}
}
