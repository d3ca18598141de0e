package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/client"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for the daemon's logger goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type daemonEnv struct {
	cfgFile string
	addr    string
	home    string
	log     *syncBuffer
}

// startDaemon runs `agentd start` in-process with a config pointing at a
// fake model, and waits until /api/health answers.
func startDaemon(t *testing.T, providerKind, providerURL, extra string) *daemonEnv {
	t.Helper()
	home := t.TempDir()
	t.Setenv("AGENTD_HOME", home)
	t.Setenv("FAKE_LLM_KEY", "sk-test-secret-123")
	ws := filepath.Join(home, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(ws, "README.md"), []byte("# Demo\nA demo project about otters.\n"), 0o600)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("otters hold hands\n"), 0o600)
	addr := freeAddr(t)
	cfg := fmt.Sprintf(`listen = %q
log_level = "debug"

[providers.fake]
kind = %q
base_url = %q
api_key_env = "FAKE_LLM_KEY"
max_retries = 2

[[agents]]
name = "assistant"
description = "test assistant"
provider = "fake"
model = "test-model"
tools = ["file_*"]
workspace = %q
%s
`, addr, providerKind, providerURL, ws, extra)
	return runDaemon(t, home, addr, cfg)
}

// runDaemon writes cfg as home's config.toml, runs `agentd start` on it
// in-process and waits until /api/health answers on addr.
func runDaemon(t *testing.T, home, addr, cfg string) *daemonEnv {
	t.Helper()
	file := filepath.Join(home, "config.toml")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int)
	go func() { done <- Main(ctx, []string{"--config", file, "start"}, strings.NewReader(""), logs, logs) }()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("start exited %d\n%s", code, logs)
			}
		case <-time.After(15 * time.Second):
			t.Error("daemon did not stop within 15s of cancel")
		}
		if strings.Contains(logs.String(), "sk-test-secret-123") {
			t.Error("provider key leaked into the daemon log")
		}
	})
	c := client.New("http://"+addr, "")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := c.Health(context.Background()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon not healthy\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &daemonEnv{cfgFile: file, addr: addr, home: home, log: logs}
}

func (d *daemonEnv) run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(context.Background(), append([]string{"--config", d.cfgFile}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// The "done when": a multi-step tool-using conversation streamed to
// the terminal, with the session and audit log queryable through the API,
// for each provider wire format.
func TestChatMultiStepToolUse(t *testing.T) {
	servers := map[string]func(testing.TB, llmtest.Handler) *llmtest.Server{
		"openai":    llmtest.NewOpenAIServer,
		"anthropic": llmtest.NewAnthropicServer,
		"gemini":    llmtest.NewGeminiServer,
	}
	for _, kind := range []string{"openai", "anthropic", "gemini"} {
		t.Run(kind, func(t *testing.T) {
			model := servers[kind](t, llmtest.Script(
				llmtest.Reply{Text: "Looking.", ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_list", `{"path":"."}`)}},
				llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_read", `{"path":"README.md"}`)}},
				llmtest.Reply{Text: "Two files; README.md describes a demo project about otters.", Chunks: 4},
			))
			d := startDaemon(t, kind, model.URL, "")
			code, out, errOut := d.run(t, "chat", "assistant", "list the files in your workspace and summarise README.md")
			if code != 0 {
				t.Fatalf("chat exited %d: %s\n%s", code, errOut, d.log)
			}
			if !strings.Contains(out, "Looking.") || !strings.Contains(out, "demo project about otters") {
				t.Fatalf("stdout %q", out)
			}
			if !strings.Contains(errOut, "⚙ file_list") || !strings.Contains(errOut, "⚙ file_read") {
				t.Fatalf("tool activity not shown: %q", errOut)
			}
			// The model really received the workspace listing and the file.
			reqs := model.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d model calls", len(reqs))
			}
			last := reqs[2].Messages[len(reqs[2].Messages)-1]
			if len(last.ToolResults) != 1 || !strings.Contains(last.ToolResults[0].Content, "A demo project about otters") {
				t.Fatalf("file_read result not sent to the model: %+v", last)
			}
			if reqs[0].APIKey != "sk-test-secret-123" {
				t.Fatalf("provider got key %q", reqs[0].APIKey)
			}

			c := client.New("http://"+d.addr, "")
			var sessions struct {
				Sessions []struct{ ID, Agent, Origin string } `json:"sessions"`
			}
			if err := c.Get(context.Background(), "/api/sessions", &sessions); err != nil || len(sessions.Sessions) != 1 {
				t.Fatalf("sessions %+v, %v", sessions, err)
			}
			var sess struct {
				Messages []llm.Message `json:"messages"`
			}
			if err := c.Get(context.Background(), "/api/sessions/"+sessions.Sessions[0].ID, &sess); err != nil || len(sess.Messages) != 6 {
				t.Fatalf("session has %d messages, %v", len(sess.Messages), err)
			}
			var audit struct {
				Records []httpapi.AuditRecord `json:"records"`
			}
			if err := c.Get(context.Background(), "/api/audit?session_id="+sessions.Sessions[0].ID, &audit); err != nil || len(audit.Records) != 2 {
				t.Fatalf("audit %+v, %v", audit, err)
			}
			if audit.Records[0].Tool != "file_read" || audit.Records[1].Tool != "file_list" || audit.Records[0].Outcome != "ok" {
				t.Fatalf("audit records %+v", audit.Records)
			}
		})
	}
}

func TestClientCommandsWithoutDaemon(t *testing.T) {
	home := t.TempDir()
	t.Setenv("AGENTD_HOME", home)
	file := filepath.Join(home, "config.toml")
	os.WriteFile(file, []byte(fmt.Sprintf("listen = %q\n", freeAddr(t))), 0o600)
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"--config", file, "agents", "list"}, strings.NewReader(""), &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "agentd is not running") || !strings.Contains(errb.String(), "agentd start") {
		t.Fatalf("code %d, stderr %q", code, errb.String())
	}
}

func TestAgentsCommands(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, nil)
	d := startDaemon(t, "openai", model.URL, "")
	manifestFile := filepath.Join(d.home, "helper.toml")
	os.WriteFile(manifestFile, []byte("name = \"helper\"\nprovider = \"fake\"\nmodel = \"m\"\ndescription = \"helps\"\n"), 0o600)
	if code, _, errOut := d.run(t, "agents", "create", manifestFile); code != 0 {
		t.Fatalf("create: %s", errOut)
	}
	code, out, _ := d.run(t, "agents", "list")
	if code != 0 || !strings.Contains(out, "helper") || !strings.Contains(out, "assistant") || !strings.Contains(out, "config") {
		t.Fatalf("list: %d %q", code, out)
	}
	if code, out, _ := d.run(t, "agents", "show", "helper"); code != 0 || !strings.Contains(out, `"description": "helps"`) {
		t.Fatalf("show: %q", out)
	}
	if code, _, errOut := d.run(t, "agents", "delete", "assistant"); code != 1 || !strings.Contains(errOut, "config file") {
		t.Fatalf("deleting a config agent: %d %q", code, errOut)
	}
	if code, _, _ := d.run(t, "agents", "delete", "helper"); code != 0 {
		t.Fatal("delete failed")
	}
	if code, _, errOut := d.run(t, "agents", "show", "helper"); code != 1 || !strings.Contains(errOut, "not found") {
		t.Fatalf("show deleted: %d %q", code, errOut)
	}
	if code, out, errOut := d.run(t, "health"); code != 0 || !strings.HasPrefix(out, "ok ") {
		t.Fatalf("health: %d %q %q", code, out, errOut)
	}
	code, out, _ = d.run(t, "version")
	if code != 0 || !strings.HasPrefix(out, "agentd ") || !strings.Contains(out, "\ncommit ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("version: %q", out)
	}
	// The flag is agentd's own (versionFlag), not cobra's: -v too, and
	// --help still wins.
	for _, flag := range []string{"--version", "-v"} {
		if code, flagOut, _ := d.run(t, flag); code != 0 || flagOut != out {
			t.Fatalf("%s: %d %q, version printed %q", flag, code, flagOut, out)
		}
	}
	if code, helpOut, _ := d.run(t, "--version", "--help"); code != 0 || !strings.HasPrefix(helpOut, "agentd runs AI agents") {
		t.Fatalf("--version --help: %d %q", code, helpOut)
	}
}

func TestStartRefusesPublicListenWithoutKey(t *testing.T) {
	home := t.TempDir()
	t.Setenv("AGENTD_HOME", home)
	var out, errb bytes.Buffer
	code := Main(context.Background(), []string{"start", "--listen", "0.0.0.0:0"}, strings.NewReader(""), &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "without an api_key") {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	// The first start wrote the commented default config.
	data, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil || !strings.Contains(string(data), "[[agents]]") {
		t.Fatalf("default config not written: %v", err)
	}
}

// TestHealthWithoutDaemon: health fails (exit 1, saying why) when no
// daemon answers, so a container's HEALTHCHECK sees it down.
func TestHealthWithoutDaemon(t *testing.T) {
	t.Setenv("AGENTD_HOME", t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var out, errOut strings.Builder
	code := Main(context.Background(), []string{"--addr", addr, "health", "--timeout", "2s"}, strings.NewReader(""), &out, &errOut)
	if code != 1 || out.Len() != 0 || !strings.Contains(errOut.String(), "agentd health:") {
		t.Fatalf("health without a daemon: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
