package daemon

import (
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// TestReplicaGatewayTasks: a task a principal starts through one
// replica's gateway on an upstream that declares tasks (the TypeScript
// SDK's tasks server) is followed, fetched and cancelled through the
// other replica's gateway, with no table shared between them (the handle
// carries its route, sealed under the replicas' key); another principal's
// tasks/get of the same handle answers unknown task, as it does for a
// task agentd runs itself (a tool without taskSupport).
func TestReplicaGatewayTasks(t *testing.T) {
	node, dir := nodePeer(t)
	upAddr := freeAddr(t)
	_, port, _ := strings.Cut(upAddr, ":")
	up := exec.Command(node, "mcp-gateway-tasks.mjs", "server", port)
	up.Dir = dir
	up.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-up.Process.Pid, syscall.SIGKILL)
		_ = up.Wait()
	})
	waitFor(t, 10*time.Second, "the tasks upstream to listen", func() bool {
		c, err := net.Dial("tcp", upAddr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	model := llmtest.NewOpenAIServer(t, suiteModel)
	env := map[string]string{"TEAM_DB_URL": pgtest.Database(t, os.LookupEnv), "ALICE_KEY": "k-alice", "BOB_KEY": "k-bob", "CAROL_KEY": "k-carol"}
	extra := fastCluster + fmt.Sprintf(`
[mcp]
gateways = ["tasks"]

[[mcp_servers]]
name = "tasks"
allowed_tools = ["*"]
allow_private = true

[mcp_servers.transport]
type = "http"
url = "http://%s/"

[[principals]]
name = "alice"
key_env = "ALICE_KEY"
tools = ["*"]

[[principals]]
name = "bob"
key_env = "BOB_KEY"
tools = ["*"]

[[principals]]
name = "carol"
key_env = "CAROL_KEY"
tools = ["mcp_tasks_echo"]
`, upAddr)
	a := startGatewayReplica(t, model.URL, extra, env)
	b := startGatewayReplica(t, model.URL, extra, env)
	client := func(base, token string, args ...string) map[string]map[string]any {
		t.Helper()
		t.Setenv("AGENTD_TOKEN", token)
		steps := runNode(t, node, dir, append([]string{"mcp-gateway-tasks.mjs", "client", base + "/mcp/gateway/tasks"}, args...)...)
		t.Logf("%v on %s: %v", args, base, steps)
		return steps
	}
	for _, base := range []string{a, b} {
		waitFor(t, 30*time.Second, "the gateway's tools", func() bool {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
				&mcp.StreamableClientTransport{Endpoint: base + "/mcp/gateway/tasks", HTTPClient: bearerClient()}, nil)
			if err != nil {
				return false
			}
			defer cs.Close()
			res, err := cs.ListTools(t.Context(), nil)
			return err == nil && len(res.Tools) > 0
		})
	}

	created, _ := client(a, "k-alice", "start", "delay", `{"ms":1500}`)["created"]["task"].(map[string]any)
	id := fmt.Sprint(created["taskId"])
	if !strings.HasPrefix(id, "gwt1.") || created["status"] != "working" {
		t.Fatalf("started through replica A: %v", created)
	}
	f := client(b, "k-alice", "follow", id)
	res, _ := f["result"]["result"].(map[string]any)
	if content, _ := res["content"].([]any); len(content) != 1 || content[0].(map[string]any)["text"] != "waited 1500 ms" {
		t.Errorf("followed through replica B: %v", f)
	}
	if g := client(b, "k-bob", "get", id); fmt.Sprint(g["get"]["code"]) != "-32602" {
		t.Errorf("bob's tasks/get of alice's handle: %v, want unknown task (-32602)", g["get"])
	}
	// echo declares no taskSupport: agentd runs the call as its own
	// task, in replica A's memory, and it is alice's alone too.
	local, _ := client(a, "k-alice", "start", "echo", `{"text":"hello"}`)["created"]["task"].(map[string]any)
	localID := fmt.Sprint(local["taskId"])
	if !strings.HasPrefix(localID, "gwl-") {
		t.Fatalf("a call of a tool without taskSupport: %v, want agentd's own task", local)
	}
	if g := client(a, "k-bob", "get", localID); fmt.Sprint(g["get"]["code"]) != "-32602" {
		t.Errorf("bob's tasks/get of alice's task: %v, want unknown task (-32602)", g["get"])
	}
	lf := client(a, "k-alice", "follow", localID)
	if res, _ := lf["result"]["result"].(map[string]any); fmt.Sprint(res["content"]) != "[map[text:hello type:text]]" {
		t.Errorf("alice's own task: %v", lf)
	}
	if ids, _ := lf["list"]["ids"].([]any); len(ids) != 2 {
		t.Errorf("alice's tasks/list on replica A: %v, want her two tasks", lf["list"])
	}
	// carol may call echo only: she is listed echo alone, and her task
	// of delay is refused as of an unknown tool.
	cs := client(a, "k-carol", "start", "delay", `{"ms":1}`)
	if cs["created"] != nil || cs["capabilities"]["taskSupport"] != nil || !strings.Contains(fmt.Sprint(cs["unexpected"]), `unknown tool "delay"`) {
		t.Errorf("carol's task of a tool she may not call: %v, want it refused as unknown", cs)
	}
	long, _ := client(a, "k-alice", "start", "delay", `{"ms":600000}`)["created"]["task"].(map[string]any)
	c := client(b, "k-alice", "cancel", fmt.Sprint(long["taskId"]))
	if task, _ := c["get"]["task"].(map[string]any); task["status"] != "cancelled" {
		t.Errorf("cancelled through replica B: %v", c)
	}
}

// startGatewayReplica starts an in-process replica whose config has
// extra appended, and returns its URL.
func startGatewayReplica(t *testing.T, modelURL, extra string, env map[string]string) string {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(replicaConfig("127.0.0.1:0", modelURL, extra)), 0o600); err != nil {
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
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		d.Close()
	})
	return srv.URL
}
