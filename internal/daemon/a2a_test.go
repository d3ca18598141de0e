package daemon

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/netguard"
)

const a2aTestKey = "a2a-test-key"

// a2aConfig writes a config with one A2A-exposed agent on a fake OpenAI
// server and returns its path.
func a2aConfig(t *testing.T, dir, listen, modelURL string) string {
	t.Helper()
	toml := fmt.Sprintf(`listen = %q
api_key = %q

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "alpha"
description = "Alpha, for A2A tests."
provider = "fake"
model = "test-model"
tools = ["a2a_*", "file_write"]

[agents.expose]
a2a = true

[[agents.skills]]
id = "chat"
name = "Chat"

[a2a]
enabled = true
`, listen, a2aTestKey, modelURL)
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// bearerClient is an HTTP client that sends the API key.
func bearerClient() *http.Client {
	hc := (&netguard.Policy{AllowPrivate: true}).Client(0)
	// One transport for all requests: a new one per request leaves its
	// connection idle, and a load test runs out of file descriptors.
	tr := (&netguard.Policy{AllowPrivate: true}).Transport()
	hc.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+a2aTestKey)
		return tr.RoundTrip(r)
	})
	return hc
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// a2aClientFor connects an a2a-go client, with the API key, to base's alpha.
func a2aClientFor(t *testing.T, base string) *a2aclient.Client {
	t.Helper()
	resp, err := http.Get(base + "/a2a/agents/alpha/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("public card: %s", resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	card, err := a2aedge.ParseCard(body)
	if err != nil {
		t.Fatal(err)
	}
	hc := bearerClient()
	cl, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func userMessage(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}
}

// TestA2AInDaemon checks the A2A edge as the composition root wires it:
// auth on everything but cards, the real policy's input-required, and
// the SSRF guard on push webhooks.
func TestA2AInDaemon(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == llm.RoleTool && last.ToolResults[0].Name == "a2a_discover":
			// The blocked discovery still tainted the run: file_write now
			// needs approval.
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_write", `{"path":"out.txt","content":"x"}`)}}
		case last.Role == llm.RoleTool:
			return llmtest.Reply{Text: "after approval: " + last.ToolResults[0].Content}
		case r.LastUserText() == "write something":
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("a2a_discover", `{"url":"http://127.0.0.1:1/"}`)}}
		}
		return llmtest.Reply{Text: "hello from alpha"}
	})
	home := t.TempDir()
	path := a2aConfig(t, home, "127.0.0.1:0", model.URL)
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()

	t.Run("auth", func(t *testing.T) {
		for _, tc := range []struct {
			method, path string
			want         int
		}{
			{"GET", "/.well-known/agent-card.json", http.StatusOK},
			{"GET", "/.well-known/agent.json", http.StatusOK},
			{"GET", "/a2a/agents/alpha/.well-known/agent-card.json", http.StatusOK},
			{"POST", "/a2a/agents/alpha", http.StatusUnauthorized},
			{"POST", "/a2a/tasks/send", http.StatusUnauthorized},
			{"GET", "/a2a/agents", http.StatusUnauthorized},
			{"GET", "/api/a2a/agents", http.StatusUnauthorized},
		} {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(`{}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s %s without a key: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
			}
		}
		resp, err := bearerClient().Get(srv.URL + "/api/a2a/agents")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("with the key: %v %v", resp, err)
		}
		resp.Body.Close()
	})

	cl := a2aClientFor(t, srv.URL)
	ctx := context.Background()
	t.Run("send", func(t *testing.T) {
		res, err := cl.SendMessage(ctx, userMessage("hi"))
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateCompleted || a2aedge.ResultText(task) != "hello from alpha" {
			t.Fatalf("%s %q", task.Status.State, a2aedge.ResultText(task))
		}
	})
	t.Run("input required under the real policy", func(t *testing.T) {
		res, err := cl.SendMessage(ctx, userMessage("write something"))
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state %s", task.Status.State)
		}
		res, err = cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewTextPart("no"))})
		if err != nil {
			t.Fatal(err)
		}
		done := res.(*a2a.Task)
		if done.Status.State != a2a.TaskStateCompleted || !strings.Contains(a2aedge.ResultText(done), "rejected") {
			t.Fatalf("%s %q", done.Status.State, a2aedge.ResultText(done))
		}
		if _, err := os.Stat(filepath.Join(home, "workspaces", "alpha", "out.txt")); err == nil {
			t.Fatal("the refused write happened")
		}
	})
	t.Run("push webhooks are guarded", func(t *testing.T) {
		req := userMessage("hi")
		req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: "http://127.0.0.1:9/hook"}}
		if _, err := cl.SendMessage(ctx, req); err == nil {
			t.Fatal("a loopback webhook was accepted")
		}
	})
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// startAgentd runs the agentd binary and waits until it answers.
func startAgentd(t *testing.T, bin, cfgPath, home, addr string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "--config", cfgPath, "start")
	cmd.Env = append(os.Environ(), "AGENTD_HOME="+home)
	logf, err := os.Create(filepath.Join(home, fmt.Sprintf("agentd-%d.log", time.Now().UnixNano())))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/api/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("agentd did not start: %v\n%s", err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestA2AKill9 starts the real binary, puts tasks in flight on a slow
// model, kills the process with SIGKILL, restarts it, and checks that
// every task is still there with a truthful state: finished ones as they
// finished, in-flight ones failed with the restart reason.
func TestA2AKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the agentd binary")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "agentd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/agentd")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Each slow run's model call says when it starts streaming.
	streaming := make(chan struct{}, 3)
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		if strings.HasPrefix(r.LastUserText(), "slow") {
			select {
			case streaming <- struct{}{}:
			default: // a retry: the test counts first calls only
			}
			// A minute of streaming: still running when the process dies.
			return llmtest.Reply{Text: strings.Repeat("s", 1200), Chunks: 1200, Delay: 50 * time.Millisecond}
		}
		return llmtest.Reply{Text: "quick answer"}
	})
	home := t.TempDir()
	addr := freeAddr(t)
	cfgPath := a2aConfig(t, home, addr, model.URL)
	base := "http://" + addr
	first := startAgentd(t, bin, cfgPath, home, addr)

	cl := a2aClientFor(t, base)
	ctx := context.Background()
	res, err := cl.SendMessage(ctx, userMessage("quick"))
	if err != nil {
		t.Fatal(err)
	}
	quick := res.(*a2a.Task)
	var slow []a2a.TaskID
	for i := range 3 {
		req := userMessage(fmt.Sprintf("slow %d", i))
		req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
		res, err := cl.SendMessage(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateWorking {
			t.Fatalf("slow task %d: %s", i, task.Status.State)
		}
		slow = append(slow, task.ID)
	}
	// Kill the process once every slow run is in its model call.
	for i := range slow {
		select {
		case <-streaming:
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of %d slow runs reached the model", i, len(slow))
		}
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()

	second := startAgentd(t, bin, cfgPath, home, addr)
	cl = a2aClientFor(t, base)
	got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: quick.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateCompleted || a2aedge.ResultText(got) != "quick answer" {
		t.Fatalf("finished task after restart: %s %q", got.Status.State, a2aedge.ResultText(got))
	}
	for _, id := range slow {
		got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatalf("task %s lost: %v", id, err)
		}
		if got.Status.State != a2a.TaskStateFailed {
			t.Errorf("task %s: %s, want failed", id, got.Status.State)
		}
		if got.Status.Message == nil || !strings.Contains(got.Status.Message.Parts[0].Text(), "agentd stopped while this task was working") {
			t.Errorf("task %s: reason %+v", id, got.Status.Message)
		}
		if len(got.History) == 0 || !strings.HasPrefix(got.History[0].Parts[0].Text(), "slow") {
			t.Errorf("task %s: history %+v", id, got.History)
		}
	}
	list, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil || list.TotalSize != 4 {
		t.Fatalf("list after restart: %+v %v", list, err)
	}
	// A new task works after the restart.
	res, err = cl.SendMessage(ctx, userMessage("quick again"))
	if err != nil || res.(*a2a.Task).Status.State != a2a.TaskStateCompleted {
		t.Fatalf("send after restart: %v %v", res, err)
	}
	_ = second.Process.Signal(syscall.SIGTERM)
}
