package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestA2AFlagsAnywhere: a2a send's flags may come before, between or
// after its arguments, and "--" ends them; what reaches the daemon is the
// same request.
func TestA2AFlagsAnywhere(t *testing.T) {
	got := make(chan a2aedge.APISendRequest, 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req a2aedge.APISendRequest
		if r.URL.Path != "/api/a2a/send" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		got <- req
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"task":{"id":"t9","contextId":"c9","status":{"state":"TASK_STATE_COMPLETED"}},"text":"done"}`)
	}))
	defer api.Close()
	t.Setenv("AGENTD_HOME", t.TempDir())
	for _, tc := range []struct {
		args []string
		want a2aedge.APISendRequest
	}{
		{[]string{"agent", "hello", "world"}, sendReq("agent", "hello world", "", "")},
		{[]string{"agent", "--context", "c1", "hello"}, sendReq("agent", "hello", "c1", "")},
		{[]string{"--json", "agent", "hi", "--task=t1"}, sendReq("agent", "hi", "", "t1")},
		{[]string{"agent", "--", "--not-a-flag"}, sendReq("agent", "--not-a-flag", "", "")},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb strings.Builder
			code := Main(t.Context(), append([]string{"--addr", api.URL, "a2a", "send"}, tc.args...), strings.NewReader(""), &out, &errb)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if req := <-got; req.Agent != tc.want.Agent || req.Message != tc.want.Message || req.ContextID != tc.want.ContextID || req.TaskID != tc.want.TaskID {
				t.Errorf("sent %+v, want %+v", req, tc.want)
			}
		})
	}
}

func sendReq(agent, msg, contextID, taskID string) a2aedge.APISendRequest {
	return a2aedge.APISendRequest{Agent: agent, SendRequest: a2aedge.SendRequest{Message: msg, ContextID: contextID, TaskID: taskID}}
}

// TestA2ACommands: `agentd a2a` against a running daemon whose external
// agent is the daemon itself, reached through a loopback proxy.
func TestA2ACommands(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "pong"}))
	var proxy *httputil.ReverseProxy
	ready := make(chan struct{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-ready:
		case <-time.After(10 * time.Second):
			http.Error(w, "no target", http.StatusBadGateway)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	extra := fmt.Sprintf(`
[agents.expose]
a2a = true

[a2a]
enabled = true

[[a2a.external_agents]]
name = "self"
url = "%s/a2a/agents/assistant"
allow_private = true
`, front.URL)
	d := startDaemon(t, "openai", model.URL, extra)
	u, _ := url.Parse("http://" + d.addr)
	proxy = httputil.NewSingleHostReverseProxy(u)
	close(ready)

	deadline := time.Now().Add(10 * time.Second)
	for {
		code, out, _ := d.run(t, "a2a", "agents")
		if code == 0 && strings.Contains(out, "discovered") && strings.Contains(out, "a2a_self") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("external agent not discovered: %s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, out, errOut := d.run(t, "a2a", "send", "self", "ping", "please")
	if code != 0 || !strings.Contains(out, "pong") || !strings.Contains(out, "state: completed") {
		t.Fatalf("send: %d\n%s\n%s", code, out, errOut)
	}
	id := regexp.MustCompile(`task: (\S+)`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("no task id in %q", out)
	}
	// The task lives in this same daemon (the agent is itself), so it is
	// found locally; with --agent the remote copy is asked for.
	for _, args := range [][]string{{"a2a", "task", id[1]}, {"a2a", "task", id[1], "--agent", "self"}} {
		code, out, errOut = d.run(t, args...)
		if code != 0 || !strings.Contains(out, "pong") {
			t.Fatalf("%v: %d\n%s\n%s", args, code, out, errOut)
		}
	}
	code, out, errOut = d.run(t, "a2a", "discover", "http://"+d.addr+"/a2a/agents/assistant", "--allow-private")
	if code != 0 || !strings.Contains(out, "name:        assistant") || !strings.Contains(out, "JSONRPC 1.0") {
		t.Fatalf("discover: %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = d.run(t, "a2a", "send", "http://"+d.addr+"/a2a/agents/assistant", "hi")
	if code == 0 || !strings.Contains(errOut, "blocked") && !strings.Contains(errOut, "loopback") {
		t.Fatalf("a URL target on loopback was not refused: %d %s", code, errOut)
	}
	if code, _, _ := d.run(t, "a2a", "frobnicate"); code != 2 {
		t.Fatalf("unknown subcommand exit %d", code)
	}
}
