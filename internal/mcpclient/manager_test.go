package mcpclient

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/agentd/agentd/internal/config"
)

// TestValidateServer checks that Add validates with config's one
// validation of a server entry (its cases are in config's
// TestValidateMCPServer), naming the server and the field.
func TestValidateServer(t *testing.T) {
	ok := config.MCPServer{Name: "s", Transport: config.MCPTransport{Type: "stdio", Command: "npx"}}
	if err := ValidateServer(ok); err != nil {
		t.Fatalf("valid entry refused: %v", err)
	}
	bad := ok
	bad.TimeoutSecs = 86401
	err := ValidateServer(bad)
	if want := `mcp server "s": timeout_secs: must be at most 86400`; err == nil || !contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	var e *config.Error
	if !errors.As(err, &e) || e.Field != "timeout_secs" {
		t.Errorf("error is not config's: %#v", err)
	}
}

func TestManagerLifecycleWithoutServers(t *testing.T) {
	check := baseline(t)
	m := NewManager(Options{})
	if len(m.Tools()) != 0 || len(m.ResourceTools()) != 4 {
		t.Errorf("%d tools, %d resource tools", len(m.Tools()), len(m.ResourceTools()))
	}
	off := false
	disabled := config.MCPServer{Name: "off", Enabled: &off, Transport: config.MCPTransport{Type: "stdio", Command: "npx"}}
	m.Start(t.Context(), []config.MCPServer{disabled, {Name: "bad"}})
	st := m.Status()
	if len(st) != 2 || st[0].State != StateDisabled || st[1].State != StateFailed || st[1].LastError == "" {
		t.Fatalf("status = %+v", st)
	}
	if len(m.Tools()) != 0 {
		t.Error("tools offered with only a disabled server")
	}
	if err := m.Add(t.Context(), disabled); !errors.Is(err, errDuplicate) {
		t.Errorf("duplicate Add = %v", err)
	}
	// The status renders in the API's shape.
	blob, err := json.Marshal(st[0])
	if err != nil {
		t.Fatal(err)
	}
	var shape map[string]any
	json.Unmarshal(blob, &shape)
	for _, k := range []string{"name", "transport", "state", "connected", "tools", "tools_count", "reconnects"} {
		if _, ok := shape[k]; !ok {
			t.Errorf("status JSON %s lacks %q", blob, k)
		}
	}
	if err := m.Remove(t.Context(), "off"); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(t.Context(), "nope"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("Remove unknown = %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if err := m.Add(t.Context(), config.MCPServer{Name: "late", Transport: config.MCPTransport{Type: "stdio", Command: "npx"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close = %v", err)
	}
	check()
}

func TestBuiltinToolsAreOffered(t *testing.T) {
	m := startFaults(t, testOptions(nil), "normal", nil)
	var names []string
	for _, tl := range m.ResourceTools() {
		names = append(names, tl.Spec().Name)
		if s := tl.Spec(); !s.Untrusted || s.Origin != "mcp" || string(NormalizeSchema(s.InputSchema)) == "" {
			t.Errorf("%s: %+v", s.Name, s)
		}
	}
	if want := []string{toolListResources, toolReadResource, toolListPrompts, toolGetPrompt}; !slices.Equal(names, want) {
		t.Errorf("resource tools %v, want %v", names, want)
	}
	for _, tl := range m.Tools() {
		if slices.Contains(names, tl.Spec().Name) {
			t.Errorf("%s offered twice", tl.Spec().Name)
		}
	}
	// Sessions are handed out for gateways.
	if cs, ok := m.Session("faults"); !ok || cs == nil {
		t.Error("no session for a connected server")
	}
	if _, ok := m.Session("nope"); ok {
		t.Error("a session for an unknown server")
	}
	// The fault server has no resources: listing says so instead of
	// failing; naming an unknown server is the model's mistake.
	res := callText(t, m, toolListResources, nil)
	if res.Content != "No connected MCP server offers resources." {
		t.Errorf("list_resources = %q", res.Content)
	}
	res, err := callTool(t.Context(), mustTool(t, m, toolReadResource), map[string]string{"server": "nope", "uri": "x://y"})
	if err != nil || !res.IsError || !contains(res.Content, `no MCP server named "nope"`) {
		t.Errorf("read from unknown server = %+v, %v", res, err)
	}
	res, err = callTool(t.Context(), mustTool(t, m, toolGetPrompt), map[string]string{"server": "faults"})
	if err != nil || !res.IsError || !contains(res.Content, "required") {
		t.Errorf("get_prompt without name = %+v, %v", res, err)
	}
}

func TestBackoff(t *testing.T) {
	m := NewManager(Options{})
	defer m.Close()
	s := newServer(m, config.MCPServer{Name: "b"})
	prev := 0 * m.opts.ReconnectMin
	for n := range 12 {
		d := s.backoff(n)
		upper := min(m.opts.ReconnectMin<<n, m.opts.ReconnectMax)
		if d < upper/2 || d > upper {
			t.Errorf("backoff(%d) = %s, want within [%s, %s]", n, d, upper/2, upper)
		}
		if n > 0 && upper < m.opts.ReconnectMax && d < prev/4 {
			t.Errorf("backoff(%d) = %s shrank from %s", n, d, prev)
		}
		prev = d
	}
	if s.backoff(40) > 30*1e9 {
		t.Error("backoff above its 30 s cap")
	}
}
