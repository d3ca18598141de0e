// Package llmtest provides fakes for testing code that talks to language
// models without a network or an API key:
//
//   - in-process HTTP servers speaking the OpenAI Chat Completions, Anthropic
//     Messages and Gemini generateContent wire formats, streaming server-sent
//     events the way the real APIs do (NewOpenAIServer, NewAnthropicServer,
//     NewGeminiServer), so a real provider adapter can be pointed at
//     Server.URL;
//   - Provider, a scripted llm.Provider with no HTTP at all, for fast unit
//     tests of the agent loop;
//   - RunProviderSuite, the contract every vendor adapter must pass.
//
// Every fake is driven by a Handler that sees a vendor-neutral view of what
// the client sent (Request) and says what the model answers (Reply). Script
// serves replies in order. Handlers run on server goroutines and may be
// called concurrently; they must not call t.FailNow (t.Errorf is fine).
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/llm"
)

// Vendor names, as found in Request.Vendor and Server.Vendor.
const (
	VendorOpenAI    = "openai"
	VendorAnthropic = "anthropic"
	VendorGemini    = "gemini"
	// VendorScripted is the in-process Provider.
	VendorScripted = "llmtest"
)

// Handler decides the model's reply to one request. It may be called
// concurrently from several goroutines.
type Handler func(req *Request) Reply

// Request is the vendor-neutral view of one model call as a fake received
// it. Messages are decoded back from the vendor's wire format, so a test can
// check what an adapter really sent; vendor limits show through (OpenAI has
// no is_error flag on tool results, Gemini carries call IDs only when the
// client sends them).
type Request struct {
	// Vendor is the wire format the request arrived in.
	Vendor string
	// Seq numbers the requests a server or Provider received, from 1.
	Seq         int
	Model       string
	System      string
	Messages    []llm.Message
	Tools       []llm.ToolDef
	MaxTokens   int
	Temperature *float64
	// Stream is whether the client asked for a streamed answer.
	Stream bool
	// ReasoningEffort is OpenAI's reasoning_effort, if sent.
	ReasoningEffort string
	// ThinkingBudget is the thinking-token budget Anthropic's thinking
	// or Gemini's thinkingConfig asked for; 0 if thinking is off.
	ThinkingBudget int
	// APIKey is the credential the client presented (bearer token,
	// x-api-key or x-goog-api-key), empty if none.
	APIKey string
	// Header holds the HTTP request headers; nil for the scripted Provider.
	Header http.Header
	// Body is the raw request body; nil for the scripted Provider.
	Body []byte

	tb testing.TB
}

// ToolNames lists the names of the tools offered to the model, in order.
func (r *Request) ToolNames() []string {
	names := make([]string, len(r.Tools))
	for i, t := range r.Tools {
		names[i] = t.Name
	}
	return names
}

// LastUserText is the text of the last user message, or "".
func (r *Request) LastUserText() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == llm.RoleUser {
			return r.Messages[i].Text()
		}
	}
	return ""
}

// Reply is what the fake model answers.
type Reply struct {
	// Text is the answer, streamed as Chunks deltas.
	Text string
	// Thinking is reasoning text, streamed before Text as Chunks deltas.
	Thinking string
	// ToolCalls the model makes, streamed after Text. Empty IDs are filled
	// in with vendor-style IDs; empty Arguments become {}.
	ToolCalls []llm.ToolCall
	// Status, when neither 0 nor 200, makes the fake answer with that HTTP
	// status and a vendor-style error body instead of a stream.
	Status int
	// ErrorMessage is the message of the error body; a default otherwise.
	ErrorMessage string
	// RetryAfter is sent as the Retry-After header of an error reply.
	RetryAfter string
	// MalformedToolArgs truncates the arguments of every tool call so they
	// are not valid JSON. Gemini cannot express that on the wire; its fake
	// ends the answer with finishReason MALFORMED_FUNCTION_CALL instead.
	MalformedToolArgs bool
	// Usage reported at the end of the stream.
	Usage llm.Usage
	// NoUsage leaves the usage out, as OpenAI-compatible servers that
	// ignore stream_options.include_usage do (the OpenAI and Gemini fakes
	// and the in-process provider; Anthropic always reports it).
	NoUsage bool
	// StopReason reported at the end; default tool_use when there are
	// tool calls, end_turn otherwise.
	StopReason llm.StopReason
	// Delay is waited before every content delta but the first, honouring
	// the request's context, so a test can cancel mid-stream.
	Delay time.Duration
	// Chunks splits Text and Thinking into that many deltas each (at rune
	// boundaries); 0 means 1.
	Chunks int
	// Disconnect ends the stream right after the content, without the
	// vendor's final events (finish reason, usage, end marker), as when a
	// connection drops mid-answer.
	Disconnect bool
}

func (r Reply) failed() bool { return r.Status != 0 && r.Status != http.StatusOK }

// stopReason is the reply's stop reason with its default applied.
func (r Reply) stopReason() llm.StopReason {
	if r.StopReason != "" {
		return r.StopReason
	}
	if len(r.ToolCalls) > 0 {
		return llm.StopToolUse
	}
	return llm.StopEndTurn
}

// errorMessage is the message of an error reply.
func (r Reply) errorMessage() string {
	if r.ErrorMessage != "" {
		return r.ErrorMessage
	}
	if t := http.StatusText(r.Status); t != "" {
		return "llmtest: " + strings.ToLower(t)
	}
	return fmt.Sprintf("llmtest: status %d", r.Status)
}

// calls returns the reply's tool calls with IDs filled in by newID and
// arguments normalised; with MalformedToolArgs the arguments are truncated.
func (r Reply) calls(newID func(i int) string) []wireCall {
	out := make([]wireCall, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		id := c.ID
		if id == "" {
			id = newID(i)
		}
		args := strings.TrimSpace(string(c.Arguments))
		if args == "" {
			args = "{}"
		}
		if r.MalformedToolArgs {
			args = truncateJSON(args)
		}
		out[i] = wireCall{id: id, name: c.Name, args: args}
	}
	return out
}

// wireCall is a tool call about to be written to the wire.
type wireCall struct{ id, name, args string }

// truncateJSON cuts s so that it is no longer valid JSON.
func truncateJSON(s string) string {
	if len(s) <= 1 {
		return "{"
	}
	t := s[:len(s)-1]
	if json.Valid([]byte(t)) {
		return t + ","
	}
	return t
}

// split cuts s into at most n non-empty pieces of roughly equal rune
// length; it returns nil for an empty s.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	runes := utf8.RuneCountInString(s)
	if n < 1 {
		n = 1
	}
	if n > runes {
		n = runes
	}
	pieces := make([]string, 0, n)
	per, extra := runes/n, runes%n
	rest := s
	for i := range n {
		size := per
		if i < extra {
			size++
		}
		cut := 0
		for range size {
			_, w := utf8.DecodeRuneInString(rest[cut:])
			cut += w
		}
		pieces = append(pieces, rest[:cut])
		rest = rest[cut:]
	}
	return pieces
}

// fragments cuts tool-call arguments into a few pieces, so adapters must
// assemble them as they would from a real stream.
func fragments(args string) []string {
	n := 3
	if len(args) < 6 {
		n = 1
	}
	return split(args, n)
}

// ToolCall builds a tool call for a Reply. The ID is left empty so the fake
// assigns a vendor-style one.
func ToolCall(name, argsJSON string) llm.ToolCall {
	return llm.ToolCall{Name: name, Arguments: json.RawMessage(argsJSON)}
}

// Script returns a Handler that serves replies in order, one per request;
// a retried request takes the next reply, so Script(Reply{Status: 500},
// Reply{Text: "ok"}) tests a retry. A request beyond the last reply fails
// the test (with t.Errorf) and gets a 400 error, which adapters do not
// retry.
func Script(replies ...Reply) Handler {
	var (
		mu   sync.Mutex
		next int
	)
	return func(req *Request) Reply {
		mu.Lock()
		i := next
		next++
		mu.Unlock()
		if i < len(replies) {
			return replies[i]
		}
		msg := fmt.Sprintf("llmtest: script exhausted: request %d but only %d replies", i+1, len(replies))
		if req.tb != nil {
			req.tb.Errorf("%s", msg)
		}
		return Reply{Status: http.StatusBadRequest, ErrorMessage: msg}
	}
}

// Always returns a Handler that gives the same reply to every request.
func Always(r Reply) Handler {
	return func(*Request) Reply { return r }
}

// RequireAPIKey wraps next so that requests not presenting key get a 401.
func RequireAPIKey(key string, next Handler) Handler {
	return func(req *Request) Reply {
		if req.APIKey != key {
			return Reply{Status: http.StatusUnauthorized, ErrorMessage: "llmtest: invalid api key"}
		}
		return next(req)
	}
}

// recorder keeps the requests a fake received.
type recorder struct {
	mu   sync.Mutex
	reqs []*Request
}

func (r *recorder) add(req *Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	req.Seq = len(r.reqs)
}

// Requests returns every request received so far, in arrival order.
func (r *recorder) Requests() []*Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Request(nil), r.reqs...)
}

// Count is the number of requests received so far.
func (r *recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// Last returns the most recent request, or nil if there was none.
func (r *recorder) Last() *Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		return nil
	}
	return r.reqs[len(r.reqs)-1]
}
