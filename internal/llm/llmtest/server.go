package llmtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// maxBody bounds the request bodies the fakes read.
const maxBody = 32 << 20

// Server is a fake vendor API on a loopback port. It is closed when the
// test ends.
type Server struct {
	// URL is the base URL to configure a provider with: for OpenAI it ends
	// in /v1 like real OpenAI-compatible servers; for Anthropic and Gemini
	// it is the server root.
	URL string
	// Vendor is the wire format the server speaks.
	Vendor string

	recorder
	tb      testing.TB
	handler Handler
	srv     *httptest.Server
	done    chan struct{}
	once    sync.Once
}

// vendorAPI is what differs between the vendor fakes.
type vendorAPI interface {
	// decode turns an HTTP request into the neutral view. It returns an
	// error status and message for requests the real API would reject.
	decode(r *http.Request, body []byte) (*Request, int, error)
	// writeError writes an error reply in the vendor's format.
	writeError(w http.ResponseWriter, status int, msg string)
	// writeReply streams (or, for non-streamed requests, writes) a reply.
	writeReply(s *stream, req *Request, rep Reply) error
}

func newServer(tb testing.TB, vendor, urlSuffix string, api vendorAPI, h Handler) *Server {
	tb.Helper()
	if h == nil {
		h = Always(Reply{Text: "ok"})
	}
	s := &Server{Vendor: vendor, tb: tb, handler: h, done: make(chan struct{})}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, api)
	}))
	s.URL = s.srv.URL + urlSuffix
	tb.Cleanup(s.Close)
	return s
}

// Close shuts the server down, interrupting replies still streaming.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, api vendorAPI) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		api.writeError(w, http.StatusBadRequest, "llmtest: read request body: "+err.Error())
		return
	}
	req, status, err := api.decode(r, body)
	if err != nil {
		if status == http.StatusBadRequest {
			// A malformed request is a bug in the client under test.
			s.tb.Errorf("llmtest: %s fake: bad request to %s: %v", s.Vendor, r.URL.Path, err)
		}
		api.writeError(w, status, err.Error())
		return
	}
	req.Vendor = s.Vendor
	req.Header = r.Header.Clone()
	req.Body = body
	req.tb = s.tb
	s.add(req)
	rep := s.handler(req)
	if rep.failed() {
		if rep.RetryAfter != "" {
			w.Header().Set("Retry-After", rep.RetryAfter)
		}
		api.writeError(w, rep.Status, rep.errorMessage())
		return
	}
	st := &stream{w: w, gone: r.Context().Done(), done: s.done, delay: rep.Delay}
	if f, ok := w.(http.Flusher); ok {
		st.flusher = f
	}
	if err := api.writeReply(st, req, rep); err != nil && !errors.Is(err, errInterrupted) {
		s.tb.Errorf("llmtest: %s fake: write reply: %v", s.Vendor, err)
	}
}

// errInterrupted reports that the client went away or the server closed
// while a reply was streaming; it is not a test failure.
var errInterrupted = errors.New("llmtest: stream interrupted")

// stream writes server-sent events, pacing content events by the reply's
// Delay.
type stream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	gone    <-chan struct{} // closed when the client's request ends
	done    chan struct{}
	delay   time.Duration
	started bool // headers written
	paced   int  // content events written
}

func (s *stream) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	s.w.WriteHeader(http.StatusOK)
}

// content waits the reply's Delay before every content event but the first.
func (s *stream) content() error {
	s.paced++
	if s.paced == 1 || s.delay <= 0 {
		return s.alive()
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-s.gone:
		return errInterrupted
	case <-s.done:
		return errInterrupted
	}
}

func (s *stream) alive() error {
	select {
	case <-s.gone:
		return errInterrupted
	case <-s.done:
		return errInterrupted
	default:
		return nil
	}
}

// event writes one SSE event; name may be empty. data is JSON-encoded
// unless it is a string.
func (s *stream) event(name string, data any) error {
	s.start()
	var payload []byte
	switch d := data.(type) {
	case string:
		payload = []byte(d)
	default:
		b, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("encode event: %w", err)
		}
		payload = b
	}
	var err error
	if name != "" {
		_, err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, payload)
	} else {
		_, err = fmt.Fprintf(s.w, "data: %s\n\n", payload)
	}
	if err != nil {
		return errInterrupted
	}
	if s.flusher != nil {
		s.flusher.Flush()
	}
	return s.alive()
}

// json writes a complete, non-streamed JSON reply.
func (s *stream) json(v any) error {
	writeJSON(s.w, http.StatusOK, v)
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// wireStop maps a neutral stop reason to a vendor's with table, falling
// back to the end_turn entry.
func wireStop(table map[string]string, r string) string {
	if v, ok := table[r]; ok {
		return v
	}
	return table["end_turn"]
}

// newIDs returns an ID generator with a prefix unique to one reply.
func newIDs(prefix string, seq int) func(i int) string {
	return func(i int) string { return fmt.Sprintf("%s%d_%d", prefix, seq, i) }
}
