package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// fastCluster is a short lease: a dead replica is noticed in seconds.
const fastCluster = "[cluster]\nheartbeat_secs = 1\nlease_secs = 3\n"

// replicaConfig is the config of one replica in these tests: the A2A
// agent alpha on the fake model, the PostgreSQL store in $TEAM_DB_URL,
// and the [cluster] table given.
func replicaConfig(listen, modelURL, cluster string) string {
	return fmt.Sprintf(`listen = %q
api_key = %q

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "alpha"
description = "Alpha, for replica tests."
provider = "fake"
model = "test-model"
tools = ["web_fetch", "file_write"]

[agents.expose]
a2a = true
mcp = true

[a2a]
enabled = true
push_allow_private = true

[tools.web_fetch]
allow_private = true

[store]
backend = "postgres"
url_env = "TEAM_DB_URL"

[limits]
rate_per_sec = 100000
burst = 100000

%s`, listen, a2aTestKey, modelURL, cluster)
}

// inprocReplica is a replica built by New in this process and served on
// loopback.
type inprocReplica struct {
	D     *Daemon
	URL   string
	close func() // stops serving and closes the daemon; safe to call twice
}

// startInproc starts an in-process replica on the database in env.
func startInproc(t *testing.T, modelURL string, env map[string]string) *inprocReplica {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(replicaConfig("127.0.0.1:0", modelURL, fastCluster)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(t.Context(), cfg, Options{ConnectMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler())
	var once sync.Once
	stop := func() {
		once.Do(func() {
			srv.CloseClientConnections()
			srv.Close()
			d.Close()
		})
	}
	t.Cleanup(stop)
	return &inprocReplica{D: d, URL: srv.URL, close: stop}
}

// buildAgentd builds the binary into a temporary directory.
func buildAgentd(t *testing.T) string {
	t.Helper()
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
	return bin
}

// startBinaryReplica runs the agentd binary as a replica on the database
// in env and waits until it answers.
func startBinaryReplica(t *testing.T, bin, modelURL, cluster string, env map[string]string) (*exec.Cmd, string) {
	t.Helper()
	return startBinaryReplicaAt(t, bin, modelURL, "", cluster, env)
}

// startBinaryReplicaAt is startBinaryReplica behind a load balancer whose
// URL clients see: the replica's public_url, which its Agent Cards and
// links name.
func startBinaryReplicaAt(t *testing.T, bin, modelURL, publicURL, cluster string, env map[string]string) (*exec.Cmd, string) {
	t.Helper()
	home := t.TempDir()
	addr := freeAddr(t)
	path := filepath.Join(home, "config.toml")
	conf := replicaConfig(addr, modelURL, cluster)
	if publicURL != "" {
		conf = fmt.Sprintf("public_url = %q\n", publicURL) + conf
	}
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", path, "start")
	cmd.Env = []string{"AGENTD_HOME=" + home, "HOME=" + home, "PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logf, err := os.Create(filepath.Join(home, "agentd.log"))
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
				return cmd, "http://" + addr
			}
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("agentd did not start: %v\n%s", err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// apiGet GETs path on base with the API key and decodes the JSON answer.
func apiGet(t *testing.T, base, path string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+path, nil)
	req.Header.Set("Authorization", "Bearer "+a2aTestKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

// hangingModel answers "slow" messages with a stream that never ends
// (until the client goes), and anything else at once.
func hangingModel(t *testing.T) *llmtest.Server {
	var once sync.Once
	started := make(chan struct{})
	t.Cleanup(func() { once.Do(func() { close(started) }) })
	return llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		if strings.HasPrefix(r.LastUserText(), "slow") {
			return llmtest.Reply{Text: strings.Repeat("s", 100000), Chunks: 100000, Delay: 50 * time.Millisecond}
		}
		return llmtest.Reply{Text: "answer to " + r.LastUserText()}
	})
}

// TestReplicaKill9FailsItsWork runs a task on the binary as replica A,
// then starts replica B on the same database: B must leave A's live task
// alone (a single daemon fails every unfinished task at start; a replica
// must not). Then A is killed with SIGKILL: B must mark A's task failed,
// naming A, within the lease and a few heartbeats, record the
// interrupted turn in the task's session, and release the session for
// the next turn.
func TestReplicaKill9FailsItsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the agentd binary")
	}
	bin := buildAgentd(t)
	model := hangingModel(t)
	env := map[string]string{"TEAM_DB_URL": pgtest.Database(t, os.LookupEnv)}
	procA, urlA := startBinaryReplica(t, bin, model.URL, fastCluster, env)
	_, health := apiGet(t, urlA, "/api/health")
	replicaA, _ := health["replica"].(string)
	if replicaA == "" {
		t.Fatalf("health of a replica names no replica: %v", health)
	}

	ctx := context.Background()
	clA := a2aClientFor(t, urlA)
	push := newHook(t)
	req := userMessage("slow task")
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{URL: push.srv.URL}}
	res, err := clA.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("slow task: %s", task.Status.State)
	}

	b := startInproc(t, model.URL, env)
	clB := a2aClientFor(t, b.URL)
	got, err := clB.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("A's task seen through B after B started: %v %v; want still working", got, err)
	}

	if err := procA.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = procA.Wait()
	killed := time.Now()
	for {
		got, err = clB.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.State.Terminal() {
			break
		}
		if time.Since(killed) > 30*time.Second {
			t.Fatalf("A's task is still %s 30 s after A was killed", got.Status.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
	took := time.Since(killed)
	t.Logf("the killed replica's task failed %v after SIGKILL (lease 3 s, heartbeat 1 s)", took.Round(time.Millisecond))
	if got.Status.State != a2a.TaskStateFailed {
		t.Fatalf("A's task ended %s, want failed", got.Status.State)
	}
	reason := got.Status.Message.Parts[0].Text()
	if !strings.Contains(reason, replicaA) || !strings.Contains(reason, "stopped") {
		t.Errorf("failure reason %q does not name replica %s", reason, replicaA)
	}
	if took > 10*time.Second {
		t.Errorf("took %v to notice, want about lease + 2 heartbeats", took)
	}
	// The task's webhook hears of the failure once, from B: A cannot.
	failed := "task:" + string(a2a.TaskStateFailed)
	waitFor(t, 10*time.Second, "the webhook hears of the failure", func() bool { return push.count(failed) > 0 })
	time.Sleep(500 * time.Millisecond) // a duplicate would come now
	if n := push.count(failed); n != 1 {
		t.Errorf("the webhook heard of the failure %d times: %v", n, push.got)
	}

	// The turn A was running is recorded as interrupted, and released.
	code, sess := apiGet(t, b.URL, "/api/sessions/"+task.ContextID)
	if code != http.StatusOK {
		t.Fatalf("session: %d %v", code, sess)
	}
	msgs, _ := sess["messages"].([]any)
	if len(msgs) < 2 || !strings.Contains(fmt.Sprint(msgs[len(msgs)-1]), "The turn failed: the agentd replica "+replicaA) {
		t.Errorf("session messages = %v, want the interruption last", msgs)
	}
	next := userMessage("continue")
	next.Message.ContextID = task.ContextID
	res, err = clB.SendMessage(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if done := res.(*a2a.Task); done.Status.State != a2a.TaskStateCompleted {
		t.Errorf("next turn in the session: %s %v", done.Status.State, done.Status.Message)
	}
}

// apiDo sends method path with a JSON body and the API key to base.
func apiDo(t *testing.T, base, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+a2aTestKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, out
}

// mcpClientTo connects an MCP client to base's /mcp, with the SDK's
// default protocol (2026-07-28: no session, list_changed on a
// subscriptions/listen stream); listChanged receives one value per
// tools/list_changed.
func mcpClientTo(t *testing.T, base string, listChanged chan<- struct{}) *mcp.ClientSession {
	t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: "replica-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case listChanged <- struct{}{}:
			default:
			}
		},
	})
	cs, err := cl.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: bearerClient()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	t.Logf("DEBUG version %s sid %q", cs.InitializeResult().ProtocolVersion, cs.ID())
	return cs
}

// toolNames lists the tools cs sees.
func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// waitFor polls cond every 20 ms until it holds, failing t after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// TestReplicaChangesPropagate: an agent and an MCP server registered
// through replica A appear on replica B within a second, B's MCP clients
// get tools/list_changed, and a deletion through A reaches B too.
func TestReplicaChangesPropagate(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "hi"}))
	env := map[string]string{"TEAM_DB_URL": pgtest.Database(t, os.LookupEnv)}
	a := startInproc(t, model.URL, env)
	b := startInproc(t, model.URL, env)

	changed := make(chan struct{}, 1)
	cs := mcpClientTo(t, b.URL, changed)
	if names := toolNames(t, cs); slices.Contains(names, "agentd_agent_fresh") {
		t.Fatalf("tools before the agent exists: %v", names)
	}
	start := time.Now()
	if code, out := apiDo(t, a.URL, "POST", "/api/agents", `{"name":"fresh","provider":"fake","model":"m","expose":{"mcp":true}}`); code != http.StatusCreated {
		t.Fatalf("create agent on A: %d %v", code, out)
	}
	// Other changes may notify too (the A2A bridge's tools appear once
	// discovery ends): wait for the notification after which the agent
	// is listed.
	deadline := time.After(5 * time.Second)
	for listed := false; !listed; {
		select {
		case <-changed:
			listed = slices.Contains(toolNames(t, cs), "agentd_agent_fresh")
		case <-deadline:
			t.Fatalf("B's MCP client got no tools/list_changed listing the agent created through A (tools: %v)", toolNames(t, cs))
		}
	}
	took := time.Since(start)
	t.Logf("agent created on A: list_changed on B's client after %v", took.Round(time.Millisecond))
	if took > time.Second {
		t.Errorf("list_changed took %v, want under a second", took)
	}

	// An upstream MCP server registered through A is connected by B.
	up := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	defer upSrv.Close()
	reg := fmt.Sprintf(`{"name":"up","transport":{"type":"http","url":%q},"allow_private":true,"allowed_tools":["echo"]}`, upSrv.URL)
	if code, out := apiDo(t, a.URL, "POST", "/api/mcp/servers", reg); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("register mcp server on A: %d %v", code, out)
	}
	hasTool := func(base, name string) bool {
		_, out := apiGet(t, base, "/api/tools")
		return strings.Contains(fmt.Sprint(out["tools"]), name)
	}
	waitFor(t, 5*time.Second, "B connects the MCP server registered through A", func() bool { return hasTool(b.URL, "mcp_up_echo") })
	took = time.Since(start)
	t.Logf("mcp server registered on A: its tool on B after %v", took.Round(time.Millisecond))
	if took > time.Second {
		t.Errorf("B took %v to connect the server, want under a second", took)
	}
	if code, out := apiDo(t, a.URL, "DELETE", "/api/mcp/servers/up", ""); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("delete mcp server on A: %d %v", code, out)
	}
	waitFor(t, 5*time.Second, "B drops the MCP server deleted through A", func() bool { return !hasTool(b.URL, "mcp_up_echo") })
	_, out := apiGet(t, b.URL, "/api/mcp/servers")
	if strings.Contains(fmt.Sprint(out["servers"]), "up") {
		t.Errorf("B still lists the deleted server: %v", out["servers"])
	}

	// A deleted agent leaves B's tool list too.
	if code, out := apiDo(t, a.URL, "DELETE", "/api/agents/fresh", ""); code != http.StatusNoContent && code != http.StatusOK {
		t.Fatalf("delete agent on A: %d %v", code, out)
	}
	waitFor(t, 5*time.Second, "B's MCP tools drop the deleted agent", func() bool { return !slices.Contains(toolNames(t, cs), "agentd_agent_fresh") })
}

// TestReplicaOneTurnAtATime: while replica A runs a turn of a session,
// a message to that session through replica B is refused busy (409),
// saying another replica runs it; once A's turn ends, B runs the next.
func TestReplicaOneTurnAtATime(t *testing.T) {
	inModel := make(chan struct{}, 1)
	release := make(chan struct{})
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		if r.LastUserText() == "slow" {
			inModel <- struct{}{}
			<-release
		}
		return llmtest.Reply{Text: "done: " + r.LastUserText()}
	})
	env := map[string]string{"TEAM_DB_URL": pgtest.Database(t, os.LookupEnv)}
	a := startInproc(t, model.URL, env)
	b := startInproc(t, model.URL, env)

	code, out := apiDo(t, a.URL, "POST", "/api/agents/alpha/messages", `{"message":"hello"}`)
	if code != http.StatusOK {
		t.Fatalf("first turn: %d %v", code, out)
	}
	sid := out["session_id"].(string)
	slow := make(chan int, 1)
	go func() {
		code, _ := apiDo(t, a.URL, "POST", "/api/agents/alpha/messages", fmt.Sprintf(`{"message":"slow","session_id":%q}`, sid))
		slow <- code
	}()
	select {
	case <-inModel:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow turn never reached the model")
	}
	code, out = apiDo(t, b.URL, "POST", "/api/agents/alpha/messages", fmt.Sprintf(`{"message":"meanwhile","session_id":%q}`, sid))
	if code != http.StatusConflict || !strings.Contains(fmt.Sprint(out), "another replica") {
		t.Errorf("turn through B while A runs one: %d %v; want 409 naming another replica", code, out)
	}
	close(release)
	if code := <-slow; code != http.StatusOK {
		t.Fatalf("slow turn: %d", code)
	}
	code, out = apiDo(t, b.URL, "POST", "/api/agents/alpha/messages", fmt.Sprintf(`{"message":"after","session_id":%q}`, sid))
	if code != http.StatusOK || out["text"] != "done: after" {
		t.Errorf("turn through B after A's ended: %d %v", code, out)
	}
}

// hook is a push-notification receiver that records what it gets.
type hook struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []string // the task state of each notification, or its kind
	wake chan struct{}
}

func newHook(t *testing.T) *hook {
	h := &hook{wake: make(chan struct{}, 1)}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var sr a2a.StreamResponse
		what := "unreadable"
		if json.Unmarshal(b, &sr) == nil {
			switch ev := sr.Event.(type) {
			case *a2a.Task:
				what = "task:" + string(ev.Status.State)
			case *a2a.TaskStatusUpdateEvent:
				what = "status:" + string(ev.Status.State)
			case *a2a.TaskArtifactUpdateEvent:
				what = "artifact"
			}
		}
		h.mu.Lock()
		h.got = append(h.got, what)
		h.mu.Unlock()
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// count returns how many notifications said what.
func (h *hook) count(what string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, g := range h.got {
		if g == what {
			n++
		}
	}
	return n
}

// TestReplicaA2AAcrossReplicas: a task started on replica A is fetched,
// listed, subscribed to (live events, not only the end), answered when
// it asks for input, and cancelled through replica B; the cancel stops
// A's run (its session is free at once), and push notifications, even
// for a webhook registered through B, are sent once, by A.
func TestReplicaA2AAcrossReplicas(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "untrusted page text")
	}))
	defer page.Close()
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		last := r.Messages[len(r.Messages)-1]
		switch {
		case last.Role == "tool" && last.ToolResults[0].Name == "web_fetch":
			// Untrusted data in context: file_write needs approval.
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_write", `{"path":"out.txt","content":"x"}`)}}
		case last.Role == "tool":
			return llmtest.Reply{Text: "after approval: " + last.ToolResults[0].Content}
		case r.LastUserText() == "write something":
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("web_fetch", fmt.Sprintf(`{"url":%q}`, page.URL))}}
		case strings.HasPrefix(r.LastUserText(), "slow"):
			return llmtest.Reply{Text: strings.Repeat("s", 600), Chunks: 600, Delay: 50 * time.Millisecond}
		}
		return llmtest.Reply{Text: "answer to " + r.LastUserText()}
	})
	env := map[string]string{"TEAM_DB_URL": pgtest.Database(t, os.LookupEnv)}
	a := startInproc(t, model.URL, env)
	b := startInproc(t, model.URL, env)
	clA, clB := a2aClientFor(t, a.URL), a2aClientFor(t, b.URL)
	ctx := t.Context()
	push := newHook(t)

	req := userMessage("slow story")
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{URL: push.srv.URL}}
	res, err := clA.SendMessage(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)

	t.Run("get and list through B", func(t *testing.T) {
		got, err := clB.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateWorking {
			t.Fatalf("get through B: %v %v", got, err)
		}
		list, err := clB.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil || list.TotalSize != 1 || list.Tasks[0].ID != task.ID {
			t.Fatalf("list through B: %+v %v", list, err)
		}
	})

	t.Run("subscribe through B gets live events", func(t *testing.T) {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var first a2a.Event
		artifacts := 0
		for ev, err := range clB.SubscribeToTask(sctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				t.Fatalf("subscribe through B: %v", err)
			}
			if first == nil {
				first = ev
			}
			if _, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
				artifacts++
			}
			if artifacts == 3 {
				break // live text is flowing; the task goes on
			}
		}
		if _, ok := first.(*a2a.Task); !ok {
			t.Errorf("first event %T, want the task", first)
		}
		if artifacts < 3 {
			t.Errorf("%d artifact updates, want live text", artifacts)
		}
	})

	// A webhook registered through B for A's task: A, which sends the
	// task's notifications, hears of it.
	late := newHook(t)
	if _, err := clB.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "late", URL: late.srv.URL}); err != nil {
		t.Fatalf("push config through B: %v", err)
	}
	waitFor(t, 5*time.Second, "A knows the webhook set through B", func() bool {
		c, err := clA.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "late"})
		return err == nil && c.URL == late.srv.URL
	})

	t.Run("cancel through B stops A's run", func(t *testing.T) {
		start := time.Now()
		got, err := clB.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatalf("cancel through B: %v", err)
		}
		if got.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel through B: %s", got.Status.State)
		}
		t.Logf("cancel through B took %v", time.Since(start).Round(time.Millisecond))
		// A's run has stopped: the session takes the next turn within
		// moments (the run winds down after the task is stored
		// canceled); the slow answer alone would hold it for 30 s.
		took := waitFor(t, 10*time.Second, "the task's session free again", func() bool {
			code, _ := apiDo(t, b.URL, "POST", "/api/agents/alpha/messages", fmt.Sprintf(`{"message":"next","session_id":%q}`, task.ContextID))
			return code == http.StatusOK
		})
		t.Logf("A's run stopped %v after the cancel answered", took.Round(time.Millisecond))
		if got, _ := clA.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); got.Status.State != a2a.TaskStateCanceled {
			t.Errorf("A sees its task %s", got.Status.State)
		}
	})

	t.Run("push notifications once, by A", func(t *testing.T) {
		for _, h := range []*hook{push, late} {
			waitFor(t, 10*time.Second, "the canceled notification", func() bool { return h.count("status:"+string(a2a.TaskStateCanceled)) > 0 })
		}
		time.Sleep(500 * time.Millisecond) // a duplicate would come now
		for name, h := range map[string]*hook{"send's webhook": push, "webhook set through B": late} {
			if n := h.count("status:" + string(a2a.TaskStateCanceled)); n != 1 {
				t.Errorf("%s got the cancel %d times: %v", name, n, h.got)
			}
		}
	})

	t.Run("input required, answered through B", func(t *testing.T) {
		res, err := clA.SendMessage(ctx, userMessage("write something"))
		if err != nil {
			t.Fatal(err)
		}
		asking := res.(*a2a.Task)
		if asking.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state %s, want input-required", asking.Status.State)
		}
		res, err = clB.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessageForTask(a2a.MessageRoleUser, asking, a2a.NewTextPart("no"))})
		if err != nil {
			t.Fatalf("answer through B: %v", err)
		}
		done := res.(*a2a.Task)
		if done.ID != asking.ID || done.Status.State != a2a.TaskStateCompleted || !strings.Contains(a2aedge.ResultText(done), "rejected") {
			t.Fatalf("answered task: %s %s %q", done.ID, done.Status.State, a2aedge.ResultText(done))
		}
		// The audit (one store for both) names who answered, though the
		// answer reached A through B.
		waitFor(t, 10*time.Second, "the audit of the rejected call", func() bool {
			recs, err := a.D.Store.QueryAudit(ctx, store.AuditFilter{Tool: "file_write", SessionID: asking.ContextID})
			return err == nil && len(recs) == 1 && recs[0].Decision == "rejected" && strings.HasPrefix(recs[0].Detail, "rejected by admin")
		})
	})
}

// routeTransport sends each request to one of several replicas, as a
// load balancer without stickiness would: pick chooses by the request's
// JSON-RPC method ("" for GET and DELETE) and its number (from 0).
type routeTransport struct {
	targets []string // base URLs
	pick    func(method string, n int) int
	mu      sync.Mutex
	n       int
	seen    []string // "method→target index", in order
}

func (rt *routeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var method string
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body.Close()
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		method = m.Method
		r.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	rt.mu.Lock()
	i := rt.pick(method, rt.n) % len(rt.targets)
	rt.n++
	rt.seen = append(rt.seen, fmt.Sprintf("%s→%d", method, i))
	rt.mu.Unlock()
	r = r.Clone(r.Context())
	target := strings.TrimPrefix(rt.targets[i], "http://")
	r.URL.Host, r.Host = target, target
	r.Header.Set("Authorization", "Bearer "+a2aTestKey)
	return http.DefaultTransport.RoundTrip(r)
}

// TestReplicaMCPSessions: a 2025-11-25 session initialized on replica A
// keeps working when its requests reach replica B, alternately, and
// after A is gone: tools list, an agent call, list_changed for an agent
// created through either replica, a cancellation that reaches the other
// replica than the call's, and the end of the session (DELETE), after
// which no replica serves it.
func TestReplicaMCPSessions(t *testing.T) {
	inModel := make(chan struct{}, 1)
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		if r.LastUserText() == "slow" {
			select {
			case inModel <- struct{}{}:
			default:
			}
			return llmtest.Reply{Text: strings.Repeat("s", 600), Chunks: 600, Delay: 50 * time.Millisecond}
		}
		return llmtest.Reply{Text: "answer to " + r.LastUserText()}
	})
	env := map[string]string{"TEAM_DB_URL": pgtest.Database(t, os.LookupEnv)}
	a := startInproc(t, model.URL, env)
	b := startInproc(t, model.URL, env)

	rt := &routeTransport{targets: []string{a.URL, b.URL}, pick: func(method string, n int) int {
		switch method {
		case "initialize", "tools/call":
			return 0 // A
		case "notifications/cancelled":
			return 1 // B: not where the call runs
		}
		return n // everything else alternates
	}}
	changed := make(chan struct{}, 8)
	cl := mcp.NewClient(&mcp.Implementation{Name: "replica-test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := cl.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://replicas/mcp", HTTPClient: &http.Client{Transport: rt}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	sid := cs.ID()
	if !strings.HasPrefix(sid, "v1.") {
		t.Errorf("session id %q is not sealed", sid)
	}

	for range 4 {
		if names := toolNames(t, cs); !slices.Contains(names, "agentd_agent_alpha") {
			t.Fatalf("tools: %v", names)
		}
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentd_agent_alpha", Arguments: map[string]any{"message": "hello"}})
	if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.Content[0].(*mcp.TextContent).Text), "answer to hello") {
		t.Fatalf("agent call: %v %+v", err, res)
	}

	t.Run("list_changed from either replica", func(t *testing.T) {
		for i, base := range []string{a.URL, b.URL} {
			name := fmt.Sprintf("made%d", i)
			if code, out := apiDo(t, base, "POST", "/api/agents", fmt.Sprintf(`{"name":%q,"provider":"fake","model":"m","expose":{"mcp":true}}`, name)); code != http.StatusCreated {
				t.Fatalf("create agent: %d %v", code, out)
			}
			select {
			case <-changed:
			case <-time.After(5 * time.Second):
				t.Fatalf("no list_changed after an agent was created through replica %d (requests: %v)", i, rt.seen)
			}
			waitFor(t, 5*time.Second, "the new agent listed", func() bool { return slices.Contains(toolNames(t, cs), "agentd_agent_"+name) })
		}
	})

	t.Run("cancel reaching the other replica stops the call", func(t *testing.T) {
		// Raw requests: the call's POST stream stays open on A while the
		// cancellation goes to B (the SDK client also drops the stream,
		// which A would notice by itself).
		post := func(ctx context.Context, base, body string) (*http.Response, error) {
			req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+a2aTestKey)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			return http.DefaultClient.Do(req)
		}
		streamed := make(chan string, 1)
		go func() {
			// Headers come with the first message: Do returns then.
			stream, err := post(t.Context(), a.URL, `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"agentd_agent_alpha","arguments":{"message":"slow"},"_meta":{"progressToken":"p77"}}}`)
			if err != nil {
				streamed <- "error: " + err.Error()
				return
			}
			defer stream.Body.Close()
			b, _ := io.ReadAll(stream.Body)
			streamed <- string(b)
		}()
		select {
		case <-inModel:
		case <-time.After(10 * time.Second):
			t.Fatal("the slow call never reached the model")
		}
		// The slow turn's session, running on A.
		var slowID string
		waitFor(t, 5*time.Second, "the slow session listed", func() bool {
			_, out := apiGet(t, b.URL, "/api/sessions?agent=alpha")
			for _, s := range out["sessions"].([]any) {
				if m := s.(map[string]any); m["title"] == "slow" {
					slowID = m["id"].(string)
				}
			}
			return slowID != ""
		})
		resp, err := post(t.Context(), b.URL, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77,"reason":"changed my mind"}}`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("cancellation through B: %d", resp.StatusCode)
		}
		// Once A's run has stopped, the session takes a turn again; the
		// slow answer alone would hold it for 30 s.
		took := waitFor(t, 10*time.Second, "the cancelled call's session free again", func() bool {
			code, _ := apiDo(t, b.URL, "POST", "/api/agents/alpha/messages", fmt.Sprintf(`{"message":"after","session_id":%q}`, slowID))
			return code == http.StatusOK
		})
		t.Logf("the call on A stopped %v after its cancellation reached B", took.Round(time.Millisecond))
		select {
		case body := <-streamed:
			if strings.Contains(body, `"result"`) || strings.HasPrefix(body, "error: ") {
				t.Errorf("the cancelled call was answered: %.300s", body)
			}
		case <-time.After(10 * time.Second):
			t.Error("the cancelled call's stream stayed open")
		}
	})

	t.Run("after A is gone", func(t *testing.T) {
		rt.mu.Lock()
		rt.pick = func(string, int) int { return 1 }
		rt.mu.Unlock()
		a.close()
		if names := toolNames(t, cs); !slices.Contains(names, "agentd_agent_alpha") {
			t.Fatalf("tools through B alone: %v", names)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "agentd_agent_alpha", Arguments: map[string]any{"message": "still there"}})
		if err != nil || res.IsError {
			t.Fatalf("agent call through B alone: %v %+v", err, res)
		}
	})

	t.Run("ended sessions stay ended", func(t *testing.T) {
		if err := cs.Close(); err != nil {
			t.Fatal(err)
		}
		c := startInproc(t, model.URL, env) // a replica that never held the session
		for _, base := range []string{b.URL, c.URL} {
			req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
			req.Header.Set("Authorization", "Bearer "+a2aTestKey)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s: a request on the ended session got %d, want 404", base, resp.StatusCode)
			}
		}
		// A forged id is no session either.
		req, _ := http.NewRequest("GET", b.URL+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+a2aTestKey)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("forged session id: %d, want 404", resp.StatusCode)
		}
	})
}
