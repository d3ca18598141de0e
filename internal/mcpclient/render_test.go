package mcpclient

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/llm"
)

func TestRenderResult(t *testing.T) {
	size := int64(2048)
	tests := []struct {
		name           string
		res            *mcp.CallToolResult
		want           string
		wantStructured string
		wantError      bool
	}{
		{"text blocks", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}}}, "one\ntwo", "", false},
		{"error result", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such file"}}}, "no such file", "", true},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "here:"}, &mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)}}}, "here:\n[image: image/png, 1234 bytes]", "", false},
		{"audio", &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 10)}}}, "[audio: audio/wav, 10 bytes]", "", false},
		{"resource link", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///a.txt", Name: "a.txt", Description: "the a file", Size: &size}}}, "file:///a.txt (a.txt): the a file", "", false},
		{"resource link, title, no description", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "x://y", Name: "y", Title: "Why"}}}, "x://y (Why)", "", false},
		{"embedded text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://n", MIMEType: "text/plain", Text: "note body"}}}}, "[resource mem://n]\nnote body", "", false},
		{"embedded blob", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "application/zip", Blob: []byte{1, 2, 3}}}}}, "[resource mem://b: application/zip, 3 bytes]", "", false},
		{"structured with its JSON copy", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: `{"temperature":33,"conditions":"Cloudy"}`}},
			StructuredContent: map[string]any{"temperature": 33, "conditions": "Cloudy"},
		}, "conditions: Cloudy\ntemperature: 33", `{"conditions":"Cloudy","temperature":33}`, false},
		{"structured with real text", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "It is cloudy."}},
			StructuredContent: map[string]any{"c": "Cloudy"},
		}, "It is cloudy.", `{"c":"Cloudy"}`, false},
		{"structured only, nested", &mcp.CallToolResult{
			StructuredContent: json.RawMessage(`{"city":"Oslo","days":[{"t":1,"u":2},{"t":2}],"meta":{"src":"x","empty":{}},"note":"a\nb"}`),
		}, "city: Oslo\ndays:\n  - t: 1\n    u: 2\n  - t: 2\nmeta:\n  src: x\n  empty: {}\nnote: a\n  b", `{"city":"Oslo","days":[{"t":1,"u":2},{"t":2}],"meta":{"src":"x","empty":{}},"note":"a\nb"}`, false},
		{"structured list", &mcp.CallToolResult{StructuredContent: []any{"a", 1, true, nil}}, "- a\n- 1\n- true\n- null", `["a",1,true,null]`, false},
		{"empty", &mcp.CallToolResult{}, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := renderResult(tt.res)
			if got.Content != tt.want || string(got.Structured) != tt.wantStructured || got.IsError != tt.wantError {
				t.Errorf("got %q %s %v\nwant %q %s %v", got.Content, got.Structured, got.IsError, tt.want, tt.wantStructured, tt.wantError)
			}
		})
	}
}

// TestRenderResultKeepsImages: image content is kept, bytes and type,
// beside the note in the text that a text-only model reads.
func TestRenderResultKeepsImages(t *testing.T) {
	got := renderResult(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "two shots"},
		&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2}},
		&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte{3}},
		&mcp.ImageContent{MIMEType: "image/jpeg", Data: []byte{4, 5, 6}},
	}})
	want := []llm.Image{{MIMEType: "image/png", Data: []byte{1, 2}}, {MIMEType: "image/jpeg", Data: []byte{4, 5, 6}}}
	if !reflect.DeepEqual(got.Images, want) {
		t.Errorf("images %+v, want %+v", got.Images, want)
	}
	if got.Content != "two shots\n[image: image/png, 2 bytes]\n[audio: audio/wav, 1 bytes]\n[image: image/jpeg, 3 bytes]" {
		t.Errorf("content %q", got.Content)
	}
}

func TestReadableJSONDepthCap(t *testing.T) {
	deep := `{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":1}}}}}}}}}}`
	got := readableJSON(json.RawMessage(deep))
	if !contains(got, `h: {"i":{"j":1}}`) {
		t.Errorf("deep value not cut to compact JSON:\n%s", got)
	}
	if bad := readableJSON(json.RawMessage(`{"a":`)); bad != `{"a":` {
		t.Errorf("invalid JSON rendered as %q", bad)
	}
}

func FuzzReadableJSON(f *testing.F) {
	f.Add(`{"a":[1,{"b":null}],"c":"d\ne"}`)
	f.Add(`[[[]]]`)
	f.Add(`"x"`)
	f.Add(`"\n"`) // once rendered empty (found by CI's fuzz run)
	f.Add(`{"k":" "}`)
	f.Fuzz(func(t *testing.T, in string) {
		out := readableJSON(json.RawMessage(in))
		if json.Valid([]byte(in)) && len(in) > 0 && out == "" {
			t.Fatalf("valid JSON %q rendered empty", in)
		}
	})
}
