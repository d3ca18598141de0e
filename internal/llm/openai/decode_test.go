package openai

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	oai "github.com/openai/openai-go/v3"
)

// chunkFields is what the accumulator reads of a chunk, whichever type
// decoded it.
type chunkFields struct {
	HasUsage           bool
	Prompt, Completion int64
	Choices            []choiceFields
}

type choiceFields struct {
	Index                               int64
	Content, Refusal, Reasoning, Finish string
	Calls                               []string // index, id, name, arguments
}

func sdkFields(c *oai.ChatCompletionChunk) chunkFields {
	f := chunkFields{HasUsage: c.JSON.Usage.Valid()}
	if f.HasUsage {
		f.Prompt, f.Completion = c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
	for _, ch := range c.Choices {
		cf := choiceFields{Index: ch.Index, Content: ch.Delta.Content, Refusal: ch.Delta.Refusal, Reasoning: sdkReasoning(ch.Delta), Finish: ch.FinishReason}
		for _, tc := range ch.Delta.ToolCalls {
			cf.Calls = append(cf.Calls, fmt.Sprintf("%d|%s|%s|%s", tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments))
		}
		f.Choices = append(f.Choices, cf)
	}
	return f
}

func ourFields(c *streamChunk) chunkFields {
	var f chunkFields
	if c.Usage != nil {
		f.HasUsage, f.Prompt, f.Completion = true, c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		cf := choiceFields{Index: ch.Index, Content: ch.Delta.Content, Refusal: ch.Delta.Refusal, Reasoning: ch.Delta.reasoning(), Finish: ch.FinishReason}
		for _, tc := range ch.Delta.ToolCalls {
			cf.Calls = append(cf.Calls, fmt.Sprintf("%d|%s|%s|%s", tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments))
		}
		f.Choices = append(f.Choices, cf)
	}
	return f
}

// sdkReasoning is how the adapter read reasoning from the SDK's chunk:
// the extra fields reasoning_content, else reasoning.
func sdkReasoning(d oai.ChatCompletionChunkChoiceDelta) string {
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

// FuzzChunkDecoder: streamChunk reads from a chunk what the SDK's
// oai.ChatCompletionChunk reads, for every field the accumulator uses.
func FuzzChunkDecoder(f *testing.F) {
	for _, s := range []string{
		`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}`,
		`{"choices":[{"index":0,"delta":{"content":"lo \u00e9\n"},"finish_reason":"stop"}],"usage":null}`,
		`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`,
		`{"choices":[{"index":1,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":"think","reasoning":"think"}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"hmm","refusal":"no"}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"hi","reasoning":{"effort":"low"}}}]}`,
		`{"choices":[{"index":0,"delta":{}}],"usage":{"prompt_tokens":"many","completion_tokens":2}}`,
		// Repeated names: the SDK keeps the first, at every level.
		`{"choices":[{"index":1,"index":2,"delta":{"content":"a","content":"b","reasoning":"","reasoning":"r"}}],"choices":[],"usage":{"prompt_tokens":1,"prompt_tokens":2},"usage":null}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":1,"index":2,"id":"a","id":"b","function":{"name":"n","name":"m","arguments":"x","arguments":"y"},"function":{}}],"tool_calls":[]}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var sdk oai.ChatCompletionChunk
		sdkErr := json.Unmarshal(data, &sdk)
		var ours streamChunk
		err := json.Unmarshal(data, &ours)
		if (sdkErr == nil) != (err == nil) {
			t.Fatalf("%s: the SDK's error %v, streamChunk's %v", data, sdkErr, err)
		}
		if err != nil {
			return
		}
		if want, got := sdkFields(&sdk), ourFields(&ours); !reflect.DeepEqual(want, got) {
			t.Fatalf("%s\nSDK:         %+v\nstreamChunk: %+v", data, want, got)
		}
	})
}

// BenchmarkChunkDecode decodes a typical streamed text chunk the way
// ssestream does (json.Unmarshal), into the SDK's type and into
// streamChunk.
func BenchmarkChunkDecode(b *testing.B) {
	data := []byte(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}],"usage":null}`)
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c oai.ChatCompletionChunk
			if err := json.Unmarshal(data, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("streamChunk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var c streamChunk
			if err := json.Unmarshal(data, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
