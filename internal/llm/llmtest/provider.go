package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm"
)

// ScriptedAPIKeyEnv is the environment variable the scripted Provider's
// authentication errors name.
const ScriptedAPIKeyEnv = "LLMTEST_API_KEY"

// Provider is an in-process llm.Provider driven by a Handler: no HTTP, no
// retries. It streams a Reply's Thinking and Text as deltas (honouring
// Delay and ctx), returns its tool calls (malformed arguments become a JSON
// string, as the vendor adapters do), and turns an error Status into an
// error: 401 and 403 into *llm.AuthError, anything else into *StatusError.
type Provider struct {
	recorder
	tb      testing.TB
	handler Handler
}

var _ llm.Provider = (*Provider)(nil)

// NewProvider returns a scripted provider. A nil h answers "ok" to
// everything. tb receives Script's complaints; it may be nil in examples.
func NewProvider(tb testing.TB, h Handler) *Provider {
	if h == nil {
		h = Always(Reply{Text: "ok"})
	}
	return &Provider{tb: tb, handler: h}
}

// StatusError is the scripted Provider's error for a Reply with an error
// Status other than 401 and 403.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("llmtest: status %d: %s", e.Status, e.Message)
}

// Generate implements llm.Provider.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("llmtest: generate: %w", err)
	}
	r := &Request{
		Vendor:      VendorScripted,
		Model:       req.Model,
		System:      req.System,
		Messages:    cloneMessages(req.Messages),
		Tools:       slices.Clone(req.Tools),
		MaxTokens:   req.MaxTokens,
		Temperature: req.Temperature,
		Stream:      true,
		// The scripted provider has no wire format; it reports the
		// neutral effort where OpenAI's fake reports reasoning_effort.
		ReasoningEffort: string(req.Reasoning),
		tb:              p.tb,
	}
	p.add(r)
	rep := p.handler(r)
	if rep.failed() {
		if rep.Status == http.StatusUnauthorized || rep.Status == http.StatusForbidden {
			return nil, &llm.AuthError{Provider: VendorScripted, EnvVar: ScriptedAPIKeyEnv, Err: &StatusError{Status: rep.Status, Message: rep.errorMessage()}}
		}
		return nil, &StatusError{Status: rep.Status, Message: rep.errorMessage()}
	}
	if onDelta == nil {
		onDelta = func(llm.Delta) {}
	}
	paced := 0
	emit := func(kind llm.DeltaKind, text string) error {
		paced++
		if paced > 1 && rep.Delay > 0 {
			t := time.NewTimer(rep.Delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return fmt.Errorf("llmtest: generate: %w", ctx.Err())
			}
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("llmtest: generate: %w", err)
		}
		onDelta(llm.Delta{Kind: kind, Text: text})
		return nil
	}
	for _, piece := range split(rep.Thinking, rep.Chunks) {
		if err := emit(llm.DeltaThinking, piece); err != nil {
			return nil, err
		}
	}
	for _, piece := range split(rep.Text, rep.Chunks) {
		if err := emit(llm.DeltaText, piece); err != nil {
			return nil, err
		}
	}
	if rep.Disconnect {
		return nil, fmt.Errorf("llmtest: generate: stream ended before the answer finished: %w", io.ErrUnexpectedEOF)
	}
	msg := llm.Message{Role: llm.RoleAssistant, Thinking: rep.Thinking}
	if rep.Text != "" {
		msg.Parts = []llm.Part{{Text: rep.Text}}
	}
	for i, c := range rep.calls(newIDs("call_llmtest", r.Seq)) {
		// A scripted signature stands for a vendor's (Gemini's thought
		// signature): it must survive to the next request.
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.id, Name: c.name, Arguments: rawArgs(c.args), Signature: rep.ToolCalls[i].Signature})
	}
	return &llm.Response{Message: msg, Usage: rep.Usage, UsageKnown: !rep.NoUsage, StopReason: rep.stopReason(), FinishReason: string(rep.stopReason())}, nil
}

// cloneMessages deep-copies msgs so that a handler or a later assertion
// sees what was sent even if the caller reuses its slices.
func cloneMessages(msgs []llm.Message) []llm.Message {
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		m.Parts = slices.Clone(m.Parts)
		for j, part := range m.Parts {
			if part.Image != nil {
				img := *part.Image
				img.Data = slices.Clone(img.Data)
				m.Parts[j].Image = &img
			}
		}
		m.ToolCalls = slices.Clone(m.ToolCalls)
		for j, c := range m.ToolCalls {
			m.ToolCalls[j].Arguments = json.RawMessage(slices.Clone([]byte(c.Arguments)))
			m.ToolCalls[j].Signature = slices.Clone(c.Signature)
		}
		m.Thoughts = slices.Clone(m.Thoughts)
		m.ToolResults = slices.Clone(m.ToolResults)
		for j, r := range m.ToolResults {
			m.ToolResults[j].Images = slices.Clone(r.Images)
			for k, img := range r.Images {
				m.ToolResults[j].Images[k].Data = slices.Clone(img.Data)
			}
		}
		out[i] = m
	}
	return out
}
