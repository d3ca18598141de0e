package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// tasksConfig: one agent exposed over MCP and A2A, answered by the fake
// model at baseURL.
func tasksConfig(baseURL string) string {
	return agentConfig(baseURL) + `a2a = true

[a2a]
enabled = true
`
}

// TestMCPTasksAreA2ATasks: the TypeScript SDK's experimental tasks client
// calls an agent tool as a task (SEP-1686) and disconnects at once; from
// new sessions it follows the task to its end and fetches the result,
// which @a2a-js/sdk reads as the same task on the agent's A2A endpoint.
// A task cancelled over MCP is CANCELED in A2A, and one cancelled over A2A
// is cancelled in MCP. After a restart the finished task is still served,
// and the one the restart interrupted is failed in both protocols.
func TestMCPTasksAreA2ATasks(t *testing.T) {
	nodeBin := node(t)
	fake := llmtest.NewOpenAIServer(t, func(req *llmtest.Request) llmtest.Reply {
		switch req.LastUserText() {
		case "slow":
			// Long enough that the client is gone before the answer.
			return llmtest.Reply{Text: "Slow and steady wins.", Chunks: 4, Delay: 600 * time.Millisecond}
		case "stall":
			// Only a cancelled (or interrupted) run ends.
			return llmtest.Reply{Text: "never finished", Chunks: 2, Delay: time.Hour}
		}
		return llmtest.Reply{Text: "Hi."}
	})
	// The stop below waits a drain for the stalled run: a short one.
	e := writeConfig(t, tasksConfig(fake.URL)+"\n[cluster]\ndrain_timeout_secs = 1\n")
	stop, base := serveDaemon(t, e)
	const tool = "agentd_agent_helper_bot"
	run := func(base string, args ...string) map[string]map[string]any {
		return runTasksClient(t, nodeBin, e, append([]string{base + "/mcp", base + "/a2a/agents/helper-bot", tool}, args...))
	}

	// Start, disconnect, follow from a new session.
	s := run(base, "start", "slow")
	if c := s["capabilities"]; fmt.Sprint(c["taskSupport"]) != "optional" || c["tasks"] == nil {
		t.Fatalf("capabilities: %v (want the tasks capability and taskSupport optional)", c)
	}
	created := s["created"]["task"].(map[string]any)
	id := fmt.Sprint(created["taskId"])
	if created["status"] != "working" || fmt.Sprint(created["ttl"]) != "60000" || created["pollInterval"] == nil {
		t.Fatalf("created task %v: want working, ttl 60000, a pollInterval", created)
	}
	f := run(base, "follow", id)
	if st := f["polled"]["statuses"].([]any); st[len(st)-1] != "completed" {
		t.Fatalf("statuses %v, want to end completed", st)
	}
	r := f["result"]
	sc, _ := r["structured"].(map[string]any)
	if r["text"] != "Slow and steady wins." || r["isError"] != false || sc["session_id"] == nil || sc["stop_reason"] != "end_turn" {
		t.Fatalf("task result %v", r)
	}
	if rel, _ := r["meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any); fmt.Sprint(rel["taskId"]) != id {
		t.Errorf("result _meta %v: want the related task %s", r["meta"], id)
	}
	if ids := f["list"]["ids"].([]any); !slices.Contains(ids, any(id)) {
		t.Errorf("tasks/list %v lacks %s", ids, id)
	}
	if a := f["a2a"]; a["id"] != id || a["state"] != "TASK_STATE_COMPLETED" || a["contextId"] != sc["session_id"] {
		t.Errorf("A2A getTask of %s: %v (want COMPLETED in context %v)", id, a, sc["session_id"])
	}

	// Cancel over MCP: CANCELED in A2A; a second cancel is refused.
	stalled := fmt.Sprint(run(base, "start", "stall")["created"]["task"].(map[string]any)["taskId"])
	c := run(base, "cancel", stalled)
	if c["cancel"]["task"] == nil || c["cancel"]["task"].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("tasks/cancel: %v", c["cancel"])
	}
	if c["get"]["task"].(map[string]any)["status"] != "cancelled" || c["a2a"]["state"] != "TASK_STATE_CANCELED" {
		t.Errorf("after tasks/cancel: mcp %v, a2a %v", c["get"], c["a2a"])
	}
	if fmt.Sprint(c["again"]["code"]) != "-32602" {
		t.Errorf("cancelling a cancelled task: %v, want -32602", c["again"])
	}

	// Cancel over A2A: cancelled in MCP, and tasks/result answers.
	stalled2 := fmt.Sprint(run(base, "start", "stall")["created"]["task"].(map[string]any)["taskId"])
	a := run(base, "a2acancel", stalled2)
	if a["a2acancel"]["state"] != "TASK_STATE_CANCELED" || a["get"]["task"].(map[string]any)["status"] != "cancelled" {
		t.Fatalf("A2A cancel: %v, then tasks/get %v", a["a2acancel"], a["get"])
	}
	if res := a["result"]; res["isError"] != true || res["structured"].(map[string]any)["stop_reason"] != "cancelled" {
		t.Errorf("result of a task cancelled over A2A: %v", res)
	}

	// Unknown ids are invalid params, as SEP-1686 says.
	u := run(base, "unknown")
	for _, step := range []string{"get", "result", "cancel"} {
		if fmt.Sprint(u[step]["code"]) != "-32602" {
			t.Errorf("tasks/%s of an unknown id: %v, want -32602", step, u[step])
		}
	}

	// A restart: the finished task is still there; the interrupted one
	// failed, in both protocols.
	interrupted := fmt.Sprint(run(base, "start", "stall")["created"]["task"].(map[string]any)["taskId"])
	stop()
	_, base = serveDaemon(t, e)
	f = run(base, "follow", id)
	if f["result"]["text"] != "Slow and steady wins." || f["a2a"]["state"] != "TASK_STATE_COMPLETED" {
		t.Errorf("after a restart: result %v, a2a %v", f["result"], f["a2a"])
	}
	g := run(base, "get", interrupted)
	// A stop drains, then fails the runs still under way as "replica
	// shutting down" (a kill -9 would leave them to be failed at the
	// next start).
	if task := g["get"]["task"].(map[string]any); task["status"] != "failed" || !strings.Contains(fmt.Sprint(task["statusMessage"]), "shutting down") || g["a2a"]["state"] != "TASK_STATE_FAILED" {
		t.Errorf("the task the restart interrupted: mcp %v, a2a %v (want failed, shutting down, in both)", g["get"], g["a2a"])
	}
}

// runTasksClient runs interop/mcp-tasks-client.mjs and returns its steps.
// AGENTD_TOKEN=... in extraEnv is the clients' bearer credential.
func runTasksClient(t *testing.T, nodeBin string, e env, args []string, extraEnv ...string) map[string]map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, append([]string{"mcp-tasks-client.mjs"}, args...)...)
	cmd.Dir = repoRoot(t) + "/interop"
	cmd.Env = append(e.cmdEnv(), extraEnv...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-tasks-client.mjs %v: %v\nstdout: %s\nstderr: %s", args[3:], err, out, stderr.String())
	}
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			steps[fmt.Sprint(m["step"])] = m
		}
	}
	if len(steps) == 0 {
		t.Fatalf("mcp-tasks-client.mjs %v printed no step\nstdout: %s\nstderr: %s", args[3:], out, stderr.String())
	}
	t.Logf("mcp-tasks-client.mjs %v: %s", args[3:], out)
	return steps
}

// TestMCPTasksArePerPrincipal: a task belongs to the principal that
// started it, as an A2A task does. Another principal's tasks/get,
// tasks/result and tasks/cancel answer "unknown task" (the id must not
// tell that the task exists), its tasks/list leaves it out, and its A2A
// getTask does not find it either.
func TestMCPTasksArePerPrincipal(t *testing.T) {
	nodeBin := node(t)
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "Hi."}))
	e := writeConfig(t, tasksConfig(fake.URL)+fmt.Sprintf(`
[[principals]]
name = "alice"
key_sha256 = %q
agents = ["*"]

[[principals]]
name = "bob"
key_sha256 = %q
agents = ["*"]
`, sha256Hex("alice-key"), sha256Hex("bob-key")))
	_, base := serveDaemon(t, e)
	const tool = "agentd_agent_helper_bot"
	as := func(key string, args ...string) map[string]map[string]any {
		return runTasksClient(t, nodeBin, e, append([]string{base + "/mcp", base + "/a2a/agents/helper-bot", tool}, args...), "AGENTD_TOKEN="+key)
	}
	id := fmt.Sprint(as("alice-key", "start", "hello")["created"]["task"].(map[string]any)["taskId"])
	if f := as("alice-key", "follow", id); f["result"]["text"] != "Hi." || !slices.Contains(f["list"]["ids"].([]any), any(id)) || f["a2a"]["state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("alice follows her task: %v", f)
	}
	g := as("bob-key", "get", id)
	if fmt.Sprint(g["get"]["code"]) != "-32602" || g["a2a"]["error"] == nil {
		t.Errorf("bob reads alice's task: mcp %v, a2a %v (want unknown in both)", g["get"], g["a2a"])
	}
	if c := as("bob-key", "cancel", id); fmt.Sprint(c["cancel"]["code"]) != "-32602" {
		t.Errorf("bob cancels alice's task: %v, want -32602", c["cancel"])
	}
	if l := as("bob-key", "list"); slices.Contains(l["list"]["ids"].([]any), any(id)) {
		t.Errorf("bob's tasks/list %v shows alice's task %s", l["list"]["ids"], id)
	}
}

// TestMCPTasksThroughAgentdMCP: an editor's `agentd mcp` relays to the
// running daemon, so its tasks are the daemon's: started through one
// `agentd mcp` process, followed through another, read over A2A.
func TestMCPTasksThroughAgentdMCP(t *testing.T) {
	nodeBin := node(t)
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "Relayed.", Chunks: 3, Delay: 200 * time.Millisecond}))
	e := writeConfig(t, tasksConfig(fake.URL))
	_, base := serveDaemon(t, e)
	cmd, err := json.Marshal([]string{goBuild(t, "./cmd/agentd"), "--config", e.file, "mcp"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) map[string]map[string]any {
		return runTasksClient(t, nodeBin, e, append([]string{"stdio", base + "/a2a/agents/helper-bot", "agentd_agent_helper_bot"}, args...), "MCP_STDIO="+string(cmd))
	}
	s := run("start", "hello")
	task, _ := s["created"]["task"].(map[string]any)
	if s["capabilities"]["taskSupport"] != "optional" || task["status"] != "working" {
		t.Fatalf("through agentd mcp: %v", s)
	}
	id := fmt.Sprint(task["taskId"])
	f := run("follow", id)
	if f["result"]["text"] != "Relayed." || f["a2a"]["state"] != "TASK_STATE_COMPLETED" {
		t.Errorf("followed through another agentd mcp: result %v, a2a %v", f["result"], f["a2a"])
	}
}

// TestMCPTasksOfBridgeTools: the local agents the MCP → A2A bridge serves
// (a2a_local_*) run as tasks too, and their result is the bridge's:
// the task's text, and {agent, task_id, context_id, state}.
func TestMCPTasksOfBridgeTools(t *testing.T) {
	nodeBin := node(t)
	// The answer takes a moment, so the task is still working when its
	// handle is answered (an instant one may already be completed then).
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "Bridged.", Chunks: 2, Delay: 300 * time.Millisecond}))
	e := writeConfig(t, tasksConfig(fake.URL))
	_, base := serveDaemon(t, e)
	const tool = "a2a_local_helper_bot"
	run := func(args ...string) map[string]map[string]any {
		return runTasksClient(t, nodeBin, e, append([]string{base + "/mcp", base + "/a2a/agents/helper-bot", tool}, args...))
	}
	s := run("start", "hello")
	task, _ := s["created"]["task"].(map[string]any)
	if s["capabilities"]["taskSupport"] != "optional" || task["status"] != "working" {
		t.Fatalf("bridge tool as a task: %v", s)
	}
	id := fmt.Sprint(task["taskId"])
	f := run("follow", id)
	sc, _ := f["result"]["structured"].(map[string]any)
	if f["result"]["text"] != "Bridged." || sc["task_id"] != id || sc["agent"] != "helper-bot" || sc["state"] != "completed" || f["a2a"]["state"] != "TASK_STATE_COMPLETED" {
		t.Errorf("bridge tool task: result %v, a2a %v", f["result"], f["a2a"])
	}
}

// TestMCPTaskAsksItsQuestion: a task that waits for input (a tool call
// that needs approval) asks the MCP client waiting in tasks/result, by an
// elicitation tied to the task, as SEP-1686 has it; the TypeScript SDK's
// client answers in its elicitation handler. Approved, the tool runs and
// the task completes; declined, the agent hears the refusal and the task
// completes without the tool, in both protocols.
func TestMCPTaskAsksItsQuestion(t *testing.T) {
	nodeBin := node(t)
	fake := llmtest.NewOpenAIServer(t, func(req *llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == llm.RoleUser {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_list", `{}`)}}
		}
		return llmtest.Reply{Text: "tool said: " + last.ToolResults[0].Content}
	})
	e := writeConfig(t, fmt.Sprintf(`
[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "lister"
provider = "fake"
model = "fake-model"
tools = ["file_list"]

[agents.expose]
mcp = true
a2a = true

[a2a]
enabled = true

[[principals]]
name = "carol"
key_sha256 = %q
agents = ["*"]
ask_tools = ["file_list"]
`, fake.URL, sha256Hex("carol-key")))
	_, base := serveDaemon(t, e)
	const tool = "agentd_agent_lister"
	as := func(args ...string) map[string]map[string]any {
		return runTasksClient(t, nodeBin, e, append([]string{base + "/mcp", base + "/a2a/agents/lister", tool}, args...), "AGENTD_TOKEN=carol-key")
	}
	for _, tc := range []struct {
		action, want string
	}{
		// The workspace is empty: the listing says so.
		{"accept", "tool said: (empty directory)"},
		// A declined approval is a refusal the model reads.
		{"decline", "the user rejected the call"},
	} {
		t.Run(tc.action, func(t *testing.T) {
			id := fmt.Sprint(as("start", "list the files")["created"]["task"].(map[string]any)["taskId"])
			a := as("answer", id, tc.action)
			if w := a["waiting"]["task"].(map[string]any); w["status"] != "input_required" {
				t.Fatalf("before tasks/result: %v, want input_required", w)
			}
			qs, _ := a["asked"]["questions"].([]any)
			if len(qs) != 1 {
				t.Fatalf("questions asked: %v, want exactly one", a["asked"])
			}
			q := qs[0].(map[string]any)
			rel, _ := q["meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any)
			if fmt.Sprint(rel["taskId"]) != id || !strings.Contains(fmt.Sprint(q["message"]), "file_list") ||
				!strings.Contains(fmt.Sprint(q["schema"]), "approved") {
				t.Fatalf("question %v: want one about file_list, tied to task %s, asking approved", q, id)
			}
			r := a["result"]
			text := fmt.Sprint(r["text"])
			if r["isError"] != false || !strings.HasPrefix(text, "tool said: ") || !strings.Contains(text, tc.want) {
				t.Fatalf("result %v, want the model's reply to read %q", r, tc.want)
			}
			if a["a2a"]["state"] != "TASK_STATE_COMPLETED" {
				t.Errorf("A2A sees %v", a["a2a"])
			}
		})
	}
}
