package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

func TestA2AArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"agent", "hello", "world"}, []string{"agent", "hello", "world"}},
		{[]string{"agent", "--context", "c1", "hello"}, []string{"--context", "c1", "agent", "hello"}},
		{[]string{"--json", "agent", "hi", "--task=t1"}, []string{"--json", "--task=t1", "agent", "hi"}},
		{[]string{"agent", "--", "--not-a-flag"}, []string{"agent", "--not-a-flag"}},
	} {
		if got := a2aArgs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("a2aArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
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
