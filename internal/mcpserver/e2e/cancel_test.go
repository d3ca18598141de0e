package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestCancelledAgentCallIsNotAnswered: the TypeScript MCP SDK client
// aborts an agent tool call (notifications/cancelled) while the model is
// still streaming. The run is cancelled (the stalled reply is never
// stored and the conversation goes on), and agentd sends no response for
// the cancelled request, as the MCP spec says; the SDK would otherwise
// report "Received a response for an unknown message ID". Over /mcp, and
// over `agentd mcp` serving in-process and relaying to the daemon.
func TestCancelledAgentCallIsNotAnswered(t *testing.T) {
	nodeBin := node(t)
	for _, mode := range []string{"http", "stdio", "stdio-relay"} {
		t.Run(mode, func(t *testing.T) {
			fake := llmtest.NewOpenAIServer(t, func(req *llmtest.Request) llmtest.Reply {
				switch req.LastUserText() {
				case "slow":
					// One delta, then a stall no test outlives: only a
					// cancelled run ends.
					return llmtest.Reply{Text: "let me think about this", Chunks: 2, Delay: time.Hour}
				case "after":
					return llmtest.Reply{Text: "Carrying on."}
				}
				return llmtest.Reply{Text: "Hi."}
			})
			e := writeConfig(t, agentConfig(fake.URL))
			args := []string{"mcp-cancel-client.mjs", "agentd_agent_helper_bot"}
			switch mode {
			case "http":
				_, base := startDaemon(t, e, false)
				args = append(args, "http", base+"/mcp")
			case "stdio", "stdio-relay":
				if mode == "stdio-relay" {
					startDaemon(t, e, true)
				}
				args = append(args, "stdio", goBuild(t, "./cmd/agentd"), "--config", e.file, "mcp")
			}
			steps := runCancelClient(t, nodeBin, e, args)

			if s := steps["first"]; s["text"] != "Hi." || s["session"] == nil {
				t.Fatalf("first call: %v", s)
			}
			if s := steps["cancel"]; fmt.Sprint(s["ticks"]) != "1" || s["error"] == "" || s["id"] == nil {
				t.Fatalf("cancelled call: %v (want one progress tick and an AbortError)", s)
			}
			if s := steps["after"]; s["text"] != "Carrying on." || s["isError"] != false {
				t.Fatalf("call after the cancellation: %v", s)
			}
			w := steps["wire"]
			if w["cancelledAnswered"] != false || len(w["errors"].([]any)) != 0 {
				t.Errorf("agentd answered the cancelled request %v: responses %v, client errors %v", steps["cancel"]["id"], w["responses"], w["errors"])
			}

			// The model saw the cancelled turn's message but none of the
			// answer it was streaming: the run ended there.
			var last *llmtest.Request
			for _, r := range fake.Requests() {
				if r.LastUserText() == "after" {
					last = r
				}
			}
			if last == nil {
				t.Fatal("the model never saw the call after the cancellation")
			}
			var got []string
			for _, m := range last.Messages {
				got = append(got, string(m.Role)+":"+m.Text())
			}
			want := []string{"user:hello", "assistant:Hi.", "user:slow", "user:after"}
			if fmt.Sprint(got) != fmt.Sprint(want) || last.Messages[2].Role != llm.RoleUser {
				t.Errorf("history after the cancelled run %q, want %q", got, want)
			}
		})
	}
}

// runCancelClient runs interop/mcp-cancel-client.mjs and returns its steps.
func runCancelClient(t *testing.T, nodeBin string, e env, args []string) map[string]map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, args...)
	cmd.Dir = repoRoot(t) + "/interop"
	cmd.Env = e.cmdEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-cancel-client.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			steps[fmt.Sprint(m["step"])] = m
		}
	}
	for _, s := range []string{"first", "cancel", "after", "wire"} {
		if steps[s] == nil {
			t.Fatalf("mcp-cancel-client.mjs reported no %q step\nstdout: %s\nstderr: %s", s, out, stderr.String())
		}
	}
	return steps
}
