package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"google.golang.org/genai"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

func newProvider(t *testing.T, opts Options) *Provider {
	t.Helper()
	p, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	p.retry.baseDelay = 10 * time.Millisecond
	return p
}

func newTestProvider(t *testing.T, baseURL, apiKey string) llm.Provider {
	return newProvider(t, Options{BaseURL: baseURL, APIKey: apiKey, APIKeyEnv: llmtest.SuiteAPIKeyEnv})
}

func TestProviderSuite(t *testing.T) {
	llmtest.RunProviderSuite(t, newTestProvider, llmtest.NewGeminiServer)
}

func hello() *llm.Request {
	return &llm.Request{Model: "gemini-test", Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}
}

func TestMissingKey(t *testing.T) {
	p := newProvider(t, Options{APIKeyEnv: "GEMINI_API_KEY"})
	_, err := p.Generate(t.Context(), hello(), nil)
	var ae *llm.AuthError
	if !errors.As(err, &ae) || ae.EnvVar != "GEMINI_API_KEY" {
		t.Errorf("err = %v, want an *llm.AuthError naming GEMINI_API_KEY", err)
	}
}

func TestInvalidKeyAnswer(t *testing.T) {
	srv := llmtest.NewGeminiServer(t, llmtest.Always(llmtest.Reply{Status: http.StatusBadRequest, ErrorMessage: "API key not valid. Please pass a valid API key."}))
	p := newProvider(t, Options{BaseURL: srv.URL, APIKey: "bad-key-123", APIKeyEnv: "GEMINI_API_KEY"})
	_, err := p.Generate(t.Context(), hello(), nil)
	if !errors.Is(err, llm.ErrAuth) || strings.Contains(err.Error(), "bad-key-123") {
		t.Errorf("err = %v, want llm.ErrAuth without the key", err)
	}
}

// continueWith replays resp and answers its tool calls.
func continueWith(req *llm.Request, resp *llm.Response) *llm.Request {
	next := *req
	next.Messages = append(append([]llm.Message(nil), req.Messages...), resp.Message)
	var results []llm.ToolResult
	for _, c := range resp.Message.ToolCalls {
		results = append(results, llm.ToolResult{CallID: c.ID, Name: c.Name, Content: "done"})
	}
	next.Messages = append(next.Messages, llm.Message{Role: llm.RoleTool, ToolResults: results})
	return &next
}

func TestCallIDsAndThoughtSignatures(t *testing.T) {
	srv := llmtest.NewGeminiServer(t, llmtest.Script(
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("f", `{"a":1}`), llmtest.ToolCall("g", `{}`)}},
		llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "api-id-7", Name: "f", Arguments: json.RawMessage(`{}`)}}},
		llmtest.Reply{Text: "finished"},
	))
	p := newProvider(t, Options{BaseURL: srv.URL, APIKey: "k"})
	req := hello()
	resp, err := p.Generate(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || !strings.HasPrefix(calls[0].ID, syntheticIDPrefix) || calls[0].ID == calls[1].ID {
		t.Fatalf("calls = %+v, want two distinct made-up IDs", calls)
	}
	req = continueWith(req, resp)
	resp, err = p.Generate(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Last()
	if sigs := got.ThoughtSignatures(); len(sigs) != 1 || !bytes.Equal(sigs[0], llmtest.GeminiThoughtSignature) {
		t.Errorf("thought signatures sent back = %q, want the one received", sigs)
	}
	for _, c := range got.Messages[1].ToolCalls {
		if c.ID != "" {
			t.Errorf("made-up call ID %q was sent", c.ID)
		}
	}
	if id := resp.Message.ToolCalls[0].ID; id != "api-id-7" {
		t.Fatalf("API call ID became %q", id)
	}
	req = continueWith(req, resp)
	if _, err := p.Generate(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Last().Messages
	if c, r := msgs[3].ToolCalls[0], msgs[4].ToolResults[0]; c.ID != "api-id-7" || r.CallID != "api-id-7" {
		t.Errorf("API call ID sent back as %q / %q", c.ID, r.CallID)
	}
}

func TestMalformedCallName(t *testing.T) {
	for _, tc := range []struct{ msg, name string }{
		{`Malformed function call: print(default_api.write_file(path="x", content=f("y")`, "write_file"},
		{`Malformed function call: read_file(path=`, "read_file"},
		{`Malformed function call: print(oops`, "malformed_function_call"},
		{"", "malformed_function_call"},
	} {
		c := malformedCall(tc.msg)
		var raw string
		if c.Name != tc.name || json.Unmarshal(c.Arguments, &raw) != nil || raw == "" || !strings.HasPrefix(c.ID, syntheticIDPrefix) {
			t.Errorf("malformedCall(%q) = %+v (%s)", tc.msg, c, c.Arguments)
		}
	}
}

func TestBlockedPromptIsARefusal(t *testing.T) {
	var acc accumulator
	acc.add(&genai.GenerateContentResponse{PromptFeedback: &genai.GenerateContentResponsePromptFeedback{BlockReason: "SAFETY"}}, func(llm.Delta) {})
	resp, err := acc.response()
	if err != nil || resp.StopReason != llm.StopRefusal {
		t.Errorf("response %+v, err %v; want a refusal", resp, err)
	}
}

// retryServer answers with statuses in turn (200 "ok" once they run out),
// checking that every attempt carries the same body.
func retryServer(t *testing.T, replies ...func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if string(body) != "payload" {
			t.Errorf("attempt %d got body %q", n.Load()+1, body)
		}
		i := int(n.Add(1)) - 1
		if i < len(replies) {
			replies[i](w)
			return
		}
		io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func status(code int, header map[string]string, body string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func testTransport() *retryTransport {
	return &retryTransport{
		next: http.DefaultTransport, maxRetries: 3,
		baseDelay: 5 * time.Millisecond, maxDelay: 50 * time.Millisecond, maxRetryAfter: 2 * time.Second,
		logger: slog.New(slog.DiscardHandler),
	}
}

func send(ctx context.Context, t *testing.T, rt http.RoundTripper, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewBufferString("payload"))
	if err != nil {
		t.Fatal(err)
	}
	return (&http.Client{Transport: rt}).Do(req)
}

func TestRetryTransport(t *testing.T) {
	retryInfo := `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.3s"}]}}`
	tests := []struct {
		name      string
		replies   []func(http.ResponseWriter)
		status    int
		attempts  int32
		minWait   time.Duration
		wantBody  string
		transport func(*retryTransport)
	}{
		{"5xx then success", []func(http.ResponseWriter){status(500, nil, ""), status(502, nil, "")}, 200, 3, 0, "ok", nil},
		{"Retry-After-Ms", []func(http.ResponseWriter){status(429, map[string]string{"Retry-After-Ms": "250"}, "")}, 200, 2, 250 * time.Millisecond, "ok", nil},
		{"RetryInfo in the body", []func(http.ResponseWriter){status(429, nil, retryInfo)}, 200, 2, 300 * time.Millisecond, "ok", nil},
		{"Retry-After beyond the limit is not waited for", []func(http.ResponseWriter){status(429, map[string]string{"Retry-After": "300"}, "quota")}, 429, 1, 0, "quota", nil},
		{"RetryInfo beyond the limit keeps the body", []func(http.ResponseWriter){status(429, nil, strings.Replace(retryInfo, "0.3s", "900s", 1))}, 429, 1, 0, strings.Replace(retryInfo, "0.3s", "900s", 1), nil},
		{"client errors are final", []func(http.ResponseWriter){status(400, nil, "bad")}, 400, 1, 0, "bad", nil},
		{"retries run out", []func(http.ResponseWriter){status(503, nil, ""), status(503, nil, ""), status(503, nil, ""), status(503, nil, "last")}, 503, 4, 0, "last", nil},
		{"no retries", []func(http.ResponseWriter){status(503, nil, "once")}, 503, 1, 0, "once", func(rt *retryTransport) { rt.maxRetries = 0 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, n := retryServer(t, tc.replies...)
			rt := testTransport()
			if tc.transport != nil {
				tc.transport(rt)
			}
			start := time.Now()
			res, err := send(t.Context(), t, rt, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status || string(body) != tc.wantBody || n.Load() != tc.attempts {
				t.Errorf("got %d %q after %d attempts, want %d %q after %d", res.StatusCode, body, n.Load(), tc.status, tc.wantBody, tc.attempts)
			}
			if d := time.Since(start); d < tc.minWait {
				t.Errorf("finished after %v, before the %v the server asked for", d, tc.minWait)
			}
		})
	}
}

func TestRetryTransportConnectionErrors(t *testing.T) {
	var calls atomic.Int32
	rt := testTransport()
	rt.next = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			return nil, errors.New("connection reset")
		}
		body, _ := io.ReadAll(r.Body)
		return &http.Response{StatusCode: 200, Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
	})
	res, err := send(t.Context(), t, rt, "http://example.invalid/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	if calls.Load() != 2 || string(body) != "payload" {
		t.Errorf("%d calls, body %q; want a retry with the body replayed", calls.Load(), body)
	}
}

func TestRetryTransportStopsOnCancel(t *testing.T) {
	srv, n := retryServer(t, status(503, map[string]string{"Retry-After": "1"}, ""))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := send(ctx, t, testTransport(), srv.URL)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 900*time.Millisecond || n.Load() != 1 {
		t.Errorf("err %v after %v and %d attempts; want a prompt deadline error", err, time.Since(start), n.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		ms, after string
		want      time.Duration
		ok        bool
	}{
		{"", "", 0, false},
		{"1500", "9", 1500 * time.Millisecond, true},
		{"", "2", 2 * time.Second, true},
		{"", "0.5", 500 * time.Millisecond, true},
		{"", "-3", 0, true},
		{"", "1e40", 24 * time.Hour, true},
		{"", now.Add(7 * time.Second).Format(http.TimeFormat), 7 * time.Second, true},
		{"", now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"", "soon", 0, false},
		{"NaN", "NaN", 0, false},
	}
	for _, tc := range tests {
		got, ok := parseRetryAfter(tc.ms, tc.after, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q, %q) = %v, %v; want %v, %v", tc.ms, tc.after, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	f.Add("", "120")
	f.Add("250", "")
	f.Add("", "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Fuzz(func(t *testing.T, ms, after string) {
		d, ok := parseRetryAfter(ms, after, time.Now())
		if d < 0 || d > 24*time.Hour || (!ok && d != 0) {
			t.Fatalf("parseRetryAfter(%q, %q) = %v, %v", ms, after, d, ok)
		}
	})
}

func FuzzParseRetryInfo(f *testing.F) {
	f.Add([]byte(`{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"13s"}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, ok := parseRetryInfo(body)
		if d < 0 || d > 24*time.Hour || (!ok && d != 0) {
			t.Fatalf("parseRetryInfo(%q) = %v, %v", body, d, ok)
		}
	})
}

func TestCaptureBody(t *testing.T) {
	stream := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}]}\n\n" +
		"data: " + strings.Repeat("y", maxCaptureLine+10) + "\"finishMessage\"\n\n" +
		"data: {\"candidates\":[{\"finishReason\":\"MALFORMED_FUNCTION_CALL\",\"finishMessage\":\"Malformed function call: f(\"}]}\n\n"
	c := &finishCapture{}
	body := &captureBody{ReadCloser: io.NopCloser(iotest.HalfReader(strings.NewReader(stream))), capture: c}
	out, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != stream {
		t.Error("the stream was altered")
	}
	if got := c.get(); got != "Malformed function call: f(" {
		t.Errorf("captured %q", got)
	}
}

func FuzzCaptureBody(f *testing.F) {
	f.Add([]byte("data: {\"candidates\":[{\"finishMessage\":\"m\"}]}\n\n"), 3)
	f.Fuzz(func(t *testing.T, stream []byte, chunk int) {
		c := &finishCapture{}
		r := io.Reader(bytes.NewReader(stream))
		if chunk%2 == 0 {
			r = iotest.OneByteReader(r)
		}
		out, err := io.ReadAll(&captureBody{ReadCloser: io.NopCloser(r), capture: c})
		if err != nil || !bytes.Equal(out, stream) {
			t.Fatalf("stream altered or failed: %v", err)
		}
		if msg := c.get(); msg != "" && !bytes.Contains(stream, []byte("finishMessage")) {
			t.Fatalf("captured %q from a stream without finishMessage", msg)
		}
	})
}

// TestToolImagesInsideFunctionResponse checks the wire form of a tool
// result's image: an inline data part of the functionResponse.
func TestToolImagesInsideFunctionResponse(t *testing.T) {
	srv := llmtest.NewGeminiServer(t, nil)
	p := newProvider(t, Options{BaseURL: srv.URL, APIKey: "k"})
	req := &llm.Request{Model: "gemini-test", Messages: []llm.Message{
		llm.TextMessage(llm.RoleUser, "Look."),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "shot", Arguments: json.RawMessage(`{}`)},
			{ID: "c2", Name: "clock", Arguments: json.RawMessage(`{}`)},
		}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
			{CallID: "c1", Name: "shot", Content: "[image: image/png, 15 bytes]", Images: []llm.Image{{MIMEType: "image/png", Data: []byte("\x89PNG fake pixel")}}},
			{CallID: "c2", Name: "clock", Content: "noon"},
		}},
	}}
	if _, err := p.Generate(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionResponse json.RawMessage `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(srv.Last().Body, &wire); err != nil {
		t.Fatal(err)
	}
	if len(wire.Contents) != 3 || len(wire.Contents[2].Parts) != 2 {
		t.Fatalf("contents %s", srv.Last().Body)
	}
	want := []string{
		`{"id":"c1","name":"shot","parts":[{"inlineData":{"data":"iVBORyBmYWtlIHBpeGVs","mimeType":"image/png"}}],"response":{"output":"[image: image/png, 15 bytes]"}}`,
		`{"id":"c2","name":"clock","response":{"output":"noon"}}`,
	}
	for i, w := range want {
		if got := string(wire.Contents[2].Parts[i].FunctionResponse); got != w {
			t.Errorf("function response %d:\n got %s\nwant %s", i, got, w)
		}
	}
}
