package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentd/agentd/internal/llm"
)

// TestBodyMatchesSDK holds the body Generate sends to the JSON the SDK
// makes of the same request (params), for every kind of message and
// option the adapter sends.
func TestBodyMatchesSDK(t *testing.T) {
	temp, zero := 0.5, 0.0
	img := llm.Image{MIMEType: "image/png", Data: []byte{1, 2, 3}}
	cases := map[string]*llm.Request{
		"one user message":   {Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Text: "hi"}}}}},
		"empty user message": {Model: "m", Messages: []llm.Message{{Role: llm.RoleUser}}},
		"options": {Model: "m", System: "be brief", MaxTokens: 77, Temperature: &temp, Reasoning: "high",
			Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Text: "a"}, {Text: "b"}}}}},
		"zero temperature": {Model: "m", Temperature: &zero, Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Text: "x"}}}}},
		"user images":      {Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Text: "look"}, {Image: &img}, {Text: ""}, {Image: &img}}}}},
		"tools": {Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Text: "x"}}}}, Tools: []llm.ToolDef{
			{Name: "file_read", Description: "reads <files> & more", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "no_schema"},
			{Name: "blank_schema", InputSchema: json.RawMessage("  \n")},
			{Name: "bad_schema", Description: "d", InputSchema: json.RawMessage(`{"type":`)},
		}},
		"a whole turn": {Model: "m", System: "sys", Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Text: "do it"}}},
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: "calling"}}, ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "t", Arguments: json.RawMessage(`{"a":1}`)},
				{ID: "c2", Name: "t", Arguments: json.RawMessage(`"not an object"`)},
				{ID: "c3", Name: "t"},
			}},
			{Role: llm.RoleTool, ToolResults: []llm.ToolResult{
				{CallID: "c1", Name: "t", Content: "one"},
				{CallID: "c2", Name: "t", Content: "", IsError: true},
				{CallID: "c3", Name: "t", Content: "pictures", Images: []llm.Image{img, img}},
			}},
			{Role: llm.RoleAssistant}, // a thinking-only turn: nothing to replay
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Text: "done \u2028 \"quoted\" <b>"}}},
			{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c4", Name: "u", Content: "one image", Images: []llm.Image{img}}}},
		}},
	}
	for _, official := range []bool{false, true} {
		p := &Provider{official: official}
		for name, req := range cases {
			sdk, err := p.params(req).MarshalJSON()
			if err != nil {
				t.Fatalf("%s: SDK: %v", name, err)
			}
			ours, err := p.body(req)
			if err != nil {
				t.Fatalf("%s: body: %v", name, err)
			}
			var want, got any
			if err := json.Unmarshal(sdk, &want); err != nil {
				t.Fatalf("%s: SDK JSON: %v", name, err)
			}
			if err := json.Unmarshal(ours, &got); err != nil {
				t.Fatalf("%s: body JSON: %v", name, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s (official %v):\nbody %s\nSDK  %s", name, official, ours, sdk)
			}
		}
	}
}
