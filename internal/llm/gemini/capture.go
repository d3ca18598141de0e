package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// The genai SDK drops a candidate's finishMessage, which is where the API
// says which call it could not parse on MALFORMED_FUNCTION_CALL. Generate
// puts a finishCapture in the request context and captureTransport reads
// the message off the raw stream as the SDK consumes it.

// finishCapture receives the last finishMessage seen in a stream.
type finishCapture struct {
	mu      sync.Mutex
	message string
}

func (c *finishCapture) set(msg string) {
	c.mu.Lock()
	c.message = msg
	c.mu.Unlock()
}

func (c *finishCapture) get() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.message
}

type captureKey struct{}

func withCapture(ctx context.Context, c *finishCapture) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

// captureTransport wraps successful response bodies of requests carrying a
// finishCapture.
type captureTransport struct{ next http.RoundTripper }

func (t captureTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.next.RoundTrip(req)
	if err != nil || res.StatusCode != http.StatusOK {
		return res, err
	}
	if c, ok := req.Context().Value(captureKey{}).(*finishCapture); ok {
		res.Body = &captureBody{ReadCloser: res.Body, capture: c}
	}
	return res, nil
}

// maxCaptureLine bounds the line buffer; longer lines are not inspected.
const maxCaptureLine = 1 << 20

// captureBody passes the stream through unchanged, looking at each line
// that mentions finishMessage.
type captureBody struct {
	io.ReadCloser
	capture  *finishCapture
	line     []byte
	overflow bool // the current line exceeded maxCaptureLine
}

func (b *captureBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.scan(p[:n])
	return n, err
}

func (b *captureBody) scan(data []byte) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			b.append(data)
			return
		}
		b.append(data[:i])
		if !b.overflow {
			b.inspect(b.line)
		}
		b.line, b.overflow = b.line[:0], false
		data = data[i+1:]
	}
}

func (b *captureBody) append(data []byte) {
	if b.overflow {
		return
	}
	if len(b.line)+len(data) > maxCaptureLine {
		b.overflow = true
		b.line = b.line[:0]
		return
	}
	b.line = append(b.line, data...)
}

// inspect records the finishMessage of an SSE data line, if it has one.
func (b *captureBody) inspect(line []byte) {
	if !bytes.Contains(line, []byte(`"finishMessage"`)) {
		return
	}
	if msg, ok := finishMessage(line); ok {
		b.capture.set(msg)
	}
}

// finishMessage extracts candidates[0].finishMessage from an SSE data line.
func finishMessage(line []byte) (string, bool) {
	data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
	if !ok {
		return "", false
	}
	var chunk struct {
		Candidates []struct {
			FinishMessage string `json:"finishMessage"`
		} `json:"candidates"`
	}
	if json.Unmarshal(data, &chunk) != nil || len(chunk.Candidates) == 0 || chunk.Candidates[0].FinishMessage == "" {
		return "", false
	}
	return chunk.Candidates[0].FinishMessage, true
}
