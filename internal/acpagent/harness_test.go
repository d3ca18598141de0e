package acpagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/builtin"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/store/sqlite"
	"github.com/agentd/agentd/internal/tool"
)

// call is a model reply's single tool call.
func call(name, args string) []llm.ToolCall {
	return []llm.ToolCall{llmtest.ToolCall(name, args)}
}

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

const testAgent = "coder"

// world is a kernel over a real SQLite store and a scripted model, with
// the registry a daemon would have, and a project directory for the
// editor.
type world struct {
	t        *testing.T
	kernel   *agent.Kernel
	db       *sqlite.DB
	model    *llmtest.Provider
	registry *tool.Registry
	mcp      *fakeMCP
	cwd      string
}

type providerMap map[string]llm.Provider

func (p providerMap) Provider(name string) (llm.Provider, error) {
	if pr, ok := p[name]; ok {
		return pr, nil
	}
	return nil, fmt.Errorf("provider %q is not configured", name)
}

func newWorld(t *testing.T, h llmtest.Handler, extra ...tool.Tool) *world {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agentd.db"), nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	cwd, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg := tool.NewRegistry()
	reg.Add(builtin.FileTools()...)
	reg.Add(builtin.ShellExec(builtin.ShellOptions{}))
	reg.Add(extra...)
	model := llmtest.NewProvider(t, h)
	k := agent.New(agent.Options{
		Agents: agent.NewAgents([]manifest.Manifest{{
			Name: testAgent, Provider: "fake", Model: "fake-1", Tools: []string{"*"},
			SystemPrompt: "You are a coding agent.",
		}, {Name: "other", Provider: "fake", Model: "fake-1"}}, db),
		Providers: providerMap{"fake": model},
		Runner:    tool.NewRunner(reg, tool.RunnerOptions{Audit: db}),
		Sessions:  db,
		Workspace: func(manifest.Manifest) string { return filepath.Join(t.TempDir(), "ws") },
		Untrusted: map[string]policy.Action{toolFileWrite: policy.Ask, toolShellExec: policy.Ask},
	})
	return &world{t: t, kernel: k, db: db, model: model, registry: reg, mcp: &fakeMCP{}, cwd: cwd}
}

// conn is one editor connected to an agent served over pipes.
type conn struct {
	t      *testing.T
	client *acp.ClientSideConnection
	ed     *fakeEditor
	tr     *transcript
	served chan error
	stop   func()
}

// connect serves the world's agent to a new fake editor.
func (w *world) connect(t *testing.T, tweak func(*Options)) *conn {
	t.Helper()
	toAgentR, toAgentW := io.Pipe()
	toEditorR, toEditorW := io.Pipe()
	tr := &transcript{}
	opts := Options{
		Kernel: w.kernel, Sessions: w.db, Agent: testAgent, Name: "agentd", Version: "test",
		Tools: w.registry, ConnectMCP: w.mcp.connect, Workspace: "/workspaces/coder",
	}
	if tweak != nil {
		tweak(&opts)
	}
	c := &conn{t: t, ed: newFakeEditor(w.cwd), tr: tr, served: make(chan error, 1)}
	go func() {
		c.served <- Serve(context.Background(), toAgentR, &tap{w: toEditorW, tr: tr, who: "agent"}, opts)
	}()
	c.client = acp.NewClientSideConnection(c.ed, &tap{w: toAgentW, tr: tr, who: "editor"}, toEditorR)
	c.client.SetLogger(slog.New(slog.DiscardHandler))
	var once sync.Once
	c.stop = func() {
		once.Do(func() {
			toAgentW.Close()
			select {
			case err := <-c.served:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Serve did not return after the editor disconnected")
			}
			toEditorW.Close()
		})
	}
	t.Cleanup(c.stop)
	return c
}

func (c *conn) initialize(ctx context.Context) acp.InitializeResponse {
	c.t.Helper()
	resp, err := c.client.Initialize(ctx, acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{
			Fs:       acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
			Terminal: true,
		},
		ClientInfo: &acp.Implementation{Name: "fake-editor", Version: "1"},
	})
	if err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	return resp
}

func (c *conn) newSession(ctx context.Context, cwd string, servers ...acp.McpServer) acp.SessionId {
	c.t.Helper()
	if servers == nil {
		servers = []acp.McpServer{}
	}
	resp, err := c.client.NewSession(ctx, acp.NewSessionRequest{Cwd: cwd, McpServers: servers})
	if err != nil {
		c.t.Fatalf("session/new: %v", err)
	}
	return resp.SessionId
}

func (c *conn) prompt(ctx context.Context, id acp.SessionId, text string) acp.PromptResponse {
	c.t.Helper()
	resp, err := c.client.Prompt(ctx, acp.PromptRequest{SessionId: id, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
	if err != nil {
		c.t.Fatalf("session/prompt: %v", err)
	}
	return resp
}

// fakeEditor is the client side: an in-memory file system, a terminal
// that echoes, and scripted permission answers.
type fakeEditor struct {
	cwd string

	mu      sync.Mutex
	files   map[string]string
	updates []acp.SessionNotification
	notify  chan acp.SessionNotification
	// answer decides a permission request; nil blocks until the request
	// is withdrawn.
	answer   func(acp.RequestPermissionRequest) string
	asked    chan acp.RequestPermissionRequest
	commands []string
}

var _ acp.Client = (*fakeEditor)(nil)

func newFakeEditor(cwd string) *fakeEditor {
	return &fakeEditor{
		cwd: cwd, files: map[string]string{},
		notify: make(chan acp.SessionNotification, 1024),
		asked:  make(chan acp.RequestPermissionRequest, 16),
	}
}

func (e *fakeEditor) setAnswer(f func(acp.RequestPermissionRequest) string) {
	e.mu.Lock()
	e.answer = f
	e.mu.Unlock()
}

func (e *fakeEditor) file(p string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.files[p]
	return v, ok
}

func (e *fakeEditor) setFile(p, content string) {
	e.mu.Lock()
	e.files[p] = content
	e.mu.Unlock()
}

func (e *fakeEditor) SessionUpdate(ctx context.Context, n acp.SessionNotification) error {
	e.mu.Lock()
	e.updates = append(e.updates, n)
	e.mu.Unlock()
	e.notify <- n
	return nil
}

func (e *fakeEditor) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	e.mu.Lock()
	answer := e.answer
	e.mu.Unlock()
	e.asked <- p
	if answer == nil {
		<-ctx.Done()
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
	}
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
		Selected: &acp.RequestPermissionOutcomeSelected{OptionId: acp.PermissionOptionId(answer(p))},
	}}, nil
}

func (e *fakeEditor) ReadTextFile(ctx context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	v, ok := e.file(p.Path)
	if !ok {
		return acp.ReadTextFileResponse{}, &acp.RequestError{Code: resourceNotFound, Message: "Resource not found", Data: map[string]any{"details": "no such file"}}
	}
	return acp.ReadTextFileResponse{Content: v}, nil
}

func (e *fakeEditor) WriteTextFile(ctx context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	e.setFile(p.Path, p.Content)
	return acp.WriteTextFileResponse{}, nil
}

func (e *fakeEditor) CreateTerminal(ctx context.Context, p acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	e.mu.Lock()
	e.commands = append(e.commands, strings.Join(append([]string{p.Command}, p.Args...), " "))
	e.mu.Unlock()
	return acp.CreateTerminalResponse{TerminalId: "term-1"}, nil
}

func (e *fakeEditor) TerminalOutput(ctx context.Context, p acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{Output: "hello from the editor's terminal\n", ExitStatus: &acp.TerminalExitStatus{ExitCode: acp.Ptr(0)}}, nil
}

func (e *fakeEditor) WaitForTerminalExit(ctx context.Context, p acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{ExitCode: acp.Ptr(0)}, nil
}

func (e *fakeEditor) KillTerminal(ctx context.Context, p acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, nil
}

func (e *fakeEditor) ReleaseTerminal(ctx context.Context, p acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, nil
}

// waitUpdate waits for a session/update matching ok.
func (e *fakeEditor) waitUpdate(t *testing.T, ok func(acp.SessionUpdate) bool) acp.SessionNotification {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case n := <-e.notify:
			if ok(n.Update) {
				return n
			}
		case <-timeout:
			t.Fatalf("no matching session/update within 10s")
			return acp.SessionNotification{}
		}
	}
}

// fakeMCP stands in for the MCP client: every session gets one server
// whose one tool is an upstream (untrusted) lookup.
type fakeMCP struct {
	mu     sync.Mutex
	got    [][]EditorServer
	closed int
	err    error
}

func (f *fakeMCP) connect(ctx context.Context, servers []EditorServer) (MCPSet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, servers)
	return &fakeSet{f: f}, f.err
}

type fakeSet struct{ f *fakeMCP }

func (s *fakeSet) Tools() []tool.Tool { return []tool.Tool{docsLookup{}} }

func (s *fakeSet) Close() error {
	s.f.mu.Lock()
	s.f.closed++
	s.f.mu.Unlock()
	return nil
}

type docsLookup struct{}

func (docsLookup) Spec() tool.Spec {
	return tool.Spec{
		Name: "mcp_docs_lookup", Description: "Look something up in the docs.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
		Origin:      tool.OriginMCP, Server: "docs",
	}
}

func (docsLookup) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	return tool.Result{Content: "The docs say: notes live in notes.txt."}, nil
}

// transcript records every JSON-RPC message in the order sent.
type transcript struct {
	mu    sync.Mutex
	lines []string
}

// tap records what passes through w. The SDKs write one message per
// Write; recording before writing keeps cause before effect.
type tap struct {
	w   io.Writer
	tr  *transcript
	who string
}

func (t *tap) Write(p []byte) (int, error) {
	t.tr.mu.Lock()
	for _, line := range bytes.Split(bytes.TrimSpace(p), []byte("\n")) {
		if len(line) > 0 {
			t.tr.lines = append(t.tr.lines, t.who+"> "+string(line))
		}
	}
	t.tr.mu.Unlock()
	return t.w.Write(p)
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// normalized renders the transcript with what changes between runs
// replaced: session ids by their order of appearance, the project
// directory by $CWD, times by <time>. Keys are sorted.
func (tr *transcript) normalized(t *testing.T, cwd string) string {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	ids := map[string]string{}
	var walk func(key string, v any) any
	walk = func(key string, v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, vv := range x {
				x[k] = walk(k, vv)
			}
			return x
		case []any:
			for i, vv := range x {
				x[i] = walk("", vv)
			}
			return x
		case string:
			if key == "updatedAt" {
				return "<time>"
			}
			if uuidRE.MatchString(x) {
				if _, ok := ids[x]; !ok {
					ids[x] = fmt.Sprintf("<session-%d>", len(ids)+1)
				}
				return ids[x]
			}
			return strings.ReplaceAll(x, cwd, "$CWD")
		}
		return v
	}
	var b strings.Builder
	for _, line := range tr.lines {
		who, raw, _ := strings.Cut(line, "> ")
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("transcript line is not JSON: %v: %s", err, raw)
		}
		out, err := json.Marshal(walk("", v))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s> %s\n", who, out)
	}
	return b.String()
}

// checkGolden compares got with testdata/name.jsonl (or rewrites it with
// -update).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".jsonl")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if string(want) != got {
		wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
		for i := 0; i < max(len(wl), len(gl)); i++ {
			var w, g string
			if i < len(wl) {
				w = wl[i]
			}
			if i < len(gl) {
				g = gl[i]
			}
			if w != g {
				t.Fatalf("transcript differs from %s at line %d (run with -update if the change is intended)\nwant: %s\ngot:  %s\n\nfull transcript:\n%s", path, i+1, w, g, got)
			}
		}
	}
}

// requestError extracts the JSON-RPC error of a failed call.
func requestError(t *testing.T, err error) *acp.RequestError {
	t.Helper()
	var re *acp.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	return re
}
