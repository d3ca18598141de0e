package anthropic

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/agentd/agentd/internal/llm"
)

// accumulator assembles a streamed message from its events.
type accumulator struct {
	text     strings.Builder
	thinking strings.Builder
	// calls are the tool_use blocks by content block index.
	calls map[int64]*partialCall
	// thoughts are the thinking and redacted_thinking blocks by index.
	thoughts map[int64]*llm.Thought
	stop     string
	stopped  bool // message_stop seen
	usage    llm.Usage
	// hasUsage: message_start came, whose usage the Messages API always
	// fills in.
	hasUsage bool
}

// partialCall is a tool_use block whose input is still arriving.
type partialCall struct {
	index    int64
	id, name string
	// start is the input of content_block_start, used when no
	// input_json_delta follows.
	start json.RawMessage
	input strings.Builder
}

// add folds one event into the message, reporting text and thinking
// fragments to onDelta as they come.
func (a *accumulator) add(ev sdk.MessageStreamEventUnion, onDelta func(llm.Delta)) {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		a.usage.InputTokens = int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens)
		a.usage.OutputTokens = int(u.OutputTokens)
		a.hasUsage = true
	case "content_block_start":
		b := ev.ContentBlock
		switch b.Type {
		case "text":
			a.addText(llm.DeltaText, b.Text, onDelta)
		case "thinking":
			th := a.thought(ev.Index)
			th.Text, th.Signature = b.Thinking, b.Signature
			a.addText(llm.DeltaThinking, b.Thinking, onDelta)
		case "redacted_thinking":
			a.thought(ev.Index).Redacted = b.Data
		case "tool_use":
			if a.calls == nil {
				a.calls = map[int64]*partialCall{}
			}
			c := &partialCall{index: ev.Index, id: b.ID, name: b.Name}
			if raw := b.JSON.Input.Raw(); raw != "" && raw != "null" {
				c.start = json.RawMessage(raw)
			}
			a.calls[ev.Index] = c
		}
	case "content_block_delta":
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			a.addText(llm.DeltaText, d.Text, onDelta)
		case "thinking_delta":
			a.thought(ev.Index).Text += d.Thinking
			a.addText(llm.DeltaThinking, d.Thinking, onDelta)
		case "signature_delta":
			a.thought(ev.Index).Signature += d.Signature
		case "input_json_delta":
			if c, ok := a.calls[ev.Index]; ok {
				c.input.WriteString(d.PartialJSON)
			}
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stop = string(ev.Delta.StopReason)
		}
		u := ev.Usage
		if in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; in > 0 {
			a.usage.InputTokens = int(in)
		}
		a.usage.OutputTokens = int(u.OutputTokens)
	case "message_stop":
		a.stopped = true
	}
}

// thought is the reasoning block at index, created on first use.
func (a *accumulator) thought(index int64) *llm.Thought {
	if a.thoughts == nil {
		a.thoughts = map[int64]*llm.Thought{}
	}
	th, ok := a.thoughts[index]
	if !ok {
		th = &llm.Thought{}
		a.thoughts[index] = th
	}
	return th
}

func (a *accumulator) addText(kind llm.DeltaKind, text string, onDelta func(llm.Delta)) {
	if text == "" {
		return
	}
	if kind == llm.DeltaThinking {
		a.thinking.WriteString(text)
	} else {
		a.text.WriteString(text)
	}
	onDelta(llm.Delta{Kind: kind, Text: text})
}

// response returns the assembled message. A stream that ended before
// message_stop was cut off, and is an error rather than a short answer.
func (a *accumulator) response() (*llm.Response, error) {
	if !a.stopped {
		return nil, fmt.Errorf("stream ended before the model finished: %w", io.ErrUnexpectedEOF)
	}
	msg := llm.Message{Role: llm.RoleAssistant, Thinking: a.thinking.String()}
	if a.text.Len() > 0 {
		msg.Parts = []llm.Part{{Text: a.text.String()}}
	}
	for _, i := range slices.Sorted(maps.Keys(a.thoughts)) {
		// Unsigned thinking cannot be replayed; it stays display text.
		if th := a.thoughts[i]; th.Signature != "" || th.Redacted != "" {
			msg.Thoughts = append(msg.Thoughts, *th)
		}
	}
	calls := make([]*partialCall, 0, len(a.calls))
	for _, c := range a.calls {
		calls = append(calls, c)
	}
	slices.SortFunc(calls, func(x, y *partialCall) int { return cmp.Compare(x.index, y.index) })
	for _, c := range calls {
		input := c.input.String()
		if strings.TrimSpace(input) == "" && c.start != nil {
			input = string(c.start)
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.id, Name: c.name, Arguments: llm.ToolArguments(input)})
	}
	return &llm.Response{Message: msg, Usage: a.usage, UsageKnown: a.hasUsage, StopReason: stopReason(a.stop, len(msg.ToolCalls) > 0), FinishReason: a.stop}, nil
}

// stopReason normalises the API's stop reason.
func stopReason(stop string, calls bool) llm.StopReason {
	switch stop {
	case "max_tokens", "model_context_window_exceeded":
		return llm.StopMaxTokens
	case "refusal":
		return llm.StopRefusal
	case "tool_use":
		if calls {
			return llm.StopToolUse
		}
		return llm.StopEndTurn
	default: // end_turn, stop_sequence, pause_turn
		if calls {
			return llm.StopToolUse
		}
		return llm.StopEndTurn
	}
}
