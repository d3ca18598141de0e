package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// changeEvent is one event of GET /api/events.
type changeEvent struct {
	Event, ID string
	Change    httpapi.Change
	Hello     httpapi.Hello
}

// openChanges opens GET /api/events with key (none when "") and returns
// its status and, for a 200, its events as they come; the stream is
// closed with the test.
func openChanges(t *testing.T, base, key string, hdr map[string]string) (int, <-chan changeEvent) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		cancel()
		return resp.StatusCode, nil
	}
	ch := make(chan changeEvent, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ch)
		br := bufio.NewReader(resp.Body)
		var e changeEvent
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				e.Event = line[7:]
			case strings.HasPrefix(line, "id: "):
				e.ID = line[4:]
			case strings.HasPrefix(line, "data: "):
				if e.Event == "hello" {
					_ = json.Unmarshal([]byte(line[6:]), &e.Hello)
				} else {
					_ = json.Unmarshal([]byte(line[6:]), &e.Change)
				}
			case line == "" && e.Event != "":
				ch <- e
				e = changeEvent{}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
		<-done
	})
	return resp.StatusCode, ch
}

// waitChange returns the first change on ch that match accepts, failing
// after 10 s; every change seen is passed to seen.
func waitChange(t *testing.T, ch <-chan changeEvent, what string, match func(httpapi.Change) bool) httpapi.Change {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatalf("waiting for %s: the stream ended", what)
			}
			if e.Event == "change" && match(e.Change) {
				return e.Change
			}
		case <-timeout:
			t.Fatalf("waiting for %s: no such change in 10 s", what)
		}
	}
}

// TestChangeStream: GET /api/events passes the admission layer like every
// /api route (no key: 401; cross-site: 403), starts with hello, and
// carries what changed to those who may see it: bob hears of his own
// run, his own tool call's audit record and an MCP server failing, and
// not of the admin's run; the admin hears of bob's run too.
func TestChangeStream(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	body := fmt.Sprintf(`listen = "127.0.0.1:0"
api_key_env = "ADMIN_KEY"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "a"
provider = "fake"
model = "m"
tools = ["agent_list"]

[[agents]]
name = "alpha"
provider = "fake"
model = "m"
[agents.expose]
a2a = true

[a2a]
enabled = true

[[principals]]
name = "bob"
key_env = "BOB_KEY"
agents = ["*"]
tools = ["agent_list"]
`, model.URL)
	_, srv := testDaemon(t, body, map[string]string{"ADMIN_KEY": a2aTestKey, "BOB_KEY": "k-bob"})
	post := func(key, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	if code, _ := openChanges(t, srv.URL, "", nil); code != http.StatusUnauthorized {
		t.Errorf("without a key: %d, want 401", code)
	}
	if code, _ := openChanges(t, srv.URL, "k-bob", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}); code != http.StatusForbidden {
		t.Errorf("cross-site: %d, want 403", code)
	}
	_, bob := openChanges(t, srv.URL, "k-bob", nil)
	_, adm := openChanges(t, srv.URL, a2aTestKey, nil)
	for _, ch := range []<-chan changeEvent{bob, adm} {
		hello := <-ch
		if hello.Event != "hello" || hello.Hello.Status != "ok" || hello.Hello.Uptime <= 0 || len(hello.Hello.Topics) != len(httpapi.AllTopics) {
			t.Fatalf("first event: %+v", hello)
		}
	}

	// The admin's run: the admin hears of it, bob does not (he would
	// hear it before his own, which comes next).
	if code, b := post(a2aTestKey, "/api/agents/a/messages", `{"message":"admin's"}`); code != 200 {
		t.Fatalf("admin's run: %d %s", code, b)
	}
	adminRun := waitChange(t, adm, "the admin's run ending", func(c httpapi.Change) bool { return c.Topic == "runs" && c.What == "ended" })
	if code, b := post("k-bob", "/api/agents/a/messages", `{"message":"bob's"}`); code != 200 {
		t.Fatalf("bob's run: %d %s", code, b)
	}
	started := waitChange(t, bob, "bob's run starting", func(c httpapi.Change) bool { return c.Topic == "runs" })
	if started.ID == adminRun.ID || started.What != "started" {
		t.Fatalf("bob's first run notice: %+v (the admin's run was %s)", started, adminRun.ID)
	}
	waitChange(t, bob, "bob's run ending", func(c httpapi.Change) bool { return c.Topic == "runs" && c.ID == started.ID && c.What == "ended" })
	waitChange(t, adm, "bob's run, for the admin", func(c httpapi.Change) bool { return c.Topic == "runs" && c.ID == started.ID })

	if code, b := post("k-bob", "/api/tools/agent_list/call", `{}`); code != 200 {
		t.Fatalf("bob's tool call: %d %s", code, b)
	}
	waitChange(t, bob, "the audit record of bob's call", func(c httpapi.Change) bool {
		return c.Topic == "audit" && c.ID == "agent_list" && c.What == "ok"
	})

	// An A2A task of the admin's: its states as the dashboard spells them.
	res, err := a2aClientFor(t, srv.URL).SendMessage(context.Background(), userMessage("hi"))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("A2A answer: %T", res)
	}
	waitChange(t, adm, "the A2A task completing", func(c httpapi.Change) bool {
		return c.Topic == "a2a" && c.ID == string(task.ID) && c.What == "completed"
	})

	// An upstream that cannot start: everyone may know a server's state.
	if code, b := post(a2aTestKey, "/api/mcp/servers", `{"name":"ghost","transport":{"type":"stdio","command":"/nonexistent/ghost"}}`); code >= 300 {
		t.Fatalf("add server: %d %s", code, b)
	}
	// Bob heard of it; of the admin's A2A task, nothing.
	c := waitChange(t, bob, "the ghost server failing", func(c httpapi.Change) bool {
		return c.Topic == "a2a" || c.Topic == "mcp" && c.ID == "ghost" && c.What == "failed"
	})
	if c.Topic == "a2a" {
		t.Fatalf("bob heard of the admin's A2A task: %+v", c)
	}
}

// TestChangeStreamEndsWithTheDaemon: a dashboard's open stream does not
// hold up a graceful stop: it is told the daemon is stopping and ends,
// and Serve returns well before its shutdown timeout.
func TestChangeStreamEndsWithTheDaemon(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte("listen = \"127.0.0.1:0\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d, err := New(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ln, err := d.Listen("")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, ln) }()

	_, ch := openChanges(t, "http://"+ln.Addr().String(), "", nil)
	if hello := <-ch; hello.Event != "hello" {
		t.Fatalf("first event: %+v", hello)
	}
	start := time.Now()
	cancel()
	waitChange(t, ch, "the stopping notice", func(c httpapi.Change) bool { return c.Topic == "health" && c.What == "stopping" })
	for range ch {
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("Serve did not return: the open stream held up the shutdown")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the stop took %v", took)
	}
}
