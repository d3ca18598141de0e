package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

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
	llmtest.RunProviderSuite(t, newTestProvider, llmtest.NewAnthropicServer)
}

var hello = &llm.Request{Model: "claude-test", Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestOfficialAPINeedsAKey(t *testing.T) {
	called := false
	p, err := New(Options{APIKeyEnv: "ANTHROPIC_API_KEY", HTTPClient: &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		called = true
		return nil, errors.New("no network in tests")
	})}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Generate(t.Context(), hello, nil)
	var ae *llm.AuthError
	if !errors.As(err, &ae) || ae.EnvVar != "ANTHROPIC_API_KEY" {
		t.Errorf("err = %v, want an *llm.AuthError naming ANTHROPIC_API_KEY", err)
	}
	if called {
		t.Error("a request was sent without a key")
	}
}

func TestProxyWithoutKeyAndDefaultMaxTokens(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, nil)
	p, err := New(Options{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Generate(t.Context(), hello, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Last()
	if got.APIKey != "" {
		t.Errorf("key %q sent though none was configured", got.APIKey)
	}
	if got.MaxTokens != defaultMaxTokens {
		t.Errorf("max_tokens = %d, want %d", got.MaxTokens, defaultMaxTokens)
	}
}

func TestLongRetryAfterIsNotWaitedFor(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, llmtest.Always(llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "300"}))
	p, err := New(Options{BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = p.Generate(t.Context(), hello, nil)
	if err == nil || !strings.Contains(err.Error(), "429") {
		t.Errorf("err = %v, want the 429", err)
	}
	if d := time.Since(start); d > 5*time.Second || srv.Count() != 1 {
		t.Errorf("took %v and %d requests, want one quick attempt", d, srv.Count())
	}
}

func TestHistoryIsMergedIntoAlternatingTurns(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, nil)
	p := newTestProvider(t, srv.URL, "k")
	req := &llm.Request{Model: "m", Messages: []llm.Message{
		llm.TextMessage(llm.RoleUser, "one"),
		llm.TextMessage(llm.RoleUser, "two"),
		{Role: llm.RoleAssistant, Thinking: "only thinking"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "t1", Name: "f", Arguments: json.RawMessage(`{}`)}}},
		{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "t1", Name: "f", Content: ""}}},
		llm.TextMessage(llm.RoleUser, "three"),
	}}
	if _, err := p.Generate(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	var wire struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Last().Body, &wire); err != nil {
		t.Fatal(err)
	}
	var shape []string
	for _, m := range wire.Messages {
		shape = append(shape, fmt.Sprintf("%s:%d", m.Role, len(m.Content)))
	}
	if got, want := strings.Join(shape, " "), "user:2 assistant:1 user:2"; got != want {
		t.Errorf("turns = %s, want %s", got, want)
	}
	if res := srv.Last().Messages[2].ToolResults; len(res) != 1 || res[0].Content != "" {
		t.Errorf("empty tool result arrived as %+v", res)
	}
}

func TestErrorEventMidStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"x\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n")
		fmt.Fprint(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
		fmt.Fprint(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"partial\"}}\n\n")
		fmt.Fprint(w, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
	}))
	defer srv.Close()
	p := newTestProvider(t, srv.URL, "k")
	var streamed string
	_, err := p.Generate(t.Context(), hello, func(d llm.Delta) { streamed += d.Text })
	if err == nil || errors.Is(err, llm.ErrAuth) || !strings.Contains(err.Error(), "overloaded_error: Overloaded") {
		t.Errorf("err = %v, want the overloaded error event", err)
	}
	if streamed != "partial" {
		t.Errorf("streamed %q before the error", streamed)
	}
}

// event decodes one stream event.
func event(t testing.TB, s string) sdk.MessageStreamEventUnion {
	t.Helper()
	var ev sdk.MessageStreamEventUnion
	if err := json.Unmarshal([]byte(s), &ev); err != nil {
		t.Fatalf("decode event %s: %v", s, err)
	}
	return ev
}

func TestAccumulator(t *testing.T) {
	var acc accumulator
	var thinking, text string
	for _, e := range []string{
		`{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"xx"}}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"text","text":"Hi"}}`,
		`{"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":" there"}}`,
		`{"type":"content_block_start","index":4,"content_block":{"type":"tool_use","id":"b","name":"g","input":{"preset":true}}}`,
		`{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"a","name":"f","input":{}}}`,
		`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"x\":"}}`,
		`{"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"[1,2]}"}}`,
		`{"type":"content_block_start","index":5,"content_block":{"type":"tool_use","id":"c","name":"h","input":{}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":42}}`,
		`{"type":"message_stop"}`,
	} {
		acc.add(event(t, e), func(d llm.Delta) {
			if d.Kind == llm.DeltaThinking {
				thinking += d.Text
			} else {
				text += d.Text
			}
		})
	}
	resp, err := acc.response()
	if err != nil {
		t.Fatal(err)
	}
	if thinking != "hmm" || text != "Hi there" || resp.Message.Thinking != "hmm" || resp.Message.Text() != "Hi there" {
		t.Errorf("thinking %q text %q, response %+v", thinking, text, resp.Message)
	}
	want := []string{`a f {"x":[1,2]}`, `b g {"preset":true}`, `c h {}`}
	var got []string
	for _, c := range resp.Message.ToolCalls {
		got = append(got, fmt.Sprintf("%s %s %s", c.ID, c.Name, c.Arguments))
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls = %q, want %q", got, want)
	}
	if resp.Usage != (llm.Usage{InputTokens: 15, OutputTokens: 42}) || resp.StopReason != llm.StopToolUse {
		t.Errorf("usage %+v stop %q", resp.Usage, resp.StopReason)
	}
}

func TestAccumulatorWithoutMessageStopIsAnError(t *testing.T) {
	var acc accumulator
	acc.add(event(t, `{"type":"message_start","message":{"usage":{"input_tokens":1}}}`), func(llm.Delta) {})
	if _, err := acc.response(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestStopReason(t *testing.T) {
	for _, tc := range []struct {
		stop  string
		calls bool
		want  llm.StopReason
	}{
		{"end_turn", false, llm.StopEndTurn},
		{"stop_sequence", false, llm.StopEndTurn},
		{"pause_turn", false, llm.StopEndTurn},
		{"tool_use", true, llm.StopToolUse},
		{"tool_use", false, llm.StopEndTurn},
		{"end_turn", true, llm.StopToolUse},
		{"max_tokens", true, llm.StopMaxTokens},
		{"model_context_window_exceeded", false, llm.StopMaxTokens},
		{"refusal", false, llm.StopRefusal},
	} {
		if got := stopReason(tc.stop, tc.calls); got != tc.want {
			t.Errorf("stopReason(%q, %v) = %q, want %q", tc.stop, tc.calls, got, tc.want)
		}
	}
}

func FuzzAccumulatorEvents(f *testing.F) {
	f.Add(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"a","name":"f","input":{}}}`, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a"}}`)
	f.Fuzz(func(t *testing.T, e1, e2 string) {
		var acc accumulator
		for _, e := range []string{e1, e2, e1, `{"type":"message_stop"}`} {
			var ev sdk.MessageStreamEventUnion
			if json.Unmarshal([]byte(e), &ev) != nil {
				continue
			}
			acc.add(ev, func(llm.Delta) {})
		}
		resp, err := acc.response()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(resp.Message); err != nil {
			t.Fatalf("response does not marshal: %v", err)
		}
	})
}

// TestToolImagesInsideToolResult checks the wire form of a tool result's
// image: an image block inside the tool_result, after its text.
func TestToolImagesInsideToolResult(t *testing.T) {
	srv := llmtest.NewAnthropicServer(t, nil)
	p := newTestProvider(t, srv.URL, "k")
	req := &llm.Request{Model: "m", Messages: []llm.Message{
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
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(srv.Last().Body, &wire); err != nil {
		t.Fatal(err)
	}
	if len(wire.Messages) != 3 || len(wire.Messages[2].Content) != 2 {
		t.Fatalf("messages %s", srv.Last().Body)
	}
	want := []string{
		`{"tool_use_id":"c1","content":[{"text":"[image: image/png, 15 bytes]","type":"text"},{"source":{"data":"iVBORyBmYWtlIHBpeGVs","media_type":"image/png","type":"base64"},"type":"image"}],"type":"tool_result"}`,
		`{"tool_use_id":"c2","content":[{"text":"noon","type":"text"}],"type":"tool_result"}`,
	}
	for i, w := range want {
		if got := string(wire.Messages[2].Content[i]); got != w {
			t.Errorf("tool result %d:\n got %s\nwant %s", i, got, w)
		}
	}
}
