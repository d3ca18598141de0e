package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm"
)

// SuiteAPIKeyEnv is the environment variable name a provider run by
// RunProviderSuite must be configured to report in authentication errors
// (its Options.APIKeyEnv). Nothing reads it from the environment.
const SuiteAPIKeyEnv = "LLMTEST_SUITE_API_KEY"

// suiteKey is the API key the suite configures providers with; it must
// never show up in an error.
const suiteKey = "sk-llmtest-SECRET-8d1f4c2a9b"

// suiteModel is the model every suite request names.
const suiteModel = "llmtest-model"

// RunProviderSuite is the contract every llm.Provider adapter must pass,
// run against the adapter's fake server. newProvider builds the adapter
// under test for baseURL and apiKey, with Options.APIKeyEnv set to
// SuiteAPIKeyEnv; newServer is NewOpenAIServer, NewAnthropicServer or
// NewGeminiServer. Subtests run in parallel; the whole suite takes about
// two seconds, most of it honouring a Retry-After of one second.
func RunProviderSuite(t *testing.T, newProvider func(t *testing.T, baseURL, apiKey string) llm.Provider, newServer func(t testing.TB, h Handler) *Server) {
	s := &suite{newProvider: newProvider, newServer: newServer}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"text streamed in order", s.textStreamedInOrder},
		{"thinking", s.thinking},
		{"reasoning resumed after a restart", s.reasoningResumed},
		{"single tool call", s.singleToolCall},
		{"parallel tool calls", s.parallelToolCalls},
		{"tool results round trip", s.toolResultsRoundTrip},
		{"images sent", s.imagesSent},
		{"tool result images sent", s.toolImagesSent},
		{"request parameters", s.requestParameters},
		{"500 then success is retried", s.retry500},
		{"429 honours Retry-After", s.retry429},
		{"cancel stops retry waits", s.cancelRetryWait},
		{"auth errors", s.authErrors},
		{"client errors are not retried", s.clientError},
		{"malformed tool arguments", s.malformedToolArgs},
		{"cancel mid-stream", s.cancelMidStream},
		{"truncated stream is an error", s.truncatedStream},
		{"stop reasons and usage", s.stopReasonsAndUsage},
		{"concurrent calls", s.concurrentCalls},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t)
		})
	}
}

type suite struct {
	newProvider func(t *testing.T, baseURL, apiKey string) llm.Provider
	newServer   func(t testing.TB, h Handler) *Server
}

// result is one Generate call as the suite observed it.
type result struct {
	deltas  []llm.Delta
	resp    *llm.Response
	err     error
	elapsed time.Duration
}

func (r result) joined(kind llm.DeltaKind) string {
	var b strings.Builder
	for _, d := range r.deltas {
		if d.Kind == kind {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

func (r result) count(kind llm.DeltaKind) int {
	n := 0
	for _, d := range r.deltas {
		if d.Kind == kind {
			n++
		}
	}
	return n
}

func (s *suite) setup(t *testing.T, h Handler) (*Server, llm.Provider) {
	srv := s.newServer(t, h)
	return srv, s.newProvider(t, srv.URL, suiteKey)
}

func request(msgs ...llm.Message) *llm.Request {
	return &llm.Request{Model: suiteModel, System: "You are a test double.", Messages: msgs}
}

func generate(t *testing.T, ctx context.Context, p llm.Provider, req *llm.Request) result {
	t.Helper()
	var r result
	start := time.Now()
	r.resp, r.err = p.Generate(ctx, req, func(d llm.Delta) {
		if d.Text == "" {
			t.Errorf("empty %v delta", d.Kind)
		}
		r.deltas = append(r.deltas, d)
	})
	r.elapsed = time.Since(start)
	if r.err == nil && r.resp == nil {
		t.Fatal("Generate returned neither a response nor an error")
	}
	return r
}

func mustGenerate(t *testing.T, p llm.Provider, req *llm.Request) result {
	t.Helper()
	r := generate(t, t.Context(), p, req)
	if r.err != nil {
		t.Fatalf("Generate: %v", r.err)
	}
	if r.resp.Message.Role != llm.RoleAssistant {
		t.Errorf("response role = %q, want assistant", r.resp.Message.Role)
	}
	return r
}

// JSONEqual reports whether a and b are the same JSON value.
func JSONEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// isObject reports whether raw is a JSON object.
func isObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

var (
	readFile = llm.ToolDef{
		Name:        "read_file",
		Description: "Read a file from the workspace.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"relative path"}},"required":["path"],"additionalProperties":false}`),
	}
	writeFile = llm.ToolDef{
		Name:        "write_file",
		Description: "Write a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"mode":{"type":"integer","minimum":0,"maximum":511}},"required":["path","content"]}`),
	}
)

func (s *suite) textStreamedInOrder(t *testing.T) {
	const text = "Hello from the fake model: streaming works, ünïcödé included."
	srv, p := s.setup(t, Script(Reply{Text: text, Chunks: 5, Usage: llm.Usage{InputTokens: 11, OutputTokens: 7}}))
	r := mustGenerate(t, p, request(llm.TextMessage(llm.RoleUser, "say hello")))
	if got := r.joined(llm.DeltaText); got != text {
		t.Errorf("streamed text = %q, want %q", got, text)
	}
	if n := r.count(llm.DeltaText); n < 2 {
		t.Errorf("got %d text deltas, want the answer streamed in several", n)
	}
	if n := r.count(llm.DeltaThinking); n != 0 {
		t.Errorf("got %d thinking deltas, want none", n)
	}
	if got := r.resp.Message.Text(); got != text {
		t.Errorf("response text = %q, want %q", got, text)
	}
	if r.resp.StopReason != llm.StopEndTurn {
		t.Errorf("stop reason = %q, want end_turn", r.resp.StopReason)
	}
	if want := (llm.Usage{InputTokens: 11, OutputTokens: 7}); r.resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", r.resp.Usage, want)
	}
	if len(r.resp.Message.ToolCalls) != 0 {
		t.Errorf("unexpected tool calls %+v", r.resp.Message.ToolCalls)
	}
	if srv.Count() != 1 {
		t.Fatalf("server got %d requests, want 1", srv.Count())
	}
	got := srv.Last()
	if got.Model != suiteModel || got.System != "You are a test double." || got.LastUserText() != "say hello" {
		t.Errorf("server got model %q, system %q, user text %q", got.Model, got.System, got.LastUserText())
	}
	if got.APIKey != suiteKey {
		t.Errorf("server got API key %q, want the configured one", got.APIKey)
	}
	if !got.Stream {
		t.Error("request was not streamed")
	}
}

func (s *suite) thinking(t *testing.T) {
	const thinking, text = "The user wants a number. Forty-two it is.", "The answer is 42."
	_, p := s.setup(t, Script(Reply{Thinking: thinking, Text: text, Chunks: 3}))
	r := mustGenerate(t, p, request(llm.TextMessage(llm.RoleUser, "what is the answer?")))
	if got := r.joined(llm.DeltaThinking); got != thinking {
		t.Errorf("streamed thinking = %q, want %q", got, thinking)
	}
	if got := r.joined(llm.DeltaText); got != text {
		t.Errorf("streamed text = %q, want %q", got, text)
	}
	lastThinking, firstText := -1, -1
	for i, d := range r.deltas {
		if d.Kind == llm.DeltaThinking {
			lastThinking = i
		} else if firstText < 0 {
			firstText = i
		}
	}
	if lastThinking > firstText {
		t.Errorf("thinking delta %d came after text delta %d", lastThinking, firstText)
	}
	if r.resp.Message.Thinking != thinking || r.resp.Message.Text() != text {
		t.Errorf("response thinking %q, text %q", r.resp.Message.Thinking, r.resp.Message.Text())
	}
}

// reasoningResumed asks for reasoning, stores the tool-calling turn the way
// the session store does (JSON) and answers it through a new provider, as
// a daemon restarted mid tool loop would. The fakes reject what the real
// APIs reject: an Anthropic tool turn without its signed thinking, a
// Gemini call without its thought signature, a temperature with thinking.
func (s *suite) reasoningResumed(t *testing.T) {
	srv, p := s.setup(t, Script(
		Reply{Thinking: "I should read the file.", ToolCalls: []llm.ToolCall{ToolCall("read_file", `{"path":"a.txt"}`)}},
		Reply{Thinking: "It greets.", Text: "It says hi."},
	))
	temp := 0.3
	req := request(llm.TextMessage(llm.RoleUser, "read a.txt"))
	req.Tools = []llm.ToolDef{readFile}
	req.Reasoning = llm.EffortMedium
	req.Temperature = &temp
	first := mustGenerate(t, p, req)
	got := srv.Last()
	if got.Vendor == VendorOpenAI {
		if got.ReasoningEffort != string(llm.EffortMedium) {
			t.Errorf("reasoning_effort = %q, want %q", got.ReasoningEffort, llm.EffortMedium)
		}
	} else if want := llm.ReasoningBudget(llm.EffortMedium); got.ThinkingBudget != want {
		t.Errorf("thinking budget = %d, want %d", got.ThinkingBudget, want)
	}
	if first.resp.Message.Thinking != "I should read the file." || len(first.resp.Message.ToolCalls) != 1 {
		t.Fatalf("first turn = %+v", first.resp.Message)
	}
	raw, err := json.Marshal(first.resp.Message)
	if err != nil {
		t.Fatal(err)
	}
	var stored llm.Message
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	call := stored.ToolCalls[0]
	req.Messages = append(req.Messages, stored, llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: call.ID, Name: call.Name, Content: "hi"}}})
	restarted := s.newProvider(t, srv.URL, suiteKey)
	second := mustGenerate(t, restarted, req)
	if text := second.resp.Message.Text(); text != "It says hi." {
		t.Errorf("second turn text = %q", text)
	}
}

func (s *suite) singleToolCall(t *testing.T) {
	srv, p := s.setup(t, Script(Reply{ToolCalls: []llm.ToolCall{ToolCall("read_file", `{"path":"notes/a.txt"}`)}}))
	req := request(llm.TextMessage(llm.RoleUser, "read notes/a.txt"))
	req.Tools = []llm.ToolDef{readFile, writeFile}
	r := mustGenerate(t, p, req)
	calls := r.resp.Message.ToolCalls
	if len(calls) != 1 {
		t.Fatalf("got %d tool calls, want 1: %+v", len(calls), calls)
	}
	if calls[0].ID == "" || calls[0].Name != "read_file" || !JSONEqual(calls[0].Arguments, []byte(`{"path":"notes/a.txt"}`)) {
		t.Errorf("tool call = {ID:%q Name:%q Arguments:%s}", calls[0].ID, calls[0].Name, calls[0].Arguments)
	}
	if r.resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q, want tool_use", r.resp.StopReason)
	}
	got := srv.Last()
	if names := got.ToolNames(); !reflect.DeepEqual(names, []string{"read_file", "write_file"}) {
		t.Fatalf("server got tools %v", names)
	}
	for i, want := range req.Tools {
		if got.Tools[i].Description != want.Description || !JSONEqual(got.Tools[i].InputSchema, want.InputSchema) {
			t.Errorf("tool %s arrived as %q %s, want the schema unchanged", want.Name, got.Tools[i].Description, got.Tools[i].InputSchema)
		}
	}
}

func (s *suite) parallelToolCalls(t *testing.T) {
	want := []llm.ToolCall{
		ToolCall("read_file", `{"path":"a.txt"}`),
		ToolCall("read_file", `{"path":"b/ç.txt"}`),
		ToolCall("write_file", `{"path":"out.txt","content":"line one\nline \"two\"","mode":420}`),
	}
	_, p := s.setup(t, Script(Reply{Text: "Working on all three.", ToolCalls: want}))
	req := request(llm.TextMessage(llm.RoleUser, "do three things"))
	req.Tools = []llm.ToolDef{readFile, writeFile}
	r := mustGenerate(t, p, req)
	calls := r.resp.Message.ToolCalls
	if len(calls) != len(want) {
		t.Fatalf("got %d tool calls, want %d: %+v", len(calls), len(want), calls)
	}
	ids := map[string]bool{}
	for i, c := range calls {
		if c.Name != want[i].Name || !JSONEqual(c.Arguments, want[i].Arguments) {
			t.Errorf("call %d = %s %s, want %s %s", i, c.Name, c.Arguments, want[i].Name, want[i].Arguments)
		}
		if c.ID == "" || ids[c.ID] {
			t.Errorf("call %d has empty or duplicate ID %q", i, c.ID)
		}
		ids[c.ID] = true
	}
	if r.resp.Message.Text() != "Working on all three." {
		t.Errorf("text = %q", r.resp.Message.Text())
	}
	if r.resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q, want tool_use", r.resp.StopReason)
	}
}

func (s *suite) toolResultsRoundTrip(t *testing.T) {
	srv, p := s.setup(t, Script(Reply{Text: "Both read."}))
	// The third call's arguments were malformed, so the loop kept them as
	// a JSON string; adapters must still send a valid history.
	calls := []llm.ToolCall{
		{ID: "call_a1", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.txt"}`)},
		{ID: "call_b2", Name: "read_file", Arguments: json.RawMessage(`{"path":"missing.txt"}`)},
		{ID: "call_c3", Name: "write_file", Arguments: json.RawMessage(`"{\"path\": \"x"`)},
	}
	results := []llm.ToolResult{
		{CallID: "call_a1", Name: "read_file", Content: "alpha\nbeta"},
		{CallID: "call_b2", Name: "read_file", Content: "no such file", IsError: true},
		{CallID: "call_c3", Name: "write_file", Content: "arguments are not valid JSON", IsError: true},
	}
	req := request(
		llm.TextMessage(llm.RoleUser, "read a.txt and missing.txt"),
		llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: "Reading them."}}, Thinking: "not sent back", ToolCalls: calls},
		llm.Message{Role: llm.RoleTool, ToolResults: results},
		llm.TextMessage(llm.RoleUser, "and summarise"),
	)
	req.Tools = []llm.ToolDef{readFile, writeFile}
	r := mustGenerate(t, p, req)
	if r.resp.Message.Text() != "Both read." {
		t.Errorf("text = %q", r.resp.Message.Text())
	}
	got := srv.Last().Messages
	var roles []llm.Role
	for _, m := range got {
		roles = append(roles, m.Role)
	}
	if want := []llm.Role{llm.RoleUser, llm.RoleAssistant, llm.RoleTool, llm.RoleUser}; !reflect.DeepEqual(roles, want) {
		t.Fatalf("server got roles %v, want %v", roles, want)
	}
	asst, tool := got[1], got[2]
	if asst.Text() != "Reading them." {
		t.Errorf("assistant text arrived as %q", asst.Text())
	}
	if len(asst.ToolCalls) != len(calls) {
		t.Fatalf("server got %d tool calls, want %d", len(asst.ToolCalls), len(calls))
	}
	vendor := srv.Vendor
	for i, c := range asst.ToolCalls {
		want := calls[i]
		if c.Name != want.Name {
			t.Errorf("call %d name %q, want %q", i, c.Name, want.Name)
		}
		if vendor != VendorGemini && c.ID != want.ID {
			t.Errorf("call %d ID %q, want %q", i, c.ID, want.ID)
		}
		if isObject(want.Arguments) && !JSONEqual(c.Arguments, want.Arguments) {
			t.Errorf("call %d arguments %s, want %s", i, c.Arguments, want.Arguments)
		}
		if !isObject(c.Arguments) {
			t.Errorf("call %d arguments %s were sent as something other than a JSON object", i, c.Arguments)
		}
	}
	if len(tool.ToolResults) != len(results) {
		t.Fatalf("server got %d tool results, want %d", len(tool.ToolResults), len(results))
	}
	for i, res := range tool.ToolResults {
		want := results[i]
		if res.Content != want.Content || res.Name != want.Name {
			t.Errorf("result %d = %q from %q, want %q from %q", i, res.Content, res.Name, want.Content, want.Name)
		}
		if vendor != VendorGemini && res.CallID != want.CallID {
			t.Errorf("result %d call ID %q, want %q", i, res.CallID, want.CallID)
		}
		if vendor != VendorOpenAI && res.IsError != want.IsError {
			t.Errorf("result %d is_error %v, want %v", i, res.IsError, want.IsError)
		}
	}
	if got[3].Text() != "and summarise" {
		t.Errorf("last user message arrived as %q", got[3].Text())
	}
}

// tinyPNG is a 1x1 transparent PNG.
var tinyPNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
	0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
	0x42, 0x60, 0x82,
}

func (s *suite) imagesSent(t *testing.T) {
	srv, p := s.setup(t, Script(Reply{Text: "A transparent pixel."}))
	mustGenerate(t, p, request(llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
		{Text: "What is in this image?"},
		{Image: &llm.Image{MIMEType: "image/png", Data: tinyPNG}},
	}}))
	msgs := srv.Last().Messages
	if len(msgs) != 1 {
		t.Fatalf("server got %d messages, want 1", len(msgs))
	}
	var text string
	var img *llm.Image
	for _, part := range msgs[0].Parts {
		text += part.Text
		if part.Image != nil {
			img = part.Image
		}
	}
	if text != "What is in this image?" {
		t.Errorf("text arrived as %q", text)
	}
	if img == nil {
		t.Fatal("no image arrived")
	}
	if img.MIMEType != "image/png" || !bytes.Equal(img.Data, tinyPNG) {
		t.Errorf("image arrived as %s with %d bytes", img.MIMEType, len(img.Data))
	}
}

// toolImagesSent: a tool result's images reach the model the way the
// vendor allows: inside the tool result (Anthropic, Gemini), or, as
// OpenAI's tool messages take text only, in a user message right after
// all the tool messages, introduced as tool output rather than the user's.
func (s *suite) toolImagesSent(t *testing.T) {
	srv, p := s.setup(t, Script(Reply{Text: "A transparent pixel."}))
	mustGenerate(t, p, request(
		llm.TextMessage(llm.RoleUser, "Take a screenshot."),
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
			{ID: "call_shot", Name: "screenshot", Arguments: json.RawMessage(`{}`)},
			{ID: "call_clock", Name: "clock", Arguments: json.RawMessage(`{}`)},
		}},
		llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
			{CallID: "call_shot", Name: "screenshot", Content: "[image: image/png, 67 bytes]", Images: []llm.Image{{MIMEType: "image/png", Data: tinyPNG}}},
			{CallID: "call_clock", Name: "clock", Content: "noon"},
		}},
	))
	msgs := srv.Last().Messages
	if len(msgs) < 3 || msgs[2].Role != llm.RoleTool || len(msgs[2].ToolResults) != 2 {
		t.Fatalf("server got %+v, want the tool results third", msgs)
	}
	res := msgs[2].ToolResults
	if res[0].Content != "[image: image/png, 67 bytes]" || res[1].Content != "noon" || len(res[1].Images) != 0 {
		t.Errorf("tool results arrived as %+v", res)
	}
	var img *llm.Image
	if srv.Vendor == VendorOpenAI {
		if len(msgs) != 4 || msgs[3].Role != llm.RoleUser || len(res[0].Images) != 0 {
			t.Fatalf("server got %+v, want the image in a user message after the tool messages", msgs)
		}
		caption := msgs[3].Text()
		if !strings.Contains(caption, "call_shot (screenshot)") || !strings.Contains(caption, "not a message from the user") {
			t.Errorf("the image's user message says %q, want it to name the call and say it is tool output", caption)
		}
		for _, part := range msgs[3].Parts {
			if part.Image != nil {
				img = part.Image
			}
		}
	} else {
		if len(msgs) != 3 || len(res[0].Images) != 1 {
			t.Fatalf("server got %+v, want the image inside the tool result", msgs)
		}
		img = &res[0].Images[0]
	}
	if img == nil || img.MIMEType != "image/png" || !bytes.Equal(img.Data, tinyPNG) {
		t.Errorf("image arrived as %+v", img)
	}
}

func (s *suite) requestParameters(t *testing.T) {
	srv, p := s.setup(t, Script(Reply{Text: "ok"}))
	temp := 0.25
	req := request(llm.TextMessage(llm.RoleUser, "hi"))
	req.MaxTokens, req.Temperature = 321, &temp
	mustGenerate(t, p, req)
	got := srv.Last()
	if got.MaxTokens != 321 {
		t.Errorf("max tokens arrived as %d, want 321", got.MaxTokens)
	}
	if got.Temperature == nil || math.Abs(*got.Temperature-temp) > 1e-6 {
		t.Errorf("temperature arrived as %v, want %v", got.Temperature, temp)
	}
	if len(got.Tools) != 0 {
		t.Errorf("tools arrived without being offered: %v", got.ToolNames())
	}
}

func (s *suite) retry500(t *testing.T) {
	srv, p := s.setup(t, Script(Reply{Status: http.StatusInternalServerError}, Reply{Status: http.StatusServiceUnavailable}, Reply{Text: "recovered"}))
	r := mustGenerate(t, p, request(llm.TextMessage(llm.RoleUser, "hi")))
	if r.resp.Message.Text() != "recovered" {
		t.Errorf("text = %q, want the retried answer", r.resp.Message.Text())
	}
	if srv.Count() != 3 {
		t.Errorf("server got %d requests, want 3", srv.Count())
	}
}

func (s *suite) retry429(t *testing.T) {
	srv, p := s.setup(t, Script(Reply{Status: http.StatusTooManyRequests, RetryAfter: "1"}, Reply{Text: "after the wait"}))
	r := mustGenerate(t, p, request(llm.TextMessage(llm.RoleUser, "hi")))
	if r.resp.Message.Text() != "after the wait" {
		t.Errorf("text = %q", r.resp.Message.Text())
	}
	if srv.Count() != 2 {
		t.Errorf("server got %d requests, want 2", srv.Count())
	}
	if r.elapsed < 950*time.Millisecond {
		t.Errorf("retried after %v, before the 1s Retry-After", r.elapsed)
	}
	if r.elapsed > 8*time.Second {
		t.Errorf("retry took %v", r.elapsed)
	}
}

func (s *suite) cancelRetryWait(t *testing.T) {
	srv, p := s.setup(t, Always(Reply{Status: http.StatusServiceUnavailable, RetryAfter: "30"}))
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	r := generate(t, ctx, p, request(llm.TextMessage(llm.RoleUser, "hi")))
	if !errors.Is(r.err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", r.err)
	}
	if r.elapsed > 3*time.Second {
		t.Errorf("Generate took %v; the retry wait ignored ctx", r.elapsed)
	}
	if srv.Count() != 1 {
		t.Errorf("server got %d requests, want 1", srv.Count())
	}
}

func (s *suite) authErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply Reply
	}{
		{"401", Reply{Status: http.StatusUnauthorized}},
		{"403", Reply{Status: http.StatusForbidden}},
		{"401 echoing the key", Reply{Status: http.StatusUnauthorized, ErrorMessage: "Incorrect API key provided: " + suiteKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, p := s.setup(t, Always(tc.reply))
			r := generate(t, t.Context(), p, request(llm.TextMessage(llm.RoleUser, "hi")))
			if !errors.Is(r.err, llm.ErrAuth) {
				t.Fatalf("err = %v, want llm.ErrAuth", r.err)
			}
			var ae *llm.AuthError
			if !errors.As(r.err, &ae) || ae.EnvVar != SuiteAPIKeyEnv || ae.Provider == "" {
				t.Errorf("err = %#v, want an *llm.AuthError naming %s", r.err, SuiteAPIKeyEnv)
			}
			if msg := r.err.Error(); !strings.Contains(msg, SuiteAPIKeyEnv) || strings.Contains(msg, suiteKey) {
				t.Errorf("error %q must name %s and not contain the key", msg, SuiteAPIKeyEnv)
			}
			if strings.Contains(fmt.Sprintf("%+v %#v", r.err, r.err), suiteKey) {
				t.Error("formatted error contains the key")
			}
			if srv.Count() != 1 {
				t.Errorf("server got %d requests, want 1 (auth errors are not retried)", srv.Count())
			}
		})
	}
}

func (s *suite) clientError(t *testing.T) {
	srv, p := s.setup(t, Always(Reply{Status: http.StatusBadRequest, ErrorMessage: "model llmtest-model does not exist"}))
	r := generate(t, t.Context(), p, request(llm.TextMessage(llm.RoleUser, "hi")))
	if r.err == nil {
		t.Fatal("Generate succeeded on a 400")
	}
	if errors.Is(r.err, llm.ErrAuth) {
		t.Errorf("err = %v, a 400 is not an auth error", r.err)
	}
	if !strings.Contains(r.err.Error(), "does not exist") {
		t.Errorf("err = %q, want the server's message", r.err)
	}
	if srv.Count() != 1 {
		t.Errorf("server got %d requests, want 1", srv.Count())
	}
}

func (s *suite) malformedToolArgs(t *testing.T) {
	_, p := s.setup(t, Script(Reply{ToolCalls: []llm.ToolCall{ToolCall("write_file", `{"path":"x.txt","content":"hello"}`)}, MalformedToolArgs: true}))
	req := request(llm.TextMessage(llm.RoleUser, "write x.txt"))
	req.Tools = []llm.ToolDef{readFile, writeFile}
	r := mustGenerate(t, p, req)
	calls := r.resp.Message.ToolCalls
	if len(calls) != 1 {
		t.Fatalf("got %d tool calls, want 1", len(calls))
	}
	c := calls[0]
	if c.ID == "" || c.Name != "write_file" {
		t.Errorf("call = {ID:%q Name:%q}", c.ID, c.Name)
	}
	var raw string
	if !json.Valid(c.Arguments) || isObject(c.Arguments) || json.Unmarshal(c.Arguments, &raw) != nil || raw == "" {
		t.Errorf("arguments = %s, want the model's raw text as a JSON string", c.Arguments)
	}
	if r.resp.StopReason != llm.StopToolUse {
		t.Errorf("stop reason = %q, want tool_use", r.resp.StopReason)
	}
}

func (s *suite) cancelMidStream(t *testing.T) {
	_, p := s.setup(t, Script(Reply{Text: "one two three four five", Chunks: 5, Delay: 20 * time.Second}))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelled time.Time
	var deltas int
	_, err := p.Generate(ctx, request(llm.TextMessage(llm.RoleUser, "count slowly")), func(d llm.Delta) {
		deltas++
		if deltas == 1 {
			cancelled = time.Now()
			cancel()
		}
	})
	if deltas == 0 {
		t.Fatalf("no delta before the error %v", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(cancelled); d > 2*time.Second {
		t.Errorf("Generate returned %v after cancel", d)
	}
}

func (s *suite) truncatedStream(t *testing.T) {
	_, p := s.setup(t, Script(Reply{Text: "this answer is cut", Chunks: 2, Disconnect: true}))
	r := generate(t, t.Context(), p, request(llm.TextMessage(llm.RoleUser, "hi")))
	if r.err == nil {
		t.Fatalf("Generate returned %q with no error for a stream that never finished", r.resp.Message.Text())
	}
}

func (s *suite) stopReasonsAndUsage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply Reply
		want  llm.StopReason
	}{
		{"end_turn", Reply{Text: "done", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 3, OutputTokens: 1}}, llm.StopEndTurn},
		{"max_tokens", Reply{Text: "this was cut", StopReason: llm.StopMaxTokens, Usage: llm.Usage{InputTokens: 5, OutputTokens: 9}}, llm.StopMaxTokens},
		{"refusal", Reply{Text: "I can't help with that.", StopReason: llm.StopRefusal, Usage: llm.Usage{InputTokens: 8, OutputTokens: 6}}, llm.StopRefusal},
		{"tool_use", Reply{ToolCalls: []llm.ToolCall{ToolCall("read_file", `{"path":"a"}`)}, Usage: llm.Usage{InputTokens: 40, OutputTokens: 12}}, llm.StopToolUse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, p := s.setup(t, Script(tc.reply))
			req := request(llm.TextMessage(llm.RoleUser, "hi"))
			req.Tools = []llm.ToolDef{readFile}
			r := mustGenerate(t, p, req)
			if r.resp.StopReason != tc.want {
				t.Errorf("stop reason = %q, want %q", r.resp.StopReason, tc.want)
			}
			if r.resp.Usage != tc.reply.Usage {
				t.Errorf("usage = %+v, want %+v", r.resp.Usage, tc.reply.Usage)
			}
		})
	}
}

func (s *suite) concurrentCalls(t *testing.T) {
	srv, p := s.setup(t, func(r *Request) Reply {
		return Reply{Text: "echo: " + r.LastUserText(), Chunks: 3}
	})
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			want := fmt.Sprintf("echo: message %d", i)
			resp, err := p.Generate(t.Context(), request(llm.TextMessage(llm.RoleUser, fmt.Sprintf("message %d", i))), nil)
			switch {
			case err != nil:
				errs[i] = err
			case resp.Message.Text() != want:
				errs[i] = fmt.Errorf("got %q, want %q", resp.Message.Text(), want)
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if srv.Count() != n {
		t.Errorf("server got %d requests, want %d", srv.Count(), n)
	}
}
