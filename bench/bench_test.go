package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/openai"
	"github.com/agentd/agentd/internal/proctree"
)

// These tests run the bench's pieces with tiny counts; the benchmark
// itself is `make bench`.

func TestPercentileAndMedian(t *testing.T) {
	ms := func(xs ...int) []time.Duration {
		out := make([]time.Duration, len(xs))
		for i, x := range xs {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	tests := []struct {
		name     string
		in       []time.Duration
		p50, p99 time.Duration
		median   time.Duration
	}{
		{"empty", nil, 0, 0, 0},
		{"one", ms(7), 7 * time.Millisecond, 7 * time.Millisecond, 7 * time.Millisecond},
		{"unsorted odd", ms(5, 1, 3), 3 * time.Millisecond, 5 * time.Millisecond, 3 * time.Millisecond},
		{"even", ms(4, 1, 3, 2), 2 * time.Millisecond, 4 * time.Millisecond, 2500 * time.Microsecond},
		{"hundred", ms(func() []int {
			xs := make([]int, 100)
			for i := range xs {
				xs[i] = 100 - i
			}
			return xs
		}()...), 50 * time.Millisecond, 99 * time.Millisecond, 50500 * time.Microsecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := median(tt.in); got != tt.median {
				t.Errorf("median = %v, want %v", got, tt.median)
			}
			if got := percentile(append([]time.Duration(nil), tt.in...), 50); got != tt.p50 {
				t.Errorf("p50 = %v, want %v", got, tt.p50)
			}
			if got := percentile(append([]time.Duration(nil), tt.in...), 99); got != tt.p99 {
				t.Errorf("p99 = %v, want %v", got, tt.p99)
			}
		})
	}
}

func TestLoadBounds(t *testing.T) {
	tests := []struct {
		name      string
		spec      LoadSpec
		failEvery int64
		wantCalls func(int) bool
		maxTime   time.Duration
	}{
		{"stops at MaxCalls", LoadSpec{Concurrency: 4, Duration: 10 * time.Second, MaxCalls: 50}, 0,
			func(n int) bool { return n == 50 }, 5 * time.Second},
		{"stops at Duration", LoadSpec{Concurrency: 2, Duration: 50 * time.Millisecond}, 0,
			func(n int) bool { return n > 0 }, 2 * time.Second},
		{"counts errors apart", LoadSpec{Concurrency: 1, Duration: 10 * time.Second, MaxCalls: 30}, 3,
			func(n int) bool { return n == 20 }, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int64
			t0 := time.Now()
			st := Load(t.Context(), tt.spec, func(ctx context.Context) error {
				time.Sleep(100 * time.Microsecond)
				if tt.failEvery > 0 && n.Add(1)%tt.failEvery == 0 {
					return errors.New("boom")
				}
				return nil
			})
			if el := time.Since(t0); el > tt.maxTime {
				t.Errorf("took %v", el)
			}
			if !tt.wantCalls(st.Calls) {
				t.Errorf("calls = %d", st.Calls)
			}
			if tt.failEvery > 0 && (st.Errors != 10 || st.FirstErr == nil) {
				t.Errorf("errors = %d (%v), want 10", st.Errors, st.FirstErr)
			}
			if st.P50 < 100*time.Microsecond || st.P99 < st.P50 || st.Rate <= 0 {
				t.Errorf("p50 %v p99 %v rate %v", st.P50, st.P99, st.Rate)
			}
		})
	}
}

func TestInterleaveRotatesOrder(t *testing.T) {
	cells := []*Cell{{Path: "A"}, {Path: "B"}, {Path: "C"}}
	var order []string
	Interleave(t.Context(), 3, cells, func(_ context.Context, c *Cell) Stats {
		order = append(order, c.Path)
		return Stats{Calls: 1, Rate: float64(len(order)), P50: time.Duration(len(order))}
	})
	if got, want := strings.Join(order, ""), "ABCBCACAB"; got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
	// A measured rounds 1, 6 and 8: the median rate is 6.
	if s := cells[0].Summary(); s.Rate != 6 || s.Calls != 3 {
		t.Fatalf("summary of A = %+v", s)
	}
}

// TestFakeLLMWithAgentdProvider drives the fake model with agentd's own
// OpenAI provider, the client it serves in the benchmark.
func TestFakeLLMWithAgentdProvider(t *testing.T) {
	srv := httptest.NewServer(fakeLLM{})
	defer srv.Close()
	p, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	tools := []llm.ToolDef{{Name: toolForLoop, Description: "list", InputSchema: json.RawMessage(`{"type":"object"}`)}}
	user := llm.TextMessage(llm.RoleUser, "go")
	tests := []struct {
		name     string
		req      *llm.Request
		wantText string
		wantTool string
	}{
		{"instant answers text", &llm.Request{Model: modelInstant, Messages: []llm.Message{user}}, "ok", ""},
		{"tool model calls the tool", &llm.Request{Model: modelTool, Messages: []llm.Message{user}, Tools: tools}, "", toolForLoop},
		{"tool model answers after the result", &llm.Request{Model: modelTool, Tools: tools, Messages: []llm.Message{user,
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_bench", Name: toolForLoop, Arguments: json.RawMessage(`{}`)}}},
			{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "call_bench", Name: toolForLoop, Content: "a.txt"}}},
		}}, "done", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := p.Generate(t.Context(), tt.req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Message.Text(); got != tt.wantText {
				t.Errorf("text %q, want %q", got, tt.wantText)
			}
			var got string
			if len(res.Message.ToolCalls) == 1 {
				got = res.Message.ToolCalls[0].Name
			}
			if got != tt.wantTool {
				t.Errorf("tool call %q, want %q", got, tt.wantTool)
			}
		})
	}
	t.Run("hold blocks until the caller leaves", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := p.Generate(ctx, &llm.Request{Model: modelHold, Messages: []llm.Message{user}}, nil)
		if err == nil || ctx.Err() == nil {
			t.Fatalf("hold returned %v before the deadline", err)
		}
	})
}

func TestMinimalMCPServer(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, benchFile), []byte(benchFileText), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newMinimalMCP(dir))
	defer srv.Close()
	cs, err := mcpClient().Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tests := []struct {
		name    string
		path    string
		wantErr bool
		want    string
	}{
		{"reads the file", benchFile, false, "second line"},
		{"refuses to leave the workspace", "../etc/passwd", true, "outside"},
		{"reports a missing file", "nope.txt", true, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "file_read", Arguments: map[string]any{"path": tt.path}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.wantErr || !strings.Contains(toolText(res), tt.want) {
				t.Fatalf("isError %v, text %q", res.IsError, toolText(res))
			}
		})
	}
	// The load function the scenario uses.
	if st := Load(t.Context(), LoadSpec{Concurrency: 4, Duration: time.Second, MaxCalls: 40}, callOnce(cs, "file_read", map[string]any{"path": benchFile})); st.Calls != 40 || st.Errors != 0 {
		t.Fatalf("load: %+v", st)
	}
}

// TestAgentdConfigLoads checks the config the bench writes against
// agentd's strict loader: an unknown key or a bad value would fail there.
func TestAgentdConfigLoads(t *testing.T) {
	e := &Env{Node: "/opt/node/bin/node", Everything: "/opt/everything/index.js"}
	cfg := AgentdConfig{LLM: "http://127.0.0.1:1/v1", Workspace: t.TempDir(), Servers: []string{"everything", "e2"}, Gateways: []string{"everything"}, ExposeTools: true}
	home := t.TempDir()
	file := filepath.Join(home, "config.toml")
	if err := os.WriteFile(file, []byte(cfg.render(e, "127.0.0.1:4999")), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.LoadOptions{Path: file, Home: home, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatalf("agentd rejects the bench config: %v\n%s", err, cfg.render(e, "127.0.0.1:4999"))
	}
	if len(c.Agents) != 4 || len(c.MCPServers) != 2 || !c.MCP.ExposeTools || !c.A2A.Enabled || c.Limits.RatePerSec < 1e6 {
		t.Fatalf("config read back wrong: %d agents, %d servers, expose %v, a2a %v, rate %v",
			len(c.Agents), len(c.MCPServers), c.MCP.ExposeTools, c.A2A.Enabled, c.Limits.RatePerSec)
	}
	if c.MCPServers[0].Transport.Command != e.Node {
		t.Fatalf("command %q", c.MCPServers[0].Transport.Command)
	}

	// The PostgreSQL and tracing variants of scenarios 6 and 7.
	cfg = AgentdConfig{LLM: "http://127.0.0.1:1/v1", PostgresURL: "postgres://x@127.0.0.1:1/db", TracesURL: "http://127.0.0.1:2/v1/traces"}
	if err := os.WriteFile(file, []byte(cfg.render(e, "127.0.0.1:4999")), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) {
		if k == pgURLEnv {
			return cfg.PostgresURL, true
		}
		return "", false
	}
	c, err = config.Load(config.LoadOptions{Path: file, Home: home, LookupEnv: env})
	if err != nil {
		t.Fatalf("agentd rejects the bench config: %v\n%s", err, cfg.render(e, "127.0.0.1:4999"))
	}
	ts, err := c.TelemetrySettings()
	if err != nil || c.Store.Backend != "postgres" || c.Store.URLEnv != pgURLEnv || ts.TracesURL != cfg.TracesURL || ts.SampleRatio != 1 || !c.Metrics.Public {
		t.Fatalf("config read back wrong: store %+v, telemetry %+v (%v), metrics %+v", c.Store, ts, err, c.Metrics)
	}
}

func TestProcsStopKillsTheTree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process trees are tracked through /proc")
	}
	ps := NewProcs()
	defer ps.Close()
	// The grandchild leaves the group (setsid), as MCP servers started by
	// agentd do, and ignores SIGTERM, so only the tree walk and SIGKILL
	// can stop it.
	out := newLineWaiter("pid ")
	p, err := ps.Start(t.Context(), "tree", Spec{Path: "/bin/sh", Args: []string{"-c",
		`setsid sh -c 'trap "" TERM; echo pid $$; while :; do sleep 1; done' & wait`}, Stdout: out})
	if err != nil {
		t.Fatal(err)
	}
	s, err := out.wait(t.Context(), p, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, _ := strconv.Atoi(s)
	if !proctree.Alive(grandchild) {
		t.Fatalf("grandchild %d not running", grandchild)
	}
	if err := p.Stop(200 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if proctree.Alive(p.Pid()) || proctree.Alive(grandchild) {
		t.Fatalf("still alive after Stop: sh %v, grandchild %v", proctree.Alive(p.Pid()), proctree.Alive(grandchild))
	}
}

func TestProcsCloseKillsOrphans(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("orphans are found through /proc")
	}
	ps := NewProcs()
	// The shell exits at once, orphaning a process in a new session; as
	// subreaper the bench inherits it, and Close must kill it.
	cmd := exec.Command("/bin/sh", "-c", `setsid sleep 60 >/dev/null 2>&1 & echo $!`)
	ownGroup(cmd)
	outp, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan, _ := strconv.Atoi(strings.TrimSpace(string(outp)))
	deadline := time.Now().Add(2 * time.Second)
	for {
		if st, err := proctree.Stat(orphan); err == nil && st.PPid == os.Getpid() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d was not re-parented to the bench", orphan)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := ps.Close(); err != nil {
		t.Fatal(err)
	}
	if proctree.Alive(orphan) {
		t.Fatalf("orphan %d survived Close", orphan)
	}
}

func TestReportOutputs(t *testing.T) {
	rep := &Report{
		Machine:  Machine{CPU: "Test CPU <x>", Cores: 2, Date: "2026-01-01T00:00:00Z", Peers: map[string]string{"go-sdk": "v1.8.0"}},
		Settings: quickSettings(),
		Scenarios: []*Scenario{
			{ID: "1", Title: "gateway", Available: true,
				Rows: []Row{
					{Path: pathGateway, Concurrency: 1, P50us: 400, P99us: 900, Rate: 2400},
					{Path: pathSupergw, Concurrency: 1, P50us: 1900, P99us: 3000, Rate: 430},
					{Path: pathExpose, NA: "agentd does not serve /mcp yet"},
				},
				Targets: []Target{{Name: "MCP gateway throughput", Goal: "≥ 3×", Measured: "5.6×", Met: verdict(true), Why: "because."}}},
			{ID: "4", Title: "footprint", Available: true, Rows: []Row{{Path: "binary size", Value: 21.5, Unit: "MiB"}},
				Targets: []Target{unmeasured("A2A stream memory", "< 30 KB", "not served")}},
			{ID: "3", Title: "a2a", Reason: "not available: agentd does not serve /a2a"},
		},
	}
	dir := t.TempDir()
	if err := rep.Write(dir); err != nil {
		t.Fatal(err)
	}
	var back Report
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &back); err != nil || len(back.Scenarios) != 3 || back.Scenarios[0].Targets[0].Met == nil {
		t.Fatalf("results.json: %v, %+v", err, back)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "chart.svg"))
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(strings.NewReader(string(svg)))
	bars := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("chart.svg is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			for _, a := range se.Attr {
				if a.Name.Local == "class" && a.Value == "bar" {
					bars++
				}
			}
		}
	}
	if bars != 2 {
		t.Errorf("chart has %d bars, want 2 (the row without numbers has none)", bars)
	}
	md, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Test CPU <x>", "**MCP gateway throughput** (≥ 3×): met.", "A2A stream memory** (< 30 KB): not measured.",
		"Not available: agentd does not serve /a2a.", "| 2,400 |", "not available: agentd does not serve /mcp yet"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	// -render rebuilds the same outputs from results.json alone.
	dir2 := t.TempDir()
	if err := rerender(filepath.Join(dir, "results.json"), dir2, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"README.md", "chart.svg", "results.json"} {
		a, _ := os.ReadFile(filepath.Join(dir, f))
		b, _ := os.ReadFile(filepath.Join(dir2, f))
		if string(a) != string(b) {
			t.Errorf("-render wrote a different %s", f)
		}
	}
	var text strings.Builder
	for _, s := range rep.Scenarios {
		printScenario(&text, s)
	}
	if !strings.Contains(text.String(), "not available: agentd does not serve /a2a") || !strings.Contains(text.String(), "2,400") {
		t.Errorf("table:\n%s", text.String())
	}
}

// interopEnv returns an Env for tests that need the Node peers: they skip
// when interop/node_modules is missing, unless AGENTD_INTEROP=1 makes
// that a failure.
func interopEnv(t *testing.T) *Env {
	t.Helper()
	e, err := NewEnv(t.Context(), quickSettings(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.NeedNode(); err != nil {
		if v, _ := os.LookupEnv("AGENTD_INTEROP"); v == "1" {
			t.Fatalf("AGENTD_INTEROP=1 but %v", err)
		}
		t.Skipf("Node peers not installed (%v); run `make interop-deps` or set AGENTD_INTEROP=1 to require them", err)
	}
	return e
}

func TestLoopbackPreload(t *testing.T) {
	e := interopEnv(t)
	pre, err := e.peerScript("loopback.cjs", loopbackJS)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), e.Node, "--require", pre, "-e",
		`const s = require('node:http').createServer(); s.listen(0, () => { console.log(s.address().address); s.close(); });`).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "127.0.0.1" {
		t.Fatalf("a listen without host bound %q, want 127.0.0.1", got)
	}
}

func TestA2APeer(t *testing.T) {
	e := interopEnv(t)
	p, url, err := e.StartA2APeer(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.A2AClient(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	if err := a2aSend(c)(t.Context()); err != nil {
		t.Fatalf("send: %v", err)
	}
	first, err := a2aFirstEvent(c)(t.Context())
	if err != nil || first <= 0 {
		t.Fatalf("stream: %v, first event after %v", err, first)
	}
	var events []string
	for ev, err := range c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))}) {
		if err != nil {
			t.Fatal(err)
		}
		switch v := ev.(type) {
		case *a2a.Task:
			events = append(events, "task:"+string(v.Status.State))
		case *a2a.TaskArtifactUpdateEvent:
			events = append(events, "artifact")
		case *a2a.TaskStatusUpdateEvent:
			events = append(events, "status:"+string(v.Status.State))
		}
	}
	if got, want := strings.Join(events, " "), "task:"+string(a2a.TaskStateWorking)+" artifact status:"+string(a2a.TaskStateCompleted); got != want {
		t.Errorf("events %q, want %q (the events agentd sends for an instant agent)", got, want)
	}
	if err := p.Stop(time.Second); err != nil || proctree.Alive(p.Pid()) {
		t.Fatalf("stop: %v", err)
	}
}

// recordingLLM serves the fake model and keeps the body of every request.
type recordingLLM struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recordingLLM) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.bodies = append(r.bodies, b)
	r.mu.Unlock()
	req.Body = io.NopCloser(bytes.NewReader(b))
	fakeLLM{}.ServeHTTP(w, req)
}

func (r *recordingLLM) take() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.bodies
	r.bodies = nil
	return out
}

// TestA2ALLMPeer checks the peer the A2A send target compares agentd
// with: it sends the fake model the request agentd's provider sends,
// publishes agentd's events, and leaves each turn in its SQLite file.
func TestA2ALLMPeer(t *testing.T) {
	e := interopEnv(t)
	rec := &recordingLLM{}
	srv := httptest.NewServer(rec)
	defer srv.Close()

	// What agentd's OpenAI provider sends for the instant agent.
	prov, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prov.Generate(t.Context(), &llm.Request{Model: modelInstant, Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "hi")}}, nil); err != nil {
		t.Fatal(err)
	}
	agentdBodies := rec.take()

	p, url, err := e.StartA2ALLMPeer(t.Context(), srv.URL+"/v1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.A2AClient(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Destroy()
	r, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	task, ok := r.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Status.Message == nil {
		t.Fatalf("send returned %#v, want a completed task with one artifact and a reply", r)
	}
	if got := task.Artifacts[0].Parts[0].Text(); got != "ok" {
		t.Errorf("artifact text %q, want the model's %q", got, "ok")
	}
	peerBodies := rec.take()
	if len(agentdBodies) != 1 || len(peerBodies) != 1 {
		t.Fatalf("model calls: agentd %d, peer %d, want 1 each", len(agentdBodies), len(peerBodies))
	}
	var want, got map[string]any
	if err := json.Unmarshal(agentdBodies[0], &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(peerBodies[0], &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the peer asked the model\n%s\nagentd asks\n%s", peerBodies[0], agentdBodies[0])
	}

	var events []string
	for ev, err := range c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))}) {
		if err != nil {
			t.Fatal(err)
		}
		switch v := ev.(type) {
		case *a2a.Task:
			events = append(events, "task:"+string(v.Status.State))
		case *a2a.TaskArtifactUpdateEvent:
			events = append(events, "artifact")
		case *a2a.TaskStatusUpdateEvent:
			events = append(events, "status:"+string(v.Status.State))
		}
	}
	if got, want := strings.Join(events, " "), "task:"+string(a2a.TaskStateWorking)+" artifact status:"+string(a2a.TaskStateCompleted); got != want {
		t.Errorf("events %q, want %q (the events agentd sends for an instant agent)", got, want)
	}
	// A later turn in the same conversation sends the model the history.
	next := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("again"))
	next.ContextID = task.ContextID
	if _, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: next}); err != nil {
		t.Fatalf("second turn: %v", err)
	}
	bodies := rec.take()
	if n := len(bodies); n != 2 || !strings.Contains(string(bodies[1]), `{"role":"assistant","content":"ok"},{"role":"user","content":"again"}`) {
		t.Errorf("the second turn's model call did not replay the conversation: %s", bodies[len(bodies)-1])
	}
	if err := p.Stop(3 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}

	// Every turn is in the file: the conversations, their messages, the
	// finished tasks, in WAL mode.
	files, err := filepath.Glob(filepath.Join(e.Tmp, "a2a-llm-peer-*", "peer.db"))
	if err != nil || len(files) != 1 {
		t.Fatalf("peer database: %v %v", files, err)
	}
	db, err := sql.Open("sqlite", "file:"+files[0]+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []struct{ query, want string }{
		{"PRAGMA journal_mode", "wal"},
		{"SELECT count(*) FROM sessions", "2"},
		{"SELECT last_seq FROM sessions WHERE id = '" + task.ContextID + "'", "4"},
		{"SELECT group_concat(role || ':' || json_extract(content, '$.content'), ' ') FROM (SELECT * FROM messages WHERE session_id = '" + task.ContextID + "' ORDER BY seq)",
			"user:hi assistant:ok user:again assistant:ok"},
		{"SELECT count(*) FROM messages", "6"},
		{"SELECT group_concat(DISTINCT state) || ' ' || count(*) || ' ' || sum(terminal) FROM tasks", "TASK_STATE_COMPLETED 3 3"},
	} {
		var got string
		if err := db.QueryRowContext(t.Context(), q.query).Scan(&got); err != nil {
			t.Fatalf("%s: %v", q.query, err)
		}
		if got != q.want {
			t.Errorf("%s = %q, want %q", q.query, got, q.want)
		}
	}
}

// TestA2ALLMPeerNeedsNode22 checks that the peer says why it cannot run
// on a Node without node:sqlite, rather than failing on the import.
func TestA2ALLMPeerNeedsNode22(t *testing.T) {
	e := interopEnv(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	out, err := exec.CommandContext(t.Context(), node, "-p", "process.versions.node").Output()
	if err != nil {
		t.Fatal(err)
	}
	v := strings.Split(strings.TrimSpace(string(out)), ".")
	major, _ := strconv.Atoi(v[0])
	minor, _ := strconv.Atoi(v[1])
	if major > 22 || major == 22 && minor >= 5 {
		t.Skipf("node on PATH is %s, which has node:sqlite", out)
	}
	script, err := e.peerScript("a2a_llm_peer.mjs", a2aLLMPeerJS)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := exec.CommandContext(t.Context(), node, script, "0", "http://127.0.0.1:1/v1", filepath.Join(t.TempDir(), "x.db")).CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "needs Node >= 22.5 for node:sqlite") {
		t.Fatalf("on Node %s the peer said %q (err %v), want it to name the Node it needs", strings.TrimSpace(string(out)), msg, err)
	}
}

func TestRatioAcrossRounds(t *testing.T) {
	pass := func(r float64) bool { return r >= 3 }
	tests := []struct {
		name     string
		num, den Row
		text     string
		disagree bool
	}{
		{"all rounds pass", Row{Rate: 900, RoundRates: []float64{900, 1000, 800}}, Row{Rate: 100, RoundRates: []float64{100, 100, 100}},
			"9.0× (rounds 9.0, 10.0, 8.0)", false},
		{"rounds on both sides", Row{Rate: 300, RoundRates: []float64{200, 300, 400}}, Row{Rate: 100, RoundRates: []float64{100, 100, 100}},
			"3.0× (rounds 2.0, 3.0, 4.0)", true},
		{"one round only", Row{Rate: 200, RoundRates: []float64{200}}, Row{Rate: 100, RoundRates: []float64{100}}, "2.0×", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ratioText(tt.num, tt.den, 1); got != tt.text {
				t.Errorf("ratioText = %q, want %q", got, tt.text)
			}
			if got := roundsDisagree(tt.num, tt.den, pass); got != tt.disagree {
				t.Errorf("roundsDisagree = %v", got)
			}
		})
	}
}
