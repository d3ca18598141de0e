package config

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/manifest"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestValidateMCPServer checks servers as the API receives them: JSON,
// no file, field paths relative to the server.
func TestValidateMCPServer(t *testing.T) {
	tests := []struct {
		name string
		json string
		want string // "" = valid
	}{
		{"stdio", `{"name":"fs","transport":{"type":"stdio","command":"npx","args":["-y","x"]},"env":["HOME_DIR"]}`, ""},
		{"http with header ref", `{"name":"gh","transport":{"type":"http","url":"https://api.example.com/mcp"},"headers":{"Authorization":"Bearer ${GH}"}}`, ""},
		{"sse", `{"name":"s","transport":{"type":"sse","url":"http://127.0.0.1:9/sse"},"allow_private":true}`, ""},
		{"bad type", `{"name":"x","transport":{"type":"websocket"}}`, `transport.type: "websocket" is not one of stdio, sse, http`},
		{"no name", `{"transport":{"type":"stdio","command":"x"}}`, `name: "" is not a valid server name`},
		{"dotdot", `{"name":"x","transport":{"type":"stdio","command":"..\\tools\\x.exe"}}`, `transport.command: "..\\tools\\x.exe" must not contain ".." path segments`},
		{"http url missing", `{"name":"x","transport":{"type":"http"}}`, "transport.url: required for the http transport"},
		{"literal secret header", `{"name":"x","transport":{"type":"http","url":"https://h"},"headers":{"X-Api-Key":"abc"}}`, "headers.X-Api-Key: literal secrets are not allowed"},
		{"bad header name", `{"name":"x","transport":{"type":"http","url":"https://h"},"headers":{"Bad Header":"v"}}`, `headers."Bad Header": is not a valid HTTP header name`},
		{"negative timeout", `{"name":"x","timeout_secs":-1,"transport":{"type":"stdio","command":"x"}}`, "timeout_secs: must not be negative"},
		{"empty allowed tool", `{"name":"x","allowed_tools":[""],"transport":{"type":"stdio","command":"x"}}`, "allowed_tools[0]: empty pattern"},
		{"stdio absolute", `{"name":"s","transport":{"type":"stdio","command":"/usr/bin/node"}}`, ""},
		{"dash in name", `{"name":"my-server","transport":{"type":"stdio","command":"npx"}}`, ""},
		{"dots in a command name are fine", `{"name":"s","transport":{"type":"stdio","command":"./my..server"}}`, ""},
		{"bad name", `{"name":"a b","transport":{"type":"stdio","command":"npx"}}`, `name: "a b" is not a valid server name (1-64 letters, digits`},
		{"leading dash", `{"name":"-a","transport":{"type":"stdio","command":"npx"}}`, "starting with a letter or digit"},
		{"dot-dot command", `{"name":"s","transport":{"type":"stdio","command":"../bin/server"}}`, `must not contain ".." path segments`},
		{"dot-dot inside", `{"name":"s","transport":{"type":"stdio","command":"/opt/x/../../bin/sh"}}`, `must not contain ".." path segments`},
		{"no command", `{"name":"s","transport":{"type":"stdio"}}`, "transport.command: required for the stdio transport"},
		{"no type", `{"name":"x"}`, "transport.type: required: one of stdio, sse, http"},
		{"ftp url", `{"name":"w","transport":{"type":"http","url":"ftp://example.com"}}`, "transport.url: must be an http:// or https:// URL with a host"},
		{"url for stdio", `{"name":"s","transport":{"type":"stdio","command":"npx","url":"http://x"}}`, "transport.url: not used by the stdio transport"},
		{"headers for stdio", `{"name":"s","transport":{"type":"stdio","command":"npx"},"headers":{"A":"b"}}`, "headers: only the http and sse transports send headers"},
		{"header line break", `{"name":"w","transport":{"type":"http","url":"https://x"},"headers":{"X":"a\r\nEvil: 1"}}`, "headers.X: the value contains a line break"},
		{"bad env name", `{"name":"s","transport":{"type":"stdio","command":"npx"},"env":["OK","NOT-OK"]}`, "env[1]: must name an environment variable"},
		{"timeout over a day", `{"name":"x","timeout_secs":86401,"transport":{"type":"stdio","command":"x"}}`, "timeout_secs: must be at most 86400 (a day)"},
		{"bad glob", `{"name":"x","allowed_tools":["[x"],"transport":{"type":"stdio","command":"x"}}`, `allowed_tools[0]: bad pattern "[x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s MCPServer
			if err := json.Unmarshal([]byte(tt.json), &s); err != nil {
				t.Fatal(err)
			}
			err := ValidateMCPServer(s)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ValidateMCPServer: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "" || e.Line != 0 {
				t.Errorf("API validation error has a file position: %+v", e)
			}
		})
	}
}

// TestConfigValidate covers configs built in code, as other packages'
// tests build them.
func TestConfigValidate(t *testing.T) {
	ok := &Config{
		Agents: []manifest.Manifest{{Name: "a", Provider: "openai", Model: "m"}},
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(before defaults): %v", err)
	}
	ok.ApplyDefaults()
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(after defaults): %v", err)
	}
	before := *ok.A2A.PublicCard
	ok.ApplyDefaults()
	if *ok.A2A.PublicCard != before || ok.Listen != DefaultListen {
		t.Error("ApplyDefaults is not idempotent")
	}

	bad := &Config{
		Providers: map[string]Provider{"p": {Kind: "openai"}},
		Agents: []manifest.Manifest{
			{Name: "a", Provider: "openai", Model: "m"},
			{Name: "a", Kind: manifest.KindMCPProxy},
		},
		DefaultAgent: "zzz",
	}
	err := bad.Validate()
	for _, want := range []string{
		`agents[0].provider: "openai" is not a configured provider (configured: p)`,
		`agents[1].name: agent "a" is already defined at agents[0].name`,
		`default_agent: "zzz" is not a configured agent`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to contain %q", err, want)
		}
	}
}

// TestManifestSafetyNet: whatever manifest.Validate refuses, config
// refuses too, so an agent accepted here never fails later.
func TestManifestSafetyNet(t *testing.T) {
	cases := []manifest.Manifest{
		{Name: "-x", Kind: manifest.KindMCPProxy},
		{Name: "x"},
		{Name: "x", Provider: "openai"},
		{Name: "x", Kind: "k"},
		{Name: "x", Kind: manifest.KindMCPProxy, MaxTokens: -1},
		{Name: "x", Kind: manifest.KindMCPProxy, Skills: []manifest.Skill{{ID: "i"}}},
	}
	for _, m := range cases {
		if m.Validate() == nil {
			t.Fatalf("case %+v is valid for manifest; fix the test", m)
		}
		c := &Config{Agents: []manifest.Manifest{m}}
		if err := c.Validate(); err == nil {
			t.Errorf("config accepted %+v, which manifest.Validate refuses", m)
		}
	}
}

// TestValidateMCPServerNeverQuotesSecrets: header values and URLs are
// where secrets are pasted; no error message repeats them.
func TestValidateMCPServerNeverQuotesSecrets(t *testing.T) {
	s := MCPServer{Name: "w", Headers: map[string]string{"X": "s3cr3t\nvalue"}, Transport: MCPTransport{Type: "http", URL: "https://user:pw0rd@/"}}
	err := ValidateMCPServer(s)
	if err == nil {
		t.Fatal("invalid entry accepted")
	}
	for _, leak := range []string{"s3cr3t", "pw0rd"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("error %q quotes %q", err, leak)
		}
	}
}

func TestErrorListIsBounded(t *testing.T) {
	env := make([]string, 45)
	for i := range env {
		env[i] = "1BAD"
	}
	err := ValidateMCPServer(MCPServer{Name: "x", Env: env, Transport: MCPTransport{Type: "stdio", Command: "x"}})
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("err = %v", err)
	}
	if len(list) != maxErrors+1 || !strings.Contains(list[maxErrors].Msg, "15 more problems") {
		t.Errorf("got %d problems, last %q; want %d and a summary", len(list), list[len(list)-1].Msg, maxErrors+1)
	}
}
