package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/llm"
)

// The decoders turn each vendor's wire request into the neutral view; these
// tests pin that view for requests shaped like the real SDKs send them.

func TestDecodeOpenAIRequest(t *testing.T) {
	body := `{"model":"gpt","max_completion_tokens":50,"temperature":0.5,"stream":true,
	"messages":[
		{"role":"system","content":"be brief"},
		{"role":"developer","content":[{"type":"text","text":"really"}]},
		{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AQI="}}]},
		{"role":"assistant","content":null,"tool_calls":[
			{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"p\":1}"}},
			{"id":"c2","type":"function","function":{"name":"write","arguments":"{oops"}}]},
		{"role":"tool","tool_call_id":"c1","content":"one"},
		{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"two"}]}
	],
	"tools":[{"type":"function","function":{"name":"read","description":"r","parameters":{"type":"object"}}}]}`
	got, err := decodeOpenAIRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	temp := 0.5
	want := &Request{
		Model: "gpt", System: "be brief\nreally", MaxTokens: 50, Temperature: &temp, Stream: true,
		Tools: []llm.ToolDef{{Name: "read", Description: "r", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Text: "look"}, {Image: &llm.Image{MIMEType: "image/png", Data: []byte{1, 2}}}}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
				{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"p":1}`)},
				{ID: "c2", Name: "write", Arguments: json.RawMessage(`"{oops"`)},
			}},
			{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Name: "read", Content: "one"}, {CallID: "c2", Name: "write", Content: "two"}}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestDecodeAnthropicRequest(t *testing.T) {
	body := `{"model":"claude","max_tokens":99,"system":[{"type":"text","text":"sys"}],
	"messages":[
		{"role":"user","content":"hi"},
		{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"llmtest-signature"},{"type":"redacted_thinking","data":"enc"},{"type":"text","text":"ok"},{"type":"tool_use","id":"tu1","name":"read","input":{"p":1}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":[{"type":"text","text":"res"}],"is_error":true},{"type":"text","text":"more"},{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lG"}}]}
	],
	"tools":[{"name":"read","input_schema":{"type":"object"}}]}`
	got, err := decodeAnthropicRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := &Request{
		Model: "claude", System: "sys", MaxTokens: 99,
		Tools: []llm.ToolDef{{Name: "read", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		Messages: []llm.Message{
			llm.TextMessage(llm.RoleUser, "hi"),
			{Role: llm.RoleAssistant, Thinking: "t", Thoughts: []llm.Thought{{Text: "t", Signature: AnthropicSignature}, {Redacted: "enc"}}, Parts: []llm.Part{{Text: "ok"}}, ToolCalls: []llm.ToolCall{{ID: "tu1", Name: "read", Arguments: json.RawMessage(`{"p":1}`)}}},
			{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "tu1", Name: "read", Content: "res", IsError: true}}},
			{Role: llm.RoleUser, Parts: []llm.Part{{Text: "more"}, {Image: &llm.Image{MIMEType: "image/gif", Data: []byte("GIF")}}}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if _, err := decodeAnthropicRequest([]byte(`{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"b","input":"str"}]}]}`)); err == nil {
		t.Error("tool_use input that is not an object was accepted")
	}
}

// The real API's rules for extended thinking, which the fake enforces so
// that an adapter breaking them fails here rather than in production.
func TestDecodeAnthropicThinkingRules(t *testing.T) {
	const loop = `"messages":[{"role":"user","content":"hi"},
		{"role":"assistant","content":[%s{"type":"tool_use","id":"tu1","name":"read","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"res"}]}]`
	signed := `{"type":"thinking","thinking":"t","signature":"llmtest-signature"},`
	for _, tc := range []struct {
		name, body, wantErr string
	}{
		{"signed thinking kept", `{"model":"m","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2048},` + fmt.Sprintf(loop, signed) + `}`, ""},
		{"thinking lost in the tool loop", `{"model":"m","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":2048},` + fmt.Sprintf(loop, "") + `}`, "must start with a thinking block"},
		{"thinking off needs none", `{"model":"m","max_tokens":4096,` + fmt.Sprintf(loop, "") + `}`, ""},
		{"forged signature", `{"model":"m","max_tokens":4096,` + fmt.Sprintf(loop, `{"type":"thinking","thinking":"t","signature":"x"},`) + `}`, "Invalid `signature`"},
		{"unsigned thinking", `{"model":"m","max_tokens":4096,` + fmt.Sprintf(loop, `{"type":"thinking","thinking":"t"},`) + `}`, "signature: Field required"},
		{"budget below minimum", `{"model":"m","max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":512},"messages":[{"role":"user","content":"hi"}]}`, "greater than or equal to 1024"},
		{"max_tokens within budget", `{"model":"m","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":"hi"}]}`, "must be greater than"},
		{"temperature with thinking", `{"model":"m","max_tokens":4096,"temperature":0.2,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":"hi"}]}`, "temperature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeAnthropicRequest([]byte(tc.body))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestDecodeGeminiThoughtSignatureRule(t *testing.T) {
	sig := base64.StdEncoding.EncodeToString(GeminiThoughtSignature)
	const tmpl = `{"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}},"contents":[
		{"role":"user","parts":[{"text":"go"}]},
		{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}%s}]},
		{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"x"}}}]}]}`
	if _, err := decodeGeminiRequest([]byte(fmt.Sprintf(tmpl, `,"thoughtSignature":"`+sig+`"`))); err != nil {
		t.Errorf("signed call rejected: %v", err)
	}
	if _, err := decodeGeminiRequest([]byte(fmt.Sprintf(tmpl, ""))); err == nil || !strings.Contains(err.Error(), "thought_signature") {
		t.Errorf("unsigned call of the current turn: err = %v", err)
	}
	older := strings.Replace(fmt.Sprintf(tmpl, ""), `]}]}`, `]},{"role":"user","parts":[{"text":"next"}]}]}`, 1)
	if _, err := decodeGeminiRequest([]byte(older)); err != nil {
		t.Errorf("unsigned call of an earlier turn rejected: %v", err)
	}
}

func TestDecodeGeminiRequest(t *testing.T) {
	body := `{"systemInstruction":{"parts":[{"text":"sys"}]},
	"generationConfig":{"maxOutputTokens":7,"temperature":0.25},
	"contents":[
		{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"AQI="}}]},
		{"role":"model","parts":[{"text":"t","thought":true},{"text":"calling"},{"functionCall":{"name":"read","args":{"p":1}},"thoughtSignature":"c2ln"}]},
		{"role":"user","parts":[{"functionResponse":{"name":"read","response":{"error":"boom"}}},{"functionResponse":{"id":"x","name":"read","response":{"rows":[1]}}}]}
	],
	"tools":[{"functionDeclarations":[{"name":"read","description":"r","parametersJsonSchema":{"type":"object"}}]}]}`
	got, err := decodeGeminiRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	temp := 0.25
	want := &Request{
		System: "sys", MaxTokens: 7, Temperature: &temp,
		Tools: []llm.ToolDef{{Name: "read", Description: "r", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Text: "hi"}, {Image: &llm.Image{MIMEType: "image/png", Data: []byte{1, 2}}}}},
			{Role: llm.RoleAssistant, Thinking: "t", Parts: []llm.Part{{Text: "calling"}}, ToolCalls: []llm.ToolCall{{Name: "read", Arguments: json.RawMessage(`{"p":1}`), Signature: []byte("sig")}}},
			{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{Name: "read", Content: "boom", IsError: true}, {CallID: "x", Name: "read", Content: `{"rows":[1]}`}}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	r := &Request{Vendor: VendorGemini, Body: []byte(body)}
	if sigs := r.ThoughtSignatures(); len(sigs) != 1 || string(sigs[0]) != "sig" {
		t.Errorf("thought signatures = %q", sigs)
	}
}

func TestParseDataURL(t *testing.T) {
	tests := []struct {
		in      string
		mime    string
		data    string
		wantErr bool
	}{
		{"data:image/png;base64,aGk=", "image/png", "hi", false},
		{"data:image/jpeg;base64,aGk", "image/jpeg", "hi", false},
		{"https://example.com/a.png", "", "", true},
		{"data:image/png,hi", "", "", true},
		{"data:image/png;base64", "", "", true},
		{"data:image/png;base64,!!", "", "", true},
	}
	for _, tc := range tests {
		img, err := parseDataURL(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseDataURL(%q) err = %v", tc.in, err)
			continue
		}
		if err == nil && (img.MIMEType != tc.mime || string(img.Data) != tc.data) {
			t.Errorf("parseDataURL(%q) = %s %q", tc.in, img.MIMEType, img.Data)
		}
	}
}

// checkDecoded holds for every request a decoder accepts.
func checkDecoded(t *testing.T, req *Request) {
	t.Helper()
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
		default:
			t.Fatalf("decoded role %q", m.Role)
		}
		for _, c := range m.ToolCalls {
			if !json.Valid(c.Arguments) {
				t.Fatalf("decoded tool call arguments %q are not JSON", c.Arguments)
			}
		}
	}
	if _, err := json.Marshal(req.Messages); err != nil {
		t.Fatalf("decoded messages do not marshal: %v", err)
	}
}

func FuzzDecodeOpenAIRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{"}}]},{"role":"tool","tool_call_id":"a","content":"x"}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:a;base64,AA=="}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if req, err := decodeOpenAIRequest(body); err == nil {
			checkDecoded(t, req)
		}
	})
}

func FuzzDecodeAnthropicRequest(f *testing.F) {
	f.Add([]byte(`{"model":"m","max_tokens":1,"system":"s","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if req, err := decodeAnthropicRequest(body); err == nil {
			checkDecoded(t, req)
		}
	})
}

func FuzzDecodeGeminiRequest(f *testing.F) {
	f.Add([]byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"x"}}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if req, err := decodeGeminiRequest(body); err == nil {
			checkDecoded(t, req)
		}
	})
}

func FuzzParseDataURL(f *testing.F) {
	f.Add("data:image/png;base64,aGk=")
	f.Fuzz(func(t *testing.T, s string) {
		img, err := parseDataURL(s)
		if err == nil && img == nil {
			t.Fatal("nil image without error")
		}
	})
}

// TestDecodeToolResultImages pins where each vendor's tool result images
// land in the neutral view: in ToolResult.Images.
func TestDecodeToolResultImages(t *testing.T) {
	want := []llm.ToolResult{{CallID: "c1", Name: "shot", Content: "[image]", Images: []llm.Image{{MIMEType: "image/png", Data: []byte{1, 2}}}}}
	t.Run("anthropic", func(t *testing.T) {
		got, err := decodeAnthropicRequest([]byte(`{"model":"claude","max_tokens":9,"messages":[
			{"role":"user","content":"look"},
			{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"shot","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":[{"type":"text","text":"[image]"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AQI="}}]}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if res := got.Messages[2].ToolResults; !reflect.DeepEqual(res, want) {
			t.Errorf("got %+v, want %+v", res, want)
		}
	})
	t.Run("gemini", func(t *testing.T) {
		got, err := decodeGeminiRequest([]byte(`{"contents":[
			{"role":"user","parts":[{"text":"look"}]},
			{"role":"model","parts":[{"functionCall":{"id":"c1","name":"shot","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"shot","response":{"output":"[image]"},"parts":[{"inlineData":{"mimeType":"image/png","data":"AQI="}}]}}]}]}`))
		if err != nil {
			t.Fatal(err)
		}
		if res := got.Messages[2].ToolResults; !reflect.DeepEqual(res, want) {
			t.Errorf("got %+v, want %+v", res, want)
		}
	})
}
