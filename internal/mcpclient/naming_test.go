package mcpclient

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestToolName(t *testing.T) {
	tests := []struct {
		server, tool, want string
	}{
		{"github", "create_issue", "mcp_github_create_issue"},
		{"my-server", "do_thing", "mcp_my_server_do_thing"},
		{"everything", "get-tiny-image", "mcp_everything_get_tiny_image"},
		{"GitHub", "CreateIssue", "mcp_github_createissue"},
		{"fs", "read.file/v2", "mcp_fs_read_file_v2"},
		{"fs", "ファイル", "mcp_fs_____"},
		{"fs", "bad\xffutf8", "mcp_fs_bad_utf8"},
		{"a", "", "mcp_a_"},
		{"s", "tool with spaces", "mcp_s_tool_with_spaces"},
	}
	for _, tt := range tests {
		t.Run(tt.server+"/"+tt.tool, func(t *testing.T) {
			if got := ToolName(tt.server, tt.tool); got != tt.want {
				t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
			}
		})
	}
}

func TestToolNameLong(t *testing.T) {
	a := ToolName("enterprise-github", strings.Repeat("very_long_tool_name_", 5)+"a")
	b := ToolName("enterprise-github", strings.Repeat("very_long_tool_name_", 5)+"b")
	if len(a) != maxToolNameLen || len(b) != maxToolNameLen {
		t.Errorf("lengths %d and %d, want %d", len(a), len(b), maxToolNameLen)
	}
	if a == b {
		t.Errorf("two long names that differ at the end both became %q", a)
	}
	if !strings.HasPrefix(a, "mcp_enterprise_github_very_long_tool_name_") {
		t.Errorf("long name %q lost its readable prefix", a)
	}
	if a != ToolName("enterprise-github", strings.Repeat("very_long_tool_name_", 5)+"a") {
		t.Error("long names are not stable")
	}
}

var validToolName = regexp.MustCompile(`^mcp_[a-z0-9_]*$`)

func FuzzToolName(f *testing.F) {
	f.Add("github", "create_issue")
	f.Add("my-server", "do-thing")
	f.Add("Ünïcödé", "tööl")
	f.Add("", "")
	f.Add(strings.Repeat("x", 70), "y")
	f.Fuzz(func(t *testing.T, server, tool string) {
		got := ToolName(server, tool)
		if !validToolName.MatchString(got) {
			t.Fatalf("ToolName(%q, %q) = %q: not [a-z0-9_]", server, tool, got)
		}
		if len(got) > maxToolNameLen {
			t.Fatalf("ToolName(%q, %q) = %q: longer than %d", server, tool, got, maxToolNameLen)
		}
		if got != ToolName(server, tool) {
			t.Fatal("not deterministic")
		}
		// Short names are exactly the documented formula.
		naive := "mcp_" + serverKey(server) + "_" + serverKey(tool)
		if len(naive) <= maxToolNameLen && got != naive {
			t.Fatalf("ToolName(%q, %q) = %q, want %q", server, tool, got, naive)
		}
		// Normalising is idempotent for names already normal.
		if validToolName.MatchString("mcp_"+server) && validToolName.MatchString("mcp_"+tool) && len(naive) <= maxToolNameLen && got != "mcp_"+server+"_"+tool {
			t.Fatalf("a normal name changed: %q", got)
		}
	})
}

func TestAllowedToolPatterns(t *testing.T) {
	list := func(p ...string) *[]string { return &p }
	tests := []struct {
		name    string
		allowed *[]string
		tool    string
		want    bool
	}{
		{"nil allows all", nil, "anything", true},
		{"empty allows none", list(), "anything", false},
		{"exact", list("read_file"), "read_file", true},
		{"exact miss", list("read_file"), "read_files", false},
		{"star", list("read_*"), "read_text_file", true},
		{"star miss", list("read_*"), "write_file", false},
		{"question", list("get-su?"), "get-sum", true},
		{"class", list("[gs]et-*"), "set-level", true},
		{"star does not cross slash", list("a*"), "a/b", false},
		{"bad pattern matches only itself", list("["), "[", true},
		{"bad pattern glob", list("[a"), "a", false},
		{"several", list("x", "echo"), "echo", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := allowedTool(tt.allowed, tt.tool); got != tt.want {
				t.Errorf("allowedTool(%v, %q) = %v, want %v", tt.allowed, tt.tool, got, tt.want)
			}
		})
	}
}

func TestNormalizeSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"nil", "", `{"type":"object"}`},
		{"null", "null", `{"type":"object"}`},
		{"not json", "{oops", `{"type":"object"}`},
		{"array", "[1,2]", `{"type":"object"}`},
		{"string", `"object"`, `{"type":"object"}`},
		{"empty object", "{}", `{"type":"object"}`},
		{"missing type", `{"properties":{"a":{"type":"string"}},"required":["a"]}`, `{"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}`},
		{"kept", `{"type":"object","properties":{"n":{"type":"number"}},"$schema":"http://json-schema.org/draft-07/schema#"}`, `{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"n":{"type":"number"}},"type":"object"}`},
		{"wrong type", `{"type":"string"}`, `{"type":"object"}`},
		{"type list", `{"type":["object","null"],"properties":{}}`, `{"properties":{},"type":"object"}`},
		{"bad properties", `{"type":"object","properties":[1]}`, `{"type":"object"}`},
		{"bad required", `{"type":"object","required":"a"}`, `{"type":"object"}`},
		{"null required", `{"type":"object","required":null}`, `{"type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(NormalizeSchema(json.RawMessage(tt.in))); got != tt.want {
				t.Errorf("NormalizeSchema(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzNormalizeSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{}}}`)
	f.Add(`[]`)
	f.Add(`{"required":[1]}`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, in string) {
		out := NormalizeSchema(json.RawMessage(in))
		var m map[string]json.RawMessage
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("NormalizeSchema(%q) = %s: not an object: %v", in, out, err)
		}
		if string(m["type"]) != `"object"` {
			t.Fatalf("NormalizeSchema(%q) = %s: type is not object", in, out)
		}
		if p, ok := m["properties"]; ok {
			var props map[string]json.RawMessage
			if json.Unmarshal(p, &props) != nil || props == nil {
				t.Fatalf("properties not an object: %s", out)
			}
		}
		if r, ok := m["required"]; ok {
			var req []string
			if json.Unmarshal(r, &req) != nil {
				t.Fatalf("required not a string list: %s", out)
			}
		}
		if again := NormalizeSchema(out); string(again) != string(out) {
			t.Fatalf("not idempotent: %s then %s", out, again)
		}
	})
}
