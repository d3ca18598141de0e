package a2aedge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/tool"
)

func TestToolName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"research-agent", "a2a_research_agent"},
		{"Data Analyst!", "a2a_data_analyst"},
		{"a__b", "a2a_a__b"},
		{"---", "a2a_agent"},
		{strings.Repeat("x", 100), "a2a_" + strings.Repeat("x", 60)},
	} {
		if got := ToolName(tc.in); got != tc.want {
			t.Errorf("ToolName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestExternalAgent: one agentd delegates to another through the A2A
// client: discovery in the background, a tool per agent, results untrusted.
func TestExternalAgent(t *testing.T) {
	remote := newFixture(t, func(r *llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "remote says: " + r.LastUserText()}
	}, fixtureOptions{})
	local := newFixture(t, nil, fixtureOptions{external: []ExternalAgent{
		{Name: "Remote Beta", URL: remote.endpoint("beta"), AllowPrivate: true},
		{Name: "down", URL: "http://127.0.0.1:1", AllowPrivate: true},
	}})
	var agentTool tool.Tool
	deadline := time.Now().Add(10 * time.Second)
	for agentTool == nil {
		if t, ok := local.reg.Lookup("a2a_remote_beta"); ok {
			agentTool = t
		}
		if time.Now().After(deadline) {
			t.Fatalf("tool never appeared; agents %+v", local.client.Agents())
		}
		time.Sleep(5 * time.Millisecond)
	}
	spec := agentTool.Spec()
	if spec.Origin != tool.OriginA2A || !spec.Untrusted || spec.Server != "Remote Beta" {
		t.Fatalf("spec %+v", spec)
	}
	if _, ok := local.reg.Lookup("a2a_down"); ok {
		t.Fatal("undiscovered agent has a tool")
	}
	ctx := context.Background()
	res, err := agentTool.Call(ctx, &tool.Call{Args: json.RawMessage(`{"message":"ping"}`)})
	if err != nil || res.IsError || !strings.HasPrefix(res.Content, "remote says: ping") {
		t.Fatalf("result %+v %v", res, err)
	}
	var structured struct {
		ContextID string `json:"context_id"`
		State     string `json:"state"`
	}
	if err := json.Unmarshal(res.Structured, &structured); err != nil || structured.State != "completed" {
		t.Fatalf("structured %s", res.Structured)
	}
	statuses := local.client.Agents()
	if len(statuses) != 2 || !statuses[0].Discovered || statuses[1].Discovered || statuses[1].Error == "" {
		t.Fatalf("statuses %+v", statuses)
	}

	t.Run("send by url, get and cancel by remembered target", func(t *testing.T) {
		_, err := local.client.Send(ctx, remote.endpoint("alpha"), SendRequest{Message: "hello"})
		if err == nil {
			t.Fatal("a URL target reached loopback through the public-only guard")
		}
		if !errors.Is(err, netguard.ErrBlocked) {
			t.Fatalf("error %v", err)
		}
		task, err := local.client.Send(ctx, "Remote Beta", SendRequest{Message: "again", ContextID: structured.ContextID})
		if err != nil {
			t.Fatal(err)
		}
		got, err := local.client.GetTask(ctx, "", string(task.ID))
		if err != nil || got.ID != task.ID || ResultText(got) != "remote says: again" {
			t.Fatalf("get %+v %v", got, err)
		}
		if _, err := local.client.CancelTask(ctx, "", string(task.ID)); err == nil {
			t.Fatal("canceled a completed task")
		}
		if _, err := local.client.GetTask(ctx, "", "unknown"); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("unknown task: %v", err)
		}
	})
	t.Run("stream", func(t *testing.T) {
		var states []a2a.TaskState
		for ev, err := range local.client.Stream(ctx, "Remote Beta", SendRequest{Message: "s"}) {
			if err != nil {
				t.Fatal(err)
			}
			if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
				states = append(states, su.Status.State)
			}
		}
		if len(states) == 0 || states[len(states)-1] != a2a.TaskStateCompleted {
			t.Fatalf("states %v", states)
		}
	})
	t.Run("api", func(t *testing.T) {
		code, body := local.post("/api/a2a/send", `{"agent":"Remote Beta","message":"via api"}`)
		if code != http.StatusOK {
			t.Fatalf("%d %s", code, body)
		}
		var out APISendResponse
		if err := json.Unmarshal(body, &out); err != nil || out.Text != "remote says: via api" {
			t.Fatalf("%s %v", body, err)
		}
		code, body = local.get("/api/a2a/tasks/" + string(out.Task.ID))
		if code != http.StatusOK || !strings.Contains(string(body), `"source":"remote"`) {
			t.Fatalf("%d %s", code, body)
		}
		code, body = local.get("/api/a2a/agents")
		if code != http.StatusOK || !strings.Contains(string(body), `"tool":"a2a_remote_beta"`) {
			t.Fatalf("%d %s", code, body)
		}
		code, body = local.post("/api/a2a/discover", `{"url":"`+remote.endpoint("alpha")+`","allow_private":true}`)
		if code != http.StatusOK || !strings.Contains(string(body), `"name":"alpha"`) {
			t.Fatalf("%d %s", code, body)
		}
		code, body = local.post("/api/a2a/discover", `{"url":"`+remote.endpoint("alpha")+`"}`)
		if code != http.StatusForbidden || !strings.Contains(string(body), `send \"allow_private\": true (agentd a2a discover --allow-private)`) {
			t.Fatalf("private discovery without allow_private: %d %s", code, body)
		}
		code, _ = local.post("/api/a2a/send", `{"agent":"Remote Beta","message":"s","stream":true}`)
		if code != http.StatusOK {
			t.Fatalf("stream: %d", code)
		}
		if code, body := local.post("/api/a2a/send", `{"agent":"nobody","message":"x"}`); code != http.StatusBadRequest {
			t.Fatalf("unknown target: %d %s", code, body)
		}
		if code, body := local.post("/api/a2a/send", `{"agent":"x","mesage":"typo"}`); code != http.StatusBadRequest {
			t.Fatalf("unknown field: %d %s", code, body)
		}
	})
}

// TestDiscoverFallbackAndToken: a pre-0.3 card at agent.json, and a
// bearer token that goes to the configured host only.
func TestDiscoverFallbackAndToken(t *testing.T) {
	remote := newFixture(t, llmtest.Always(llmtest.Reply{Text: "ok"}), fixtureOptions{})
	var mu sync.Mutex
	auth := map[string]string{}
	cardHost := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth[r.URL.Path] = r.Header.Get("Authorization")
		mu.Unlock()
		if r.URL.Path != "/.well-known/agent.json" {
			http.NotFound(w, r)
			return
		}
		// A seed-era card: a bare url, pointing at another host.
		_ = json.NewEncoder(w).Encode(map[string]any{"name": "old", "description": "seed card", "url": remote.endpoint("beta"), "version": "0.1.0",
			"capabilities": map[string]any{"streaming": false}, "skills": []any{}, "defaultInputModes": []string{"text"}, "defaultOutputModes": []string{"text"}})
	}))
	defer cardHost.Close()
	t.Setenv("A2A_TEST_TOKEN", "secret-token")
	var remoteAuth []string
	remote.srv.Config.Handler = func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			remoteAuth = append(remoteAuth, r.Header.Get("Authorization"))
			mu.Unlock()
			next.ServeHTTP(w, r)
		})
	}(remote.srv.Config.Handler)
	c := NewClient(ClientOptions{
		External: []ExternalAgent{{Name: "old", URL: cardHost.URL, TokenEnv: "A2A_TEST_TOKEN", AllowPrivate: true}},
		Guard:    func(bool) *netguard.Policy { return &netguard.Policy{AllowPrivate: true} },
		LookupSecret: func(n string) (string, bool) {
			if n == "A2A_TEST_TOKEN" {
				return "secret-token", true
			}
			return "", false
		},
	})
	defer c.Close()
	task, err := c.Send(context.Background(), "old", SendRequest{Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if ResultText(task) != "ok" {
		t.Fatalf("text %q", ResultText(task))
	}
	mu.Lock()
	defer mu.Unlock()
	if auth["/.well-known/agent-card.json"] != "Bearer secret-token" || auth["/.well-known/agent.json"] != "Bearer secret-token" {
		t.Fatalf("card host did not get the token: %v", auth)
	}
	for _, a := range remoteAuth {
		if a != "" {
			t.Fatalf("token leaked to the host the card pointed at: %q", a)
		}
	}
	if len(remoteAuth) == 0 {
		t.Fatal("remote never called")
	}
}

func TestParseCard(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		ok         bool
		version    a2a.ProtocolVersion
	}{
		{"v1", `{"name":"a","supportedInterfaces":[{"url":"http://x/a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, true, "1.0"},
		{"v03", `{"name":"a","url":"http://x/a","preferredTransport":"JSONRPC","protocolVersion":"0.3.0"}`, true, "0.3.0"},
		{"seed", `{"name":"a","url":"http://x/a","version":"0.1.0"}`, true, "0.3"},
		{"no endpoint", `{"name":"a"}`, false, ""},
		{"not json", `<html>`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			card, err := ParseCard([]byte(tc.body))
			if (err == nil) != tc.ok {
				t.Fatalf("err %v", err)
			}
			if tc.ok && card.SupportedInterfaces[0].ProtocolVersion != tc.version {
				t.Fatalf("version %s", card.SupportedInterfaces[0].ProtocolVersion)
			}
		})
	}
}

func FuzzParseCard(f *testing.F) {
	f.Add([]byte(`{"name":"a","url":"http://x/a"}`))
	f.Add([]byte(`{"name":"a","supportedInterfaces":[{"url":"http://x","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"securitySchemes":{"b":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		card, err := ParseCard(b)
		if err == nil && (card.Name == "" || len(card.SupportedInterfaces) == 0) {
			t.Fatalf("accepted a card without name or endpoint: %s", b)
		}
	})
}

func FuzzApprovalAnswer(f *testing.F) {
	for _, s := range []string{"yes", "no", "Yes, go ahead.", "", "okay!", "nope"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := approvalAnswer(a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(s)))
		w := strings.Fields(strings.ToLower(s))
		if got && (len(w) == 0 || !strings.HasPrefix(w[0], strings.TrimRight(w[0], ".!,"))) {
			t.Fatalf("%q approved", s)
		}
		if got && len(w) > 0 && strings.HasPrefix(w[0], "n") {
			t.Fatalf("%q approved", s)
		}
	})
}

func FuzzToolName(f *testing.F) {
	for _, s := range []string{"research-agent", "Ünïcode", "a b c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := ToolName(s)
		if len(n) > 64 || !strings.HasPrefix(n, "a2a_") || strings.HasSuffix(n, "_") {
			t.Fatalf("ToolName(%q) = %q", s, n)
		}
		for _, r := range n {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
				t.Fatalf("ToolName(%q) = %q has %q", s, n, r)
			}
		}
	})
}

// TestToolSpecsDoNotAllocate: the runner reads every tool's Spec several
// times per model call (sorting and filtering its list), so a Spec is
// made once, not on each read.
func TestToolSpecsDoNotAllocate(t *testing.T) {
	c := NewClient(ClientOptions{})
	defer c.Close()
	tools := append(c.Tools(), agentTool{c: c, name: "peer", spec: agentSpec("peer", "a2a_peer", &a2a.AgentCard{Name: "Peer", Description: "d",
		Skills: []a2a.AgentSkill{{Name: "s", Description: "sd"}}})})
	for _, tl := range tools {
		sp := tl.Spec()
		if sp.Name == "" || len(sp.InputSchema) == 0 || !json.Valid(sp.InputSchema) || sp.Origin != tool.OriginA2A || !sp.Untrusted {
			t.Errorf("spec %+v", sp)
		}
		if n := testing.AllocsPerRun(100, func() { _ = tl.Spec() }); n != 0 {
			t.Errorf("%s: Spec allocates %v times per call", sp.Name, n)
		}
	}
}
