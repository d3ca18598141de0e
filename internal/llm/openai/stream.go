package openai

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/agentd/agentd/internal/llm"
)

// accumulator assembles a streamed answer. Only choice 0 is kept (the
// adapter never asks for more).
type accumulator struct {
	text     strings.Builder
	thinking strings.Builder
	calls    []*partialCall
	byIndex  map[int64]*partialCall
	finish   string
	refused  bool
	usage    llm.Usage
}

// partialCall is a tool call whose fragments are still arriving.
type partialCall struct {
	id, name string
	args     strings.Builder
}

// add folds one chunk into the answer, reporting text and thinking
// fragments to onDelta as they come.
func (a *accumulator) add(chunk oai.ChatCompletionChunk, onDelta func(llm.Delta)) {
	if chunk.JSON.Usage.Valid() {
		a.usage = llm.Usage{InputTokens: int(chunk.Usage.PromptTokens), OutputTokens: int(chunk.Usage.CompletionTokens)}
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue
		}
		d := choice.Delta
		if t := reasoning(d); t != "" {
			a.thinking.WriteString(t)
			onDelta(llm.Delta{Kind: llm.DeltaThinking, Text: t})
		}
		if d.Content != "" {
			a.text.WriteString(d.Content)
			onDelta(llm.Delta{Kind: llm.DeltaText, Text: d.Content})
		}
		if d.Refusal != "" {
			a.refused = true
			a.text.WriteString(d.Refusal)
			onDelta(llm.Delta{Kind: llm.DeltaText, Text: d.Refusal})
		}
		for _, frag := range d.ToolCalls {
			a.addCall(frag)
		}
		if choice.FinishReason != "" {
			a.finish = choice.FinishReason
		}
	}
}

// addCall folds in one tool-call fragment. Fragments are matched by index;
// a fragment bringing a different ID at a known index starts a new call,
// for servers that number every call 0.
func (a *accumulator) addCall(frag oai.ChatCompletionChunkChoiceDeltaToolCall) {
	if a.byIndex == nil {
		a.byIndex = map[int64]*partialCall{}
	}
	c, ok := a.byIndex[frag.Index]
	if !ok || (frag.ID != "" && c.id != "" && frag.ID != c.id) {
		c = &partialCall{}
		a.byIndex[frag.Index] = c
		a.calls = append(a.calls, c)
	}
	if c.id == "" {
		c.id = frag.ID
	}
	if c.name == "" {
		c.name = frag.Function.Name
	}
	c.args.WriteString(frag.Function.Arguments)
}

// reasoning returns the reasoning text of a delta from compatible servers'
// extra fields: reasoning_content (vLLM, llama.cpp, DeepSeek) or reasoning
// (Ollama, OpenRouter). Servers sending both send the same text, so only
// one is taken.
func reasoning(d oai.ChatCompletionChunkChoiceDelta) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// response returns the assembled answer. A stream that ended without a
// finish reason was cut off, and is an error rather than a short answer.
func (a *accumulator) response() (*llm.Response, error) {
	if a.finish == "" {
		return nil, fmt.Errorf("stream ended before the model finished: %w", io.ErrUnexpectedEOF)
	}
	msg := llm.Message{Role: llm.RoleAssistant, Thinking: a.thinking.String()}
	if a.text.Len() > 0 {
		msg.Parts = []llm.Part{{Text: a.text.String()}}
	}
	for _, c := range a.calls {
		id := c.id
		if id == "" {
			id = newCallID()
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: id, Name: c.name, Arguments: llm.ToolArguments(c.args.String())})
	}
	return &llm.Response{Message: msg, Usage: a.usage, StopReason: stopReason(a.finish, a.refused, len(msg.ToolCalls) > 0)}, nil
}

// stopReason normalises a finish reason. Some compatible servers say
// "stop" after tool calls; calls decide.
func stopReason(finish string, refused, calls bool) llm.StopReason {
	switch {
	case refused || finish == "content_filter":
		return llm.StopRefusal
	case finish == "length":
		return llm.StopMaxTokens
	case calls:
		return llm.StopToolUse
	default:
		return llm.StopEndTurn
	}
}

// newCallID makes an ID for servers that send tool calls without one.
func newCallID() string {
	return "call_" + strings.ToLower(rand.Text()[:16])
}
