package builtin

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/tool"
)

func allTools() []tool.Tool {
	tools := FileTools()
	tools = append(tools, ShellExec(ShellOptions{}), WebFetch(WebFetchOptions{}))
	return append(tools, MemoryTools(&fakeMemory{})...)
}

func TestSpecs(t *testing.T) {
	readOnly := map[string]bool{"file_read": true, "file_list": true, "memory_recall": true, "web_fetch": true}
	var names []string
	for _, tl := range allTools() {
		s := tl.Spec()
		names = append(names, s.Name)
		t.Run(s.Name, func(t *testing.T) {
			if s.Origin != tool.OriginBuiltin {
				t.Errorf("origin %q", s.Origin)
			}
			if s.ReadOnly != readOnly[s.Name] {
				t.Errorf("ReadOnly = %v", s.ReadOnly)
			}
			if s.Untrusted != (s.Name == "web_fetch") {
				t.Errorf("Untrusted = %v", s.Untrusted)
			}
			if len(s.Description) < 40 {
				t.Errorf("description too short: %q", s.Description)
			}
			var schema struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if err := json.Unmarshal(s.InputSchema, &schema); err != nil {
				t.Fatalf("schema: %v", err)
			}
			if schema.Type != "object" || len(schema.Properties) == 0 {
				t.Errorf("schema %s", s.InputSchema)
			}
			for _, r := range schema.Required {
				if _, ok := schema.Properties[r]; !ok {
					t.Errorf("required %q is not a property", r)
				}
			}
			for name, p := range schema.Properties {
				var prop struct {
					Type        string `json:"type"`
					Description string `json:"description"`
				}
				if err := json.Unmarshal(p, &prop); err != nil || prop.Type == "" || prop.Description == "" {
					t.Errorf("property %q lacks a type or description: %s", name, p)
				}
			}
		})
	}
	want := []string{"file_list", "file_read", "file_write", "memory_recall", "memory_store", "shell_exec", "web_fetch"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

func TestBadArguments(t *testing.T) {
	for _, tl := range allTools() {
		t.Run(tl.Spec().Name, func(t *testing.T) {
			res, err := tl.Call(t.Context(), &tool.Call{Agent: "a", Workspace: t.TempDir(), Args: json.RawMessage(`[1,2`)})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(res.Content, "invalid arguments") {
				t.Errorf("result %+v", res)
			}
		})
	}
}
