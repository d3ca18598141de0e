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

	"github.com/agentd/agentd/internal/jsonrpcwire"
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
	r := &relay{opts: opts, log: log, src: newFrameSource(in, out, opts.MaxMessageBytes, log), renewed: make(chan struct{}, 1)}
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
		f := jsonrpcwire.Scan(frame)
		id, method := f.ID, f.Method
		if method == "initialize" {
			// The session id comes with its answer: nothing may be sent
			// before it is known. The message is kept to open a new
			// session should the daemon lose this one.
			r.mu.Lock()
			r.initFrame = bytes.Clone(frame)
			r.mu.Unlock()
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
	initFrame []byte // the editor's initialize, replayed by renew

	// renewing serializes renew: concurrent requests refused for the same
	// lost session wait for one new session.
	renewing sync.Mutex
	// renewed wakes the GET stream's wait for reconnection when a new
	// session opens, so that no notification of the new one is missed.
	renewed chan struct{}
}

func (r *relay) session() (id, version string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessionID, r.version
}

func (r *relay) newRequest(ctx context.Context, method string, body io.Reader) (*http.Request, error) {
	sid, _ := r.session()
	return r.newSessionRequest(ctx, method, body, sid)
}

func (r *relay) newSessionRequest(ctx context.Context, method string, body io.Reader, sid string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.opts.URL, body)
	if err != nil {
		return nil, err
	}
	if r.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.opts.APIKey)
	}
	if sid != "" {
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
	for attempt := 0; ; attempt++ {
		sid, version := r.session()
		req, err := r.newSessionRequest(ctx, http.MethodPost, &signalReader{r: bytes.NewReader(frame), eof: done}, sid)
		if err != nil {
			r.fail(id, isRequest, err.Error())
			return
		}
		req.ContentLength = int64(len(frame))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		setRequestHeaders(req.Header, frame, version)
		resp, err := r.opts.HTTPClient.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				r.fail(id, isRequest, r.unreachable(err))
			}
			return
		}
		if resp.StatusCode == http.StatusNotFound && sid != "" && method != "initialize" && attempt == 0 {
			// The daemon does not know the session: it restarted (or
			// was upgraded) since. The request was refused before it
			// ran, so it is sent again, once, in a new session.
			resp.Body.Close()
			if err := r.renew(ctx, sid); err != nil {
				if ctx.Err() == nil {
					r.fail(id, isRequest, err.Error())
				}
				return
			}
			continue
		}
		if method == "initialize" {
			if sid := resp.Header.Get(headerSessionID); sid != "" {
				r.mu.Lock()
				r.sessionID = sid
				r.mu.Unlock()
			}
		}
		r.relayResponse(ctx, resp, id, isRequest)
		resp.Body.Close()
		return
	}
}

// unreachable says that the daemon cannot be reached, and what to do.
func (r *relay) unreachable(err error) string {
	return fmt.Sprintf("cannot reach the agentd daemon at %s (is `agentd start` running?): %v", r.opts.URL, err)
}

// renew replaces the lost session with a new one opened with the
// editor's own initialize parameters, unless another request already did.
// The editor is told that the tool list may have changed: the daemon that
// answers now may be another version, with other agents.
func (r *relay) renew(ctx context.Context, lost string) error {
	r.renewing.Lock()
	defer r.renewing.Unlock()
	r.mu.Lock()
	current, init := r.sessionID, r.initFrame
	r.mu.Unlock()
	if current != lost {
		return nil
	}
	if init == nil {
		return errors.New("the agentd daemon lost the MCP session and the relay has no initialize to open a new one")
	}
	req, err := r.newSessionRequest(ctx, http.MethodPost, bytes.NewReader(init), "")
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	setRequestHeaders(req.Header, init, "")
	resp, err := r.opts.HTTPClient.Do(req)
	if err != nil {
		return errors.New(r.unreachable(err))
	}
	defer resp.Body.Close()
	sid := resp.Header.Get(headerSessionID)
	answer, err := firstMessage(resp, r.opts.MaxMessageBytes)
	if err != nil || sid == "" {
		return fmt.Errorf("the agentd daemon lost the MCP session (restarted?) and refused a new one: HTTP %d: %v", resp.StatusCode, err)
	}
	var res struct {
		Result *struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(answer, &res) != nil || res.Result == nil {
		msg := "no result"
		if res.Error != nil {
			msg = res.Error.Message
		}
		return fmt.Errorf("the agentd daemon lost the MCP session (restarted?) and refused a new one: %s", msg)
	}
	r.mu.Lock()
	r.sessionID = sid
	if res.Result.ProtocolVersion != "" {
		r.version = res.Result.ProtocolVersion
	}
	version := r.version
	r.mu.Unlock()
	note, err := r.newSessionRequest(ctx, http.MethodPost, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), sid)
	if err != nil {
		return err
	}
	note.Header.Set("Content-Type", "application/json")
	note.Header.Set("Accept", "application/json, text/event-stream")
	note.Header.Set(headerProtocolVersion, version)
	if resp, err := r.opts.HTTPClient.Do(note); err == nil {
		resp.Body.Close()
	}
	r.log.Info("mcp relay: the daemon lost the session (restarted?); continuing in a new one")
	select {
	case r.renewed <- struct{}{}:
	default:
	}
	r.src.reply([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`))
	return nil
}

// firstMessage reads the first JSON-RPC message of a response, whether
// it is JSON or an event stream.
func firstMessage(resp *http.Response, limit int64) ([]byte, error) {
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/event-stream" {
		sr := jsonrpcwire.NewReader(resp.Body, jsonrpcwire.FramingSSE, limit+1024)
		for {
			ev, err := sr.NextEvent()
			if err != nil {
				return nil, err
			}
			if len(ev.Data) > 0 {
				return ev.Data, nil
			}
		}
	}
	return io.ReadAll(io.LimitReader(resp.Body, limit))
}

// relayResponse writes the messages of a response to the editor; an
// error status without a JSON-RPC body becomes an error response.
func (r *relay) relayResponse(ctx context.Context, resp *http.Response, id json.RawMessage, isRequest bool) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream" && resp.StatusCode/100 == 2:
		sr := jsonrpcwire.NewReader(resp.Body, jsonrpcwire.FramingSSE, r.opts.MaxMessageBytes+1024)
		for {
			ev, err := sr.NextEvent()
			if err != nil {
				if ctx.Err() == nil && !errors.Is(err, io.EOF) {
					r.fail(id, isRequest, "the answer stream broke: "+err.Error())
				}
				return
			}
			if len(ev.Data) > 0 {
				r.deliver(ctx, ev.Data)
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
		r.src.reply(errorResponse(id, errors.New(msg)))
	}
}

// listen keeps the session's GET stream open, reconnecting with backoff
// and Last-Event-ID, until ctx ends or the server says there is no stream
// (405). When the daemon no longer knows the session (404: it restarted)
// the stream continues in a new one.
func (r *relay) listen(ctx context.Context) {
	lastID := ""
	delay := time.Second
	for ctx.Err() == nil {
		sid, v := r.session()
		req, err := r.newSessionRequest(ctx, http.MethodGet, nil, sid)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		if v != "" {
			req.Header.Set(headerProtocolVersion, v)
		}
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := r.opts.HTTPClient.Do(req)
		if err == nil {
			switch {
			case resp.StatusCode == http.StatusMethodNotAllowed:
				resp.Body.Close()
				return
			case resp.StatusCode == http.StatusNotFound:
				resp.Body.Close()
				if err := r.renew(ctx, sid); err == nil {
					// Event ids belong to the lost session.
					lastID, delay = "", time.Second
					continue
				} else if ctx.Err() == nil {
					r.log.Warn("mcp relay: " + err.Error())
				}
			case resp.StatusCode/100 == 2:
				delay = time.Second
				sr := jsonrpcwire.NewReader(resp.Body, jsonrpcwire.FramingSSE, r.opts.MaxMessageBytes+1024)
				for {
					ev, err := sr.NextEvent()
					if err != nil {
						break
					}
					if ev.ID != "" {
						lastID = ev.ID
					}
					if ev.Retry > 0 {
						delay = ev.Retry
					}
					if len(ev.Data) > 0 {
						r.deliver(ctx, ev.Data)
					}
				}
			}
			resp.Body.Close()
		}
		select {
		case <-ctx.Done():
			return
		case <-r.renewed:
			lastID, delay = "", time.Second
			continue
		case <-time.After(delay):
		}
		// The daemon is local: a restart takes seconds, so the wait
		// stays short enough that notifications resume promptly.
		delay = min(delay*2, maxListenDelay)
	}
}

// maxListenDelay caps the wait between GET stream reconnections.
const maxListenDelay = 5 * time.Second

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
