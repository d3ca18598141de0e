package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/tool"
)

// fakeSet is a ToolSet whose tools answer with their own name.
type fakeSet struct {
	mu       sync.Mutex
	names    []string
	watchers map[int]func()
	next     int
}

func (f *fakeSet) MCPTools(context.Context) ([]*mcp.Tool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*mcp.Tool
	for _, n := range f.names {
		out = append(out, &mcp.Tool{Name: n, Description: "set tool " + n, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	return out, nil
}

func (f *fakeSet) CallMCPTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "set answered " + req.Params.Name}, &mcp.ResourceLink{URI: "https://example.com/x", Name: "x"}},
		StructuredContent: map[string]any{"task_id": "t1"},
	}, nil
}

func (f *fakeSet) OnChange(fn func()) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.watchers == nil {
		f.watchers = map[int]func(){}
	}
	id := f.next
	f.next++
	f.watchers[id] = fn
	return func() {
		f.mu.Lock()
		delete(f.watchers, id)
		f.mu.Unlock()
	}
}

func (f *fakeSet) set(names ...string) {
	f.mu.Lock()
	f.names = names
	var fns []func()
	for _, fn := range f.watchers {
		fns = append(fns, fn)
	}
	f.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func (f *fakeSet) watching() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watchers)
}

func TestToolSets(t *testing.T) {
	// echo is a registry tool (expose_tools), agentd_agent_helper_bot an
	// agent tool: a set's tool of the first name wins, of the second loses.
	h := newHarness(t, harnessOptions{cfg: config.MCPServe{ExposeTools: true}, tools: []tool.Tool{echoTool{}}})
	set := &fakeSet{names: []string{"a2a_remote", "echo", "agentd_agent_helper_bot"}}
	h.srv.AddToolSet(set)
	changed := make(chan struct{}, 8)
	cs := httpClient(t, h.httpServer(t).URL+"/mcp", &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	ctx := context.Background()
	list := func() []string {
		var names []string
		for tl, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tl.Name)
		}
		return names
	}
	waitFor := func(what string, cond func([]string) bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for names := list(); !cond(names); names = list() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: tools %v", what, names)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("set tools served", func(n []string) bool { return slices.Contains(n, "a2a_remote") })

	for _, tc := range []struct{ tool, want string }{
		{"a2a_remote", "set answered a2a_remote"},
		{"echo", "set answered echo"},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"text": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		if tl, ok := res.Content[0].(*mcp.TextContent); !ok || tl.Text != tc.want {
			t.Fatalf("%s: %+v", tc.tool, res.Content)
		}
		if _, ok := res.Content[1].(*mcp.ResourceLink); !ok {
			t.Fatalf("%s: the set's content was flattened: %+v", tc.tool, res.Content)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "agentd_agent_helper_bot", Arguments: map[string]any{"message": "hi"}})
	if err == nil && len(res.Content) > 0 {
		if tl, ok := res.Content[0].(*mcp.TextContent); ok && tl.Text == "set answered agentd_agent_helper_bot" {
			t.Fatal("a set's tool shadowed an agent tool")
		}
	}

	// A change of the set reaches connected clients.
	set.set("a2a_other")
	waitFor("set change followed", func(n []string) bool {
		return slices.Contains(n, "a2a_other") && !slices.Contains(n, "a2a_remote") && slices.Contains(n, "echo")
	})
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no tools/list_changed")
	}

	h.srv.Close()
	if n := set.watching(); n != 0 {
		t.Fatalf("%d watchers left after Close", n)
	}
}
