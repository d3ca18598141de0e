package daemon

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// TestReplicaMCPTasks: MCP tasks across replicas (two `agentd start`
// processes on one PostgreSQL database), driven by the TypeScript SDK's
// experimental tasks client and @a2a-js/sdk. A task created on one
// replica is followed, fetched and read over A2A on the other; one
// created on one is cancelled through the other (the run stops where it
// runs); and the task of a replica killed with SIGKILL is failed by the
// survivor within the lease, in both protocols.
func TestReplicaMCPTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the agentd binary twice")
	}
	node, dir := nodePeer(t)
	bin := buildAgentd(t)
	model := llmtest.NewOpenAIServer(t, suiteModel)
	env := map[string]string{"TEAM_DB_URL": pgtest.Database(t, os.LookupEnv)}
	runner, runnerURL := startBinaryReplicaAt(t, bin, model.URL, "", "", env)
	_, otherURL := startBinaryReplicaAt(t, bin, model.URL, "", "", env)
	tasks := func(base string, args ...string) map[string]map[string]any {
		t.Helper()
		t.Setenv("AGENTD_TOKEN", a2aTestKey) // the node client's credential
		steps := runNode(t, node, dir, append([]string{"mcp-tasks-client.mjs", base + "/mcp", base + "/a2a/agents/alpha", "agentd_agent_alpha"}, args...)...)
		t.Logf("%v on %s: %v", args, base, steps)
		return steps
	}
	start := func(message string) string {
		t.Helper()
		task, _ := tasks(runnerURL, "start", message)["created"]["task"].(map[string]any)
		if task["status"] != "working" {
			t.Fatalf("task of %q started on %s: %v", message, runnerURL, task)
		}
		return fmt.Sprint(task["taskId"])
	}

	id := start("progress me")
	f := tasks(otherURL, "follow", id)
	if f["result"]["text"] != "progress done" || f["a2a"]["state"] != "TASK_STATE_COMPLETED" {
		t.Errorf("followed on the other replica: result %v, a2a %v", f["result"], f["a2a"])
	}

	slow := start("slow")
	c := tasks(otherURL, "cancel", slow)
	if task, _ := c["cancel"]["task"].(map[string]any); task["status"] != "cancelled" || c["a2a"]["state"] != "TASK_STATE_CANCELED" {
		t.Errorf("cancelled through the other replica: %v, a2a %v", c["cancel"], c["a2a"])
	}

	orphan := start("slow")
	if err := runner.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = runner.Wait()
	killed := time.Now()
	a := tasks(otherURL, "await", orphan, "30")
	took := time.Since(killed)
	task, _ := a["await"]["task"].(map[string]any)
	t.Logf("the killed replica's task after %v (default lease 15 s): %v", took.Round(time.Millisecond), task)
	if task["status"] != "failed" || a["a2a"]["state"] != "TASK_STATE_FAILED" || took > 30*time.Second {
		t.Fatalf("the killed replica's task: mcp %v, a2a %v after %v; want failed in both within 30 s", task, a["a2a"], took)
	}
	if msg, _ := task["statusMessage"].(string); !strings.Contains(msg, "stopped") {
		t.Errorf("statusMessage %q does not say the replica stopped", msg)
	}
}
