package openai

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

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
func (a *accumulator) add(chunk *streamChunk, onDelta func(llm.Delta)) {
	if u := chunk.Usage; u != nil {
		a.usage = llm.Usage{InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens)}
	}
	for i := range chunk.Choices {
		choice := &chunk.Choices[i]
		if choice.Index != 0 {
			continue
		}
		d := &choice.Delta
		if t := d.reasoning(); t != "" {
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
		for j := range d.ToolCalls {
			a.addCall(&d.ToolCalls[j])
		}
		if choice.FinishReason != "" {
			a.finish = choice.FinishReason
		}
	}
}

// addCall folds in one tool-call fragment. Fragments are matched by index;
// a fragment bringing a different ID at a known index starts a new call,
// for servers that number every call 0.
func (a *accumulator) addCall(frag *chunkToolCall) {
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

// streamChunk is the part of a streamed chat.completion.chunk that the
// accumulator reads. The SDK's oai.ChatCompletionChunk decodes every field
// of every chunk through its reflective decoder (and keeps each field's raw
// JSON for its validity metadata), which cost about three times the CPU
// and allocations of this plain struct; a model streaming one token per
// chunk pays that per token. The SDK still makes the request, retries it
// and splits the event stream (ssestream.Stream decodes each event's data
// into this type with encoding/json).
type streamChunk struct {
	Choices []chunkChoice `json:"choices"`
	// Usage is nil until the last chunk, sent because of
	// stream_options.include_usage.
	Usage *chunkUsage `json:"usage"`
}

type chunkChoice struct {
	Index        int64      `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason string     `json:"finish_reason"`
}

type chunkDelta struct {
	Content   string          `json:"content"`
	Refusal   string          `json:"refusal"`
	ToolCalls []chunkToolCall `json:"tool_calls"`
	// ReasoningContent (vLLM, llama.cpp, DeepSeek) and Reasoning
	// (Ollama, OpenRouter) are compatible servers' non-standard fields for
	// reasoning text.
	ReasoningContent string `json:"reasoning_content"`
	Reasoning        string `json:"reasoning"`
}

type chunkToolCall struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chunkUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// UnmarshalJSON decodes a chunk as leniently as the SDK's decoder: a field
// of an unexpected type (a compatible server's "reasoning" object, say)
// is left empty instead of failing the whole answer. encoding/json skips
// such a field, decodes the rest and reports the first one, which is
// dropped here; malformed JSON is still an error.
func (c *streamChunk) UnmarshalJSON(data []byte) error {
	type plain streamChunk // without this method
	err := json.Unmarshal(data, (*plain)(c))
	if _, mistyped := errors.AsType[*json.UnmarshalTypeError](err); mistyped {
		return nil
	}
	return err
}

// reasoning returns the delta's reasoning text. Servers sending both
// fields send the same text, so only one is taken.
func (d *chunkDelta) reasoning() string {
	if d.ReasoningContent != "" {
		return d.ReasoningContent
	}
	return d.Reasoning
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
