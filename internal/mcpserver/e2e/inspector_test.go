package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// inspector runs the MCP Inspector CLI with args and returns its JSON
// output and its stderr.
func inspector(t *testing.T, nodeBin string, e env, args ...string) (map[string]any, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	full := append([]string{nodeModule(t, "@modelcontextprotocol/inspector/clients/launcher/build/index.js"), "--cli", "--format", "json"}, args...)
	cmd := exec.CommandContext(ctx, nodeBin, full...)
	cmd.Env = e.cmdEnv() // HOME is a scratch dir: the inspector writes its catalog there
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspector %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	var out map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("inspector output is not one JSON object: %v\n%s", err, stdout.String())
	}
	// --format json wraps the method's result.
	if r, ok := out["result"].(map[string]any); ok {
		out = r
	}
	return out, stderr.String()
}

// checkAgentAnswer checks a tools/call result of the agent tool.
func checkAgentAnswer(t *testing.T, res map[string]any, want string) string {
	t.Helper()
	b, _ := json.Marshal(res)
	var r struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		Structured struct {
			SessionID  string `json:"session_id"`
			StopReason string `json:"stop_reason"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.IsError || len(r.Content) == 0 || r.Content[0].Text != want || r.Structured.SessionID == "" || r.Structured.StopReason != "end_turn" {
		t.Fatalf("agent tool result %s, want %q with a session id", b, want)
	}
	return r.Structured.SessionID
}

func toolNamesOf(res map[string]any) []string {
	var names []string
	tools, _ := res["tools"].([]any)
	for _, tl := range tools {
		if m, ok := tl.(map[string]any); ok {
			names = append(names, m["name"].(string))
		}
	}
	return names
}

// TestInspectorStdio round-trips `agentd mcp` (the real binary) with the
// Inspector CLI, in both protocol eras, with no daemon running (agentd
// serves in-process) and with one (agentd relays to its /mcp).
func TestInspectorStdio(t *testing.T) {
	nodeBin := node(t)
	agentd := goBuild(t, "./cmd/agentd")
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "Inspector says hi."}))
	for _, mode := range []string{"in-process", "relay"} {
		for _, era := range []string{"legacy", "modern"} {
			t.Run(mode+"/"+era, func(t *testing.T) {
				e := writeConfig(t, agentConfig(fake.URL))
				if mode == "relay" {
					startDaemon(t, e, true)
				}
				server := []string{"--protocol-era", era, "--", agentd, "--config", e.file, "mcp"}
				list, _ := inspector(t, nodeBin, e, append([]string{"--method", "tools/list"}, server...)...)
				if names := toolNamesOf(list); len(names) != 1 || names[0] != "agentd_agent_helper_bot" {
					t.Fatalf("tools %v", names)
				}
				res, stderr := inspector(t, nodeBin, e, append([]string{"--method", "tools/call", "--tool-name", "agentd_agent_helper_bot", "--tool-arg", "message=hello"}, server...)...)
				checkAgentAnswer(t, res, "Inspector says hi.")
				wantLog := map[string]string{"in-process": "serving in-process", "relay": "relaying to the running daemon"}[mode]
				if !strings.Contains(stderr, wantLog) {
					t.Errorf("agentd's stderr lacks %q:\n%s", wantLog, stderr)
				}
				rl, _ := inspector(t, nodeBin, e, append([]string{"--method", "resources/list"}, server...)...)
				if b, _ := json.Marshal(rl); !strings.Contains(string(b), "agentd://sessions/") {
					t.Fatalf("resources/list %s lacks the session", b)
				}
			})
		}
	}
}

// TestInspectorHTTP round-trips the daemon's /mcp with the Inspector CLI
// in both protocol eras.
func TestInspectorHTTP(t *testing.T) {
	nodeBin := node(t)
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "Over HTTP."}))
	e := writeConfig(t, agentConfig(fake.URL))
	_, base := startDaemon(t, e, false)
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			server := []string{"--protocol-era", era, "--server-url", base + "/mcp"}
			res, _ := inspector(t, nodeBin, e, append([]string{"--method", "tools/call", "--tool-name", "agentd_agent_helper_bot", "--tool-arg", "message=hello"}, server...)...)
			id := checkAgentAnswer(t, res, "Over HTTP.")
			rr, _ := inspector(t, nodeBin, e, append([]string{"--method", "resources/read", "--uri", "agentd://sessions/" + id}, server...)...)
			if b, _ := json.Marshal(rr); !strings.Contains(string(b), "Over HTTP.") {
				t.Fatalf("transcript %s lacks the answer", b)
			}
		})
	}
}
