package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

func newTestProvider(t *testing.T, baseURL, apiKey string) llm.Provider {
	t.Helper()
	p, err := New(Options{BaseURL: baseURL, APIKey: apiKey, APIKeyEnv: llmtest.SuiteAPIKeyEnv})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func TestProviderSuite(t *testing.T) {
	llmtest.RunProviderSuite(t, newTestProvider, llmtest.NewOpenAIServer)
}

var hello = &llm.Request{Model: "m", Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}

// roundTripFunc adapts a function to http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// redirectTo sends every request to srv, whatever host it names, so the
// adapter can believe it talks to api.openai.com.
func redirectTo(t *testing.T, srv *llmtest.Server) *http.Client {
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
		return http.DefaultTransport.RoundTrip(r)
	})}
}

func TestOfficialAPINeedsAKey(t *testing.T) {
	called := false
	p, err := New(Options{APIKeyEnv: "OPENAI_API_KEY", HTTPClient: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		called = true
		return nil, errors.New("no network in tests")
	})}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Generate(t.Context(), hello, nil)
	var ae *llm.AuthError
	if !errors.As(err, &ae) || ae.EnvVar != "OPENAI_API_KEY" || !errors.Is(err, llm.ErrAuth) {
		t.Errorf("err = %v, want an *llm.AuthError naming OPENAI_API_KEY", err)
	}
	if called {
		t.Error("a request was sent without a key")
	}
}

func TestCompatibleServerWithoutKey(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t, nil)
	p, err := New(Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Generate(t.Context(), hello, nil); err != nil {
		t.Fatal(err)
	}
	if h := srv.Last().Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization header %q sent without a key", h)
	}
}

func TestMaxTokensField(t *testing.T) {
	req := *hello
	req.MaxTokens = 77
	for _, tc := range []struct {
		name    string
		options func(srv *llmtest.Server) Options
		field   string
	}{
		{"compatible server gets max_tokens", func(srv *llmtest.Server) Options { return Options{BaseURL: srv.URL} }, `"max_tokens":77`},
		{"api.openai.com gets max_completion_tokens", func(srv *llmtest.Server) Options {
			return Options{APIKey: "sk-test", HTTPClient: redirectTo(t, srv)}
		}, `"max_completion_tokens":77`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewOpenAIServer(t, nil)
			p, err := New(tc.options(srv))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Generate(t.Context(), &req, nil); err != nil {
				t.Fatal(err)
			}
			if body := srv.Last().Body; !bytes.Contains(body, []byte(tc.field)) {
				t.Errorf("body lacks %s: %s", tc.field, body)
			}
		})
	}
}

func TestNegativeMaxRetriesDisablesRetries(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Status: http.StatusServiceUnavailable}))
	p, err := New(Options{BaseURL: srv.URL, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Generate(t.Context(), hello, nil); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("err = %v, want the 503", err)
	}
	if srv.Count() != 1 {
		t.Errorf("server got %d requests, want 1", srv.Count())
	}
}

func TestInvalidBaseURL(t *testing.T) {
	for _, base := range []string{"localhost:11434", "ftp://host/v1", "http://", "://x"} {
		if _, err := New(Options{BaseURL: base}); err == nil {
			t.Errorf("New accepted base url %q", base)
		}
	}
	_, err := New(Options{BaseURL: "ftp://user:hunter2@host/"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v, want an error without the URL's password", err)
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLogsNeverContainTheKey(t *testing.T) {
	const key = "sk-never-log-me-123456"
	srv := llmtest.NewOpenAIServer(t, llmtest.Script(
		llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "0", ErrorMessage: "slow down " + key},
		llmtest.Reply{Status: http.StatusUnauthorized, ErrorMessage: "bad key " + key},
	))
	var logs syncBuffer
	p, err := New(Options{BaseURL: srv.URL, APIKey: key, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Generate(t.Context(), hello, nil)
	if !errors.Is(err, llm.ErrAuth) || strings.Contains(err.Error(), key) {
		t.Errorf("err = %v", err)
	}
	if out := logs.String(); !strings.Contains(out, "status=429") || strings.Contains(out, key) {
		t.Errorf("logs must report the failed attempts without the key:\n%s", out)
	}
}

// chunk decodes one streamed chunk.
func chunk(t testing.TB, s string) *streamChunk {
	t.Helper()
	var c streamChunk
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		t.Fatalf("decode chunk %s: %v", s, err)
	}
	return &c
}

func TestAccumulator(t *testing.T) {
	tests := []struct {
		name     string
		chunks   []string
		text     string
		thinking string
		calls    []llm.ToolCall // IDs "" mean "any, but unique"
		stop     llm.StopReason
		usage    llm.Usage
	}{
		{
			name: "interleaved parallel fragments",
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"read","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"write","arguments":"{\"p\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"p\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":2}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
				`{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}`,
			},
			calls: []llm.ToolCall{{ID: "a", Name: "read", Arguments: json.RawMessage(`{"p":1}`)}, {ID: "b", Name: "write", Arguments: json.RawMessage(`{"p":2}`)}},
			stop:  llm.StopToolUse,
			usage: llm.Usage{InputTokens: 5, OutputTokens: 6},
		},
		{
			name: "every call at index 0 and no IDs, finish stop",
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"content":"ok "}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x1","function":{"name":"a","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x2","function":{"name":"b","arguments":"{\"q\":true}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"name":"c","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			},
			text:  "ok ",
			calls: []llm.ToolCall{{ID: "x1", Name: "a", Arguments: json.RawMessage(`{}`)}, {ID: "x2", Name: "b", Arguments: json.RawMessage(`{"q":true}`)}, {Name: "c", Arguments: json.RawMessage(`{}`)}},
			stop:  llm.StopToolUse,
		},
		{
			name: "reasoning field and both fields are not doubled",
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"reasoning":"think "}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning_content":"more","reasoning":"more"}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"done"}}]}`,
				`{"choices":[{"index":1,"delta":{"content":"other choice"}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`,
			},
			thinking: "think more", text: "done", stop: llm.StopMaxTokens,
		},
		{
			name: "refusal",
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"refusal":"I can't."}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			},
			text: "I can't.", stop: llm.StopRefusal,
		},
		{
			// Compatible servers' fields of unexpected types are left
			// empty, as the SDK's decoder did; the rest of the chunk counts.
			name: "fields of unexpected types are skipped",
			chunks: []string{
				`{"id":7,"choices":[{"index":0,"delta":{"content":"hi","reasoning":{"effort":"low"}}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":"many","completion_tokens":2}}`,
			},
			text: "hi", stop: llm.StopEndTurn, usage: llm.Usage{OutputTokens: 2},
		},
		{
			name: "malformed arguments become a JSON string",
			chunks: []string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"m","function":{"name":"w","arguments":"{\"path\": \"x"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
			},
			calls: []llm.ToolCall{{ID: "m", Name: "w", Arguments: json.RawMessage(`"{\"path\": \"x"`)}},
			stop:  llm.StopToolUse,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var acc accumulator
			var streamed strings.Builder
			for _, c := range tc.chunks {
				acc.add(chunk(t, c), func(d llm.Delta) { streamed.WriteString(d.Text) })
			}
			resp, err := acc.response()
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Text() != tc.text || resp.Message.Thinking != tc.thinking || streamed.String() != tc.thinking+tc.text {
				t.Errorf("text %q thinking %q streamed %q", resp.Message.Text(), resp.Message.Thinking, streamed.String())
			}
			if resp.StopReason != tc.stop || resp.Usage != tc.usage {
				t.Errorf("stop %q usage %+v", resp.StopReason, resp.Usage)
			}
			if len(resp.Message.ToolCalls) != len(tc.calls) {
				t.Fatalf("calls = %+v", resp.Message.ToolCalls)
			}
			ids := map[string]bool{}
			for i, c := range resp.Message.ToolCalls {
				want := tc.calls[i]
				if (want.ID != "" && c.ID != want.ID) || c.ID == "" || ids[c.ID] || c.Name != want.Name || string(c.Arguments) != string(want.Arguments) {
					t.Errorf("call %d = %+v (%s), want %+v (%s)", i, c, c.Arguments, want, want.Arguments)
				}
				ids[c.ID] = true
			}
		})
	}
}

func TestMalformedChunkIsAnError(t *testing.T) {
	for _, s := range []string{`{"choices":[`, `{"choices":[{"index":0,"delta":{"content":"x"}}]}}`, `nope`} {
		var c streamChunk
		if err := json.Unmarshal([]byte(s), &c); err == nil {
			t.Errorf("%s decoded without error", s)
		}
	}
}

func TestAccumulatorWithoutFinishIsAnError(t *testing.T) {
	var acc accumulator
	acc.add(chunk(t, `{"choices":[{"index":0,"delta":{"content":"cut"}}]}`), func(llm.Delta) {})
	if _, err := acc.response(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
	}
}

func FuzzAccumulatorFragments(f *testing.F) {
	f.Add([]byte(`{"a":`), []byte(`1}`), uint8(0))
	f.Fuzz(func(t *testing.T, a, b []byte, idx uint8) {
		var acc accumulator
		for i, frag := range [][]byte{a, b, a} {
			arg, _ := json.Marshal(string(frag))
			c := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + string(rune('0'+int(idx+uint8(i))%3)) + `,"function":{"name":"f","arguments":` + string(arg) + `}}]}}]}`
			var ch streamChunk
			if err := json.Unmarshal([]byte(c), &ch); err != nil {
				t.Skip()
			}
			acc.add(&ch, func(llm.Delta) {})
		}
		acc.add(chunk(t, `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`), func(llm.Delta) {})
		resp, err := acc.response()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range resp.Message.ToolCalls {
			if !json.Valid(c.Arguments) || c.ID == "" {
				t.Fatalf("call %+v", c)
			}
		}
		if _, err := json.Marshal(resp.Message); err != nil {
			t.Fatalf("response does not marshal: %v", err)
		}
	})
}

// pixel is a stand-in for image bytes: the adapters only encode them.
var pixel = []byte("\x89PNG fake pixel")

// toolImageHistory is a turn whose first tool result has an image.
func toolImageHistory() []llm.Message {
	return []llm.Message{
		llm.TextMessage(llm.RoleUser, "Look."),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "shot", Arguments: json.RawMessage(`{}`)},
			{ID: "c2", Name: "clock", Arguments: json.RawMessage(`{}`)},
		}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
			{CallID: "c1", Name: "shot", Content: "[image: image/png, 15 bytes]", Images: []llm.Image{{MIMEType: "image/png", Data: pixel}}},
			{CallID: "c2", Name: "clock", Content: "noon"},
		}},
	}
}

// TestToolImagesFollowTheToolMessages checks the wire form of a tool
// result's image: Chat Completions tool messages take text only, so the
// image goes, as a data URL, in a user message after every tool message
// of the turn (a message between them would be rejected).
func TestToolImagesFollowTheToolMessages(t *testing.T) {
	srv := llmtest.NewOpenAIServer(t, nil)
	p := newTestProvider(t, srv.URL, "k")
	if _, err := p.Generate(t.Context(), &llm.Request{Model: "m", Messages: toolImageHistory()}, nil); err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Last().Body, &wire); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range wire.Messages {
		roles = append(roles, m.Role+":"+m.ToolCallID)
	}
	if got, want := strings.Join(roles, " "), "user: assistant: tool:c1 tool:c2 user:"; got != want {
		t.Fatalf("messages %s, want %s", got, want)
	}
	if tool := string(wire.Messages[2].Content); tool != `"[image: image/png, 15 bytes]"` {
		t.Errorf("the tool message holds %s, want its text only", tool)
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(wire.Messages[4].Content, &parts); err != nil {
		t.Fatalf("user message content %s: %v", wire.Messages[4].Content, err)
	}
	if len(parts) != 2 || parts[0].Type != "text" || parts[1].Type != "image_url" {
		t.Fatalf("user message content %s, want a caption and the image", wire.Messages[4].Content)
	}
	if c := parts[0].Text; !strings.Contains(c, "tool call c1 (shot)") || !strings.Contains(c, "not a message from the user") || !strings.Contains(c, "untrusted data") {
		t.Errorf("caption %q", c)
	}
	if want := "data:image/png;base64,iVBORyBmYWtlIHBpeGVs"; parts[1].ImageURL.URL != want {
		t.Errorf("image url %q, want %q", parts[1].ImageURL.URL, want)
	}

	// Without images, nothing follows the tool messages.
	msgs := toolImageHistory()
	msgs[2].ToolResults[0].Images = nil
	if _, err := p.Generate(t.Context(), &llm.Request{Model: "m", Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	if got := srv.Last().Messages; len(got) != 3 || got[2].Role != llm.RoleTool {
		t.Errorf("without images the server got %+v", got)
	}
}

// TestStreamKeepsTheConnection checks that consecutive calls reuse one
// connection when the server ends the response (its last, empty chunk)
// only after the [DONE] event has gone out on its own: the SDK's stream
// stops reading at [DONE], and the body must still be read to its end.
// It also checks that a server holding the response open after [DONE]
// does not hold the call for longer than the drain's bound.
func TestStreamKeepsTheConnection(t *testing.T) {
	var mu sync.Mutex
	conns := 0
	hold := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for _, ev := range []string{
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}`,
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
			f.Flush()
		}
		if r.Header.Get("X-Test-Hold") != "" {
			<-hold
			return
		}
		// The response's end goes out on its own, after [DONE].
		time.Sleep(2 * time.Millisecond)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	defer close(hold)
	p, err := New(Options{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		resp, err := p.Generate(t.Context(), hello, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Message.Text(); got != "ok" {
			t.Fatalf("text %q", got)
		}
	}
	mu.Lock()
	n := conns
	mu.Unlock()
	if n != 1 {
		t.Errorf("5 calls opened %d connections, want 1", n)
	}
	held := &http.Client{Transport: headerTransport{"X-Test-Hold", "1"}}
	p, err = New(Options{BaseURL: srv.URL + "/v1", HTTPClient: held})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err = p.Generate(ctx, hello, nil)
	if d := time.Since(start); err != nil || d > time.Second {
		t.Errorf("a response held open after [DONE] held the call %v (err %v)", d, err)
	}
}

// headerTransport adds a header to every request.
type headerTransport struct{ key, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}
