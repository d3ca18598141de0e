package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/llm"
)

// recordingTB captures Errorf calls so tests can check that a fake fails
// the test it serves.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want []string
	}{
		{"empty", "", 3, nil},
		{"zero means one", "abc", 0, []string{"abc"}},
		{"even", "abcdef", 3, []string{"ab", "cd", "ef"}},
		{"uneven", "abcdefg", 3, []string{"abc", "de", "fg"}},
		{"more pieces than runes", "ab", 5, []string{"a", "b"}},
		{"runes not bytes", "héllo", 2, []string{"hél", "lo"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := split(tc.s, tc.n)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || len(got) != len(tc.want) {
				t.Errorf("split(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("hello world", 3)
	f.Add("ünï", 10)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 64
		pieces := split(s, n)
		if strings.Join(pieces, "") != s {
			t.Fatalf("pieces %q do not join to %q", pieces, s)
		}
		if max(n, 1) < len(pieces) {
			t.Fatalf("%d pieces for n=%d", len(pieces), n)
		}
		for _, p := range pieces {
			if p == "" {
				t.Fatal("empty piece")
			}
			if utf8.ValidString(s) && !utf8.ValidString(p) {
				t.Fatalf("piece %q splits a rune", p)
			}
		}
	})
}

func TestTruncateJSON(t *testing.T) {
	for _, in := range []string{`{}`, `{"a":1}`, `[1,2]`, `"x"`, `{"a":[1,2,{"b":"c"}]}`, `1`} {
		if out := truncateJSON(in); json.Valid([]byte(out)) {
			t.Errorf("truncateJSON(%s) = %s, still valid JSON", in, out)
		}
	}
}

func TestScriptExhaustedFailsTheTest(t *testing.T) {
	tb := &recordingTB{TB: t}
	p := NewProvider(tb, Script(Reply{Text: "only one"}))
	req := &llm.Request{Model: "m", Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}
	if _, err := p.Generate(t.Context(), req, nil); err != nil {
		t.Fatalf("first call: %v", err)
	}
	_, err := p.Generate(t.Context(), req, nil)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
		t.Errorf("second call err = %v, want a 400 StatusError", err)
	}
	if errs := tb.errors(); len(errs) != 1 || !strings.Contains(errs[0], "script exhausted") {
		t.Errorf("test errors = %q, want one about the exhausted script", errs)
	}
}

func TestScriptServesInOrderConcurrently(t *testing.T) {
	const n = 20
	var replies []Reply
	for i := range n {
		replies = append(replies, Reply{Text: fmt.Sprint(i)})
	}
	h := Script(replies...)
	seen := make([]bool, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			r := h(&Request{tb: t})
			var i int
			fmt.Sscan(r.Text, &i)
			mu.Lock()
			defer mu.Unlock()
			if seen[i] {
				t.Errorf("reply %d served twice", i)
			}
			seen[i] = true
		})
	}
	wg.Wait()
}

func TestScriptedProvider(t *testing.T) {
	req := func() *llm.Request {
		return &llm.Request{Model: "m", System: "sys", Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Text: "hi"}, {Image: &llm.Image{MIMEType: "image/png", Data: []byte{1, 2, 3}}}}},
		}, Tools: []llm.ToolDef{{Name: "read_file"}}}
	}
	t.Run("streams thinking then text and records the request", func(t *testing.T) {
		p := NewProvider(t, Script(Reply{Thinking: "hmm", Text: "hello there", Chunks: 2, Usage: llm.Usage{InputTokens: 3, OutputTokens: 4}}))
		r := req()
		var deltas []llm.Delta
		resp, err := p.Generate(t.Context(), r, func(d llm.Delta) { deltas = append(deltas, d) })
		if err != nil {
			t.Fatal(err)
		}
		want := []llm.Delta{{Kind: llm.DeltaThinking, Text: "hm"}, {Kind: llm.DeltaThinking, Text: "m"}, {Kind: llm.DeltaText, Text: "hello "}, {Kind: llm.DeltaText, Text: "there"}}
		if fmt.Sprint(deltas) != fmt.Sprint(want) {
			t.Errorf("deltas = %v, want %v", deltas, want)
		}
		if resp.Message.Text() != "hello there" || resp.Message.Thinking != "hmm" || resp.StopReason != llm.StopEndTurn || resp.Usage.OutputTokens != 4 {
			t.Errorf("response = %+v", resp)
		}
		// The recording is a copy: later changes by the caller do not show.
		r.Messages[0].Parts[1].Image.Data[0] = 9
		got := p.Last()
		if got.Vendor != VendorScripted || got.Seq != 1 || got.System != "sys" || got.LastUserText() != "hi" || got.Messages[0].Parts[1].Image.Data[0] != 1 {
			t.Errorf("recorded request = %+v", got)
		}
		if names := got.ToolNames(); len(names) != 1 || names[0] != "read_file" {
			t.Errorf("tool names = %v", names)
		}
	})
	t.Run("tool calls get IDs and malformed arguments become a JSON string", func(t *testing.T) {
		p := NewProvider(t, Script(
			Reply{ToolCalls: []llm.ToolCall{ToolCall("a", `{"x":1}`), ToolCall("b", "")}},
			Reply{ToolCalls: []llm.ToolCall{ToolCall("a", `{"x":1}`)}, MalformedToolArgs: true},
		))
		resp, err := p.Generate(t.Context(), req(), nil)
		if err != nil {
			t.Fatal(err)
		}
		calls := resp.Message.ToolCalls
		if len(calls) != 2 || calls[0].ID == "" || calls[0].ID == calls[1].ID || string(calls[1].Arguments) != "{}" || resp.StopReason != llm.StopToolUse {
			t.Errorf("calls = %+v, stop %q", calls, resp.StopReason)
		}
		resp, err = p.Generate(t.Context(), req(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var raw string
		if err := json.Unmarshal(resp.Message.ToolCalls[0].Arguments, &raw); err != nil || raw != `{"x":1` {
			t.Errorf("malformed arguments = %s", resp.Message.ToolCalls[0].Arguments)
		}
	})
	t.Run("error statuses", func(t *testing.T) {
		for _, tc := range []struct {
			status int
			auth   bool
		}{{401, true}, {403, true}, {429, false}, {500, false}} {
			p := NewProvider(t, Always(Reply{Status: tc.status}))
			_, err := p.Generate(t.Context(), req(), nil)
			var se *StatusError
			if errors.Is(err, llm.ErrAuth) != tc.auth || !errors.As(err, &se) || se.Status != tc.status {
				t.Errorf("status %d: err = %v", tc.status, err)
			}
		}
	})
	t.Run("cancel mid-stream", func(t *testing.T) {
		p := NewProvider(t, Always(Reply{Text: "a b c", Chunks: 3, Delay: time.Hour}))
		ctx, cancel := context.WithCancel(t.Context())
		_, err := p.Generate(ctx, req(), func(llm.Delta) { cancel() })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("disconnect", func(t *testing.T) {
		p := NewProvider(t, Always(Reply{Text: "cut", Disconnect: true}))
		if _, err := p.Generate(t.Context(), req(), nil); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("err = %v, want io.ErrUnexpectedEOF", err)
		}
	})
}

func TestRequireAPIKey(t *testing.T) {
	h := RequireAPIKey("good", Always(Reply{Text: "in"}))
	if r := h(&Request{APIKey: "good"}); r.Text != "in" {
		t.Errorf("good key got %+v", r)
	}
	if r := h(&Request{APIKey: "bad"}); r.Status != http.StatusUnauthorized {
		t.Errorf("bad key got %+v", r)
	}
}

// post sends body to a fake and returns the status and response body.
func post(t *testing.T, url string, header map[string]string, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

func TestServersRejectWhatTheRealAPIsReject(t *testing.T) {
	tests := []struct {
		name       string
		newServer  func(testing.TB, Handler) *Server
		path       string
		header     map[string]string
		body       string
		wantStatus int
		testFails  bool
	}{
		{"openai unknown route", NewOpenAIServer, "/embeddings", nil, `{}`, 404, false},
		{"openai no messages", NewOpenAIServer, "/chat/completions", nil, `{"model":"m","messages":[]}`, 400, true},
		{"openai image in a tool message", NewOpenAIServer, "/chat/completions", nil, `{"model":"m","messages":[{"role":"user","content":"hi"},` +
			`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AQI="}}]}]}`, 400, true},
		{"openai user message before every call is answered", NewOpenAIServer, "/chat/completions", nil, `{"model":"m","messages":[{"role":"user","content":"hi"},` +
			`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"one"},{"role":"user","content":"look"},{"role":"tool","tool_call_id":"c2","content":"two"}]}`, 400, true},
		{"openai unanswered call", NewOpenAIServer, "/chat/completions", nil, `{"model":"m","messages":[{"role":"user","content":"hi"},` +
			`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, 400, true},
		{"anthropic without version header", NewAnthropicServer, "/v1/messages", nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 400, true},
		{"anthropic without max_tokens", NewAnthropicServer, "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 400, true},
		{"anthropic empty text block", NewAnthropicServer, "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, 400, true},
		{"gemini stream without alt=sse", NewGeminiServer, "/v1beta/models/m:streamGenerateContent", nil, `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, 400, true},
		{"gemini bad role", NewGeminiServer, "/v1beta/models/m:generateContent", nil, `{"contents":[{"role":"assistant","parts":[{"text":"hi"}]}]}`, 400, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb := &recordingTB{TB: t}
			srv := tc.newServer(tb, nil)
			status, body := post(t, srv.URL+tc.path, tc.header, tc.body)
			if status != tc.wantStatus {
				t.Errorf("status = %d, want %d: %s", status, tc.wantStatus, body)
			}
			if !json.Valid(body) {
				t.Errorf("error body is not JSON: %s", body)
			}
			if failed := len(tb.errors()) > 0; failed != tc.testFails {
				t.Errorf("test failed = %v (%q), want %v", failed, tb.errors(), tc.testFails)
			}
			if srv.Count() != 0 {
				t.Errorf("rejected request was recorded")
			}
		})
	}
}

func TestServersAnswerUnstreamed(t *testing.T) {
	reply := Reply{Thinking: "think", Text: "plain answer", ToolCalls: []llm.ToolCall{ToolCall("read_file", `{"path":"a"}`)}, Usage: llm.Usage{InputTokens: 2, OutputTokens: 3}}
	tests := []struct {
		name      string
		newServer func(testing.TB, Handler) *Server
		path      string
		header    map[string]string
		body      string
		want      []string // substrings of the answer
	}{
		{"openai", NewOpenAIServer, "/chat/completions", map[string]string{"Authorization": "Bearer k1"},
			`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
			[]string{`"object":"chat.completion"`, `"content":"plain answer"`, `"reasoning_content":"think"`, `"arguments":"{\"path\":\"a\"}"`, `"finish_reason":"tool_calls"`, `"completion_tokens":3`}},
		{"anthropic", NewAnthropicServer, "/v1/messages", map[string]string{"anthropic-version": "2023-06-01", "x-api-key": "k1"},
			`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
			[]string{`"type":"message"`, `"text":"plain answer"`, `"thinking":"think"`, `"input":{"path":"a"}`, `"stop_reason":"tool_use"`, `"output_tokens":3`}},
		{"gemini", NewGeminiServer, "/v1beta/models/m:generateContent?key=k1", nil,
			`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
			[]string{`"text":"plain answer"`, `"thought":true`, `"functionCall":{"args":{"path":"a"},"name":"read_file"}`, `"finishReason":"STOP"`, `"candidatesTokenCount":3`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := tc.newServer(t, Always(reply))
			status, body := post(t, srv.URL+tc.path, tc.header, tc.body)
			if status != http.StatusOK {
				t.Fatalf("status %d: %s", status, body)
			}
			for _, w := range tc.want {
				if !bytes.Contains(body, []byte(w)) {
					t.Errorf("answer lacks %s:\n%s", w, body)
				}
			}
			got := srv.Last()
			if got.Stream || got.APIKey != "k1" || got.Model != "m" || got.LastUserText() != "hi" {
				t.Errorf("recorded stream=%v key=%q model=%q text=%q", got.Stream, got.APIKey, got.Model, got.LastUserText())
			}
		})
	}
}

func TestServerCloseInterruptsStreams(t *testing.T) {
	srv := NewOpenAIServer(t, Always(Reply{Text: "slow stream", Chunks: 2, Delay: time.Hour}))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Close()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked on a streaming reply")
	}
	// The body ends, cleanly or not, instead of hanging.
	_, _ = io.ReadAll(res.Body)
}
