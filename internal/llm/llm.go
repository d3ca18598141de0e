// Package llm is the provider-neutral vocabulary for talking to language
// models: messages, tool definitions, streamed deltas and the Provider
// interface every vendor adapter (openai, anthropic, gemini) implements.
//
// It imports no vendor SDK; adapters live in subpackages so the agent loop
// can be tested against any of them, or a fake, through one contract. What
// every adapter must agree on lives here too: how malformed tool-call
// arguments are carried (ToolArguments, ObjectArguments) and how a failed
// call is reported (AuthError, StatusError).
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Role says who wrote a message.
type Role string

// Roles. The system prompt is not a message: it travels in Request.System,
// because every vendor treats it differently.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries the results of the tool calls of the preceding
	// assistant message.
	RoleTool Role = "tool"
)

// Part is one piece of user or assistant content: text or an image.
type Part struct {
	Text  string `json:"text,omitempty"`
	Image *Image `json:"image,omitempty"`
}

// Image is inline image data passed to models that accept images.
type Image struct {
	MIMEType string `json:"mime_type"`
	Data     []byte `json:"data"`
}

// ToolCall is the model's request to run one tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Signature is an opaque token the vendor attached to the call and
	// wants back with it (Gemini's thought signature). It is part of the
	// stored conversation, so a tool loop resumed after a restart still
	// carries it.
	Signature []byte `json:"signature,omitempty"`
}

// ToolResult answers one ToolCall.
type ToolResult struct {
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Images are the result's pictures (a screenshot, a rendered chart),
	// for models that accept images; Content still describes each in
	// text, which is all a text-only model gets. Adapters send them the
	// way their vendor allows: inside the tool result (Anthropic, Gemini),
	// or in a user message right after the tool results (OpenAI Chat
	// Completions, whose tool messages take text only).
	Images []Image `json:"images,omitempty"`
}

// Message is one turn of a conversation.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts,omitempty"`
	// Thinking is reasoning text the model exposed, kept for display; it is
	// not sent back to providers.
	Thinking string `json:"thinking,omitempty"`
	// Thoughts are the vendor-signed reasoning blocks of an assistant
	// turn. Anthropic requires them back, verbatim and first, in a turn
	// that called tools while extended thinking is on; other vendors
	// ignore them.
	Thoughts    []Thought    `json:"thoughts,omitempty"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
}

// Thought is one signed reasoning block: Text with its Signature, or the
// encrypted Redacted data of a block the vendor withheld.
type Thought struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  string `json:"redacted,omitempty"`
}

// Text concatenates the text parts of m.
func (m Message) Text() string {
	var s string
	for _, p := range m.Parts {
		s += p.Text
	}
	return s
}

// TextMessage builds a message with a single text part.
func TextMessage(role Role, text string) Message {
	return Message{Role: role, Parts: []Part{{Text: text}}}
}

// ToolDef describes a tool to the model. InputSchema is raw JSON Schema of
// type object, passed through to the vendor unchanged.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Request is one model call.
type Request struct {
	Model       string
	System      string
	Messages    []Message
	Tools       []ToolDef
	MaxTokens   int      // 0 = provider default
	Temperature *float64 // nil = provider default
	// Reasoning asks for the model's reasoning at that effort; "" leaves
	// the vendor's default. Vendors that take a token budget get
	// ReasoningBudget(Reasoning).
	Reasoning Effort
}

// Effort is how hard a reasoning model should think.
type Effort string

// Reasoning efforts.
const (
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
)

// Valid reports whether e is "" or one of the known efforts.
func (e Effort) Valid() bool {
	switch e {
	case "", EffortLow, EffortMedium, EffortHigh:
		return true
	}
	return false
}

// ReasoningBudget is the thinking-token budget for vendors that take one
// (Anthropic, Gemini): 0 for "", and at least Anthropic's minimum of 1024.
func ReasoningBudget(e Effort) int {
	switch e {
	case EffortLow:
		return 2048
	case EffortMedium:
		return 8192
	case EffortHigh:
		return 24576
	}
	return 0
}

// DeltaKind says what a streamed Delta carries.
type DeltaKind int

// Delta kinds.
const (
	DeltaText DeltaKind = iota
	DeltaThinking
)

// Delta is a streamed fragment of the model's answer.
type Delta struct {
	Kind DeltaKind
	Text string
}

// Usage counts tokens of one call.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, normalised across vendors.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopRefusal   StopReason = "refusal"
)

// Response is the complete answer of one call, assembled from the stream.
type Response struct {
	Message Message // Role is RoleAssistant
	// Usage is what the provider reported; zero, and not to be taken for
	// a count, when UsageKnown is false (an OpenAI-compatible server that
	// ignores stream_options.include_usage reports none).
	Usage      Usage
	UsageKnown bool
	// StopReason is normalised across vendors, for agentd's own logic.
	StopReason StopReason
	// FinishReason is the provider's own word for it, as it sent it
	// ("stop", "tool_calls", "end_turn", "STOP"): telemetry reports this
	// one (gen_ai.response.finish_reasons). "" when the provider sent none.
	FinishReason string
}

// Provider streams one model call. onDelta is called from the calling
// goroutine for every text or thinking fragment, in order, before Generate
// returns the assembled response. Cancelling ctx aborts the stream.
type Provider interface {
	Generate(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error)
}

// ErrAuth is wrapped by AuthError; test with errors.Is.
var ErrAuth = errors.New("llm: authentication failed")

// AuthError reports a rejected or missing API key and names the
// environment variable the user should set.
type AuthError struct {
	Provider string
	EnvVar   string
	Err      error
}

func (e *AuthError) Error() string {
	msg := fmt.Sprintf("%s: authentication failed", e.Provider)
	if e.EnvVar != "" {
		msg += fmt.Sprintf(" (set %s to a valid API key)", e.EnvVar)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *AuthError) Unwrap() []error { return []error{ErrAuth, e.Err} }

// StatusError is a failed model call other than an authentication failure,
// wrapped with the provider's name. Status lets callers tell rate limiting
// (429) or overload (5xx) from a bad request without parsing text.
//
// Adapters build Message themselves, free of API keys and URL credentials,
// and never keep the vendor SDK's error, which holds the request and with
// it the key; only a transport cause stays reachable through Err.
type StatusError struct {
	// Status is the HTTP status; 0 for transport errors and for error
	// events inside an accepted stream.
	Status int
	// Message is the server's or transport's message, without secrets.
	Message string
	// Err is the transport cause, if any.
	Err error
}

func (e *StatusError) Error() string {
	if e.Status == 0 {
		return e.Message
	}
	return fmt.Sprintf("%d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

func (e *StatusError) Unwrap() error { return e.Err }
