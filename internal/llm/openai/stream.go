package openai

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

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
	hasUsage bool // a usage block came: usage is a count, not a zero value
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
		a.hasUsage = true
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
// and allocations; a model streaming one token per chunk pays that per
// token. The SDK still makes the request, retries it and splits the event
// stream (ssestream.Stream decodes each event's data into this type).
//
// UnmarshalJSON reads the chunk with gjson, the parser under the SDK's
// decoder, by the SDK's rules for these fields, so that an answer reads
// the same as it did through oai.ChatCompletionChunk (FuzzChunkDecoder
// compares the two): keys match exactly (encoding/json would also take
// "Content"), the last of duplicate keys wins, null is absent, a string
// field takes any other value's text (a number's digits, an object's raw
// JSON), an integer field gjson's reading of any value, a field of
// unexpected type is skipped rather than failing the answer, and only a
// chunk that is not an object is an error. encoding/json has checked the
// syntax before UnmarshalJSON runs.
type streamChunk struct {
	Choices []chunkChoice
	// Usage is nil until the last chunk, sent because of
	// stream_options.include_usage.
	Usage *chunkUsage
}

type chunkChoice struct {
	Index        int64
	Delta        chunkDelta
	FinishReason string
}

type chunkDelta struct {
	Content   string
	Refusal   string
	ToolCalls []chunkToolCall
	// ReasoningContent (vLLM, llama.cpp, DeepSeek) and Reasoning
	// (Ollama, OpenRouter) are compatible servers' non-standard fields for
	// reasoning text; only JSON strings count.
	ReasoningContent string
	Reasoning        string
}

type chunkToolCall struct {
	Index    int64
	ID       string
	Function struct {
		Name      string
		Arguments string
	}
}

type chunkUsage struct {
	PromptTokens     int64
	CompletionTokens int64
}

// UnmarshalJSON implements json.Unmarshaler.
func (c *streamChunk) UnmarshalJSON(data []byte) error {
	*c = streamChunk{}
	root := gjson.ParseBytes(data)
	switch {
	case root.Type == gjson.Null:
		return nil
	case !root.IsObject():
		return &json.UnmarshalTypeError{Value: "non-object", Type: reflect.TypeFor[streamChunk]()}
	}
	forFields(root, []string{"choices", "usage"}, func(k string, v gjson.Result) {
		switch k {
		case "choices":
			c.Choices = nil
			if v.IsArray() {
				c.Choices = make([]chunkChoice, 0, 1)
				v.ForEach(func(_, item gjson.Result) bool {
					c.Choices = append(c.Choices, decodeChoice(item))
					return true
				})
			}
		case "usage":
			c.Usage = nil
			if v.Type != gjson.Null {
				u := &chunkUsage{}
				forFields(v, []string{"prompt_tokens", "completion_tokens"}, func(k string, v gjson.Result) {
					switch k {
					case "prompt_tokens":
						u.PromptTokens = v.Int()
					case "completion_tokens":
						u.CompletionTokens = v.Int()
					}
				})
				c.Usage = u
			}
		}
	})
	return nil
}

// forFields calls f for the fields of v named in keys, if v is an object;
// the SDK reads any other value as an object without fields. A name that
// appears twice counts once, at its first appearance: the SDK's decoder
// keeps the first of repeated names (encoding/json would keep the last),
// which FuzzChunkDecoder found.
func forFields(v gjson.Result, keys []string, f func(k string, v gjson.Result)) {
	if !v.IsObject() {
		return
	}
	var seen uint64 // bit i: keys[i] was met
	v.ForEach(func(k, v gjson.Result) bool {
		i := slices.Index(keys, k.Str)
		if i < 0 || seen&(1<<i) != 0 {
			return true
		}
		seen |= 1 << i
		f(k.Str, v)
		return true
	})
}

func decodeChoice(v gjson.Result) chunkChoice {
	var ch chunkChoice
	forFields(v, []string{"index", "finish_reason", "delta"}, func(k string, v gjson.Result) {
		switch k {
		case "index":
			ch.Index = v.Int()
		case "finish_reason":
			ch.FinishReason = v.String()
		case "delta":
			ch.Delta = chunkDelta{}
			forFields(v, []string{"content", "refusal", "reasoning_content", "reasoning", "tool_calls"}, func(k string, v gjson.Result) {
				d := &ch.Delta
				switch k {
				case "content":
					d.Content = v.String()
				case "refusal":
					d.Refusal = v.String()
				case "reasoning_content":
					d.ReasoningContent = jsonString(v)
				case "reasoning":
					d.Reasoning = jsonString(v)
				case "tool_calls":
					d.ToolCalls = nil
					if v.IsArray() {
						v.ForEach(func(_, item gjson.Result) bool {
							d.ToolCalls = append(d.ToolCalls, decodeToolCall(item))
							return true
						})
					}
				}
			})
		}
	})
	return ch
}

func decodeToolCall(v gjson.Result) chunkToolCall {
	var tc chunkToolCall
	forFields(v, []string{"index", "id", "function"}, func(k string, v gjson.Result) {
		switch k {
		case "index":
			tc.Index = v.Int()
		case "id":
			tc.ID = v.String()
		case "function":
			tc.Function.Name, tc.Function.Arguments = "", ""
			forFields(v, []string{"name", "arguments"}, func(k string, v gjson.Result) {
				switch k {
				case "name":
					tc.Function.Name = v.String()
				case "arguments":
					tc.Function.Arguments = v.String()
				}
			})
		}
	})
	return tc
}

// jsonString is v's text if v is a JSON string: the SDK kept the
// non-standard reasoning fields raw, and the adapter took only strings.
func jsonString(v gjson.Result) string {
	if v.Type != gjson.String {
		return ""
	}
	if !strings.Contains(v.Raw, `\`) && utf8.ValidString(v.Raw) {
		return v.Str // encoding/json would read the same
	}
	// encoding/json's reading, as the adapter had it: invalid UTF-8 and
	// lone surrogates become U+FFFD.
	var s string
	if json.Unmarshal([]byte(v.Raw), &s) != nil {
		return ""
	}
	return s
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
	return &llm.Response{Message: msg, Usage: a.usage, UsageKnown: a.hasUsage, StopReason: stopReason(a.finish, a.refused, len(msg.ToolCalls) > 0), FinishReason: a.finish}, nil
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
