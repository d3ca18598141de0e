package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/daemon"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// crossSitePage posts to every route that runs an agent the way any web
// page can without a preflight: no-cors fetches with a JSON text as a
// text/plain body, and as a Blob without a type.
const crossSitePage = `<!doctype html><title>cross-site</title><script>
const D = %q;
const rpc = (method, params) => JSON.stringify({jsonrpc: "2.0", id: 1, method, params});
const msg = {message: {messageId: "m1", role: "ROLE_USER", parts: [{text: "run it"}]}};
const legacy = {id: "t1", message: {role: "user", parts: [{type: "text", text: "run it"}]}};
const shots = [
  [D + "/a2a/agents/assistant", rpc("SendMessage", msg)],
  [D + "/a2a/agents/assistant", rpc("message/send", {message: {messageId: "m2", role: "user", kind: "message", parts: [{kind: "text", text: "run it"}]}})],
  [D + "/a2a/agents/assistant/message:send", JSON.stringify(msg)],
  [D + "/a2a/tasks/send", rpc("tasks/send", legacy)],
  [D + "/a2a", rpc("message/send", {message: {messageId: "m3", role: "user", kind: "message", parts: [{kind: "text", text: "run it"}]}})],
  [D + "/api/agents/assistant/messages", JSON.stringify({message: "run it"})],
  [D + "/api/tools/shell_exec/call", JSON.stringify({arguments: {command: "touch pwned"}})],
];
(async () => {
  for (const [url, body] of shots) {
    await fetch(url, {method: "POST", mode: "no-cors", body}).catch(() => {});
    await fetch(url, {method: "POST", mode: "no-cors", body: new Blob([body])}).catch(() => {});
  }
  document.title = "cross-site: sent";
})();
</script>`

// rebindPage is served by the attacker under its own host name; once
// loaded it tells the attacker's server to hand the port to the daemon
// (the name now "resolves" there), then keeps asking until the daemon
// answers, and tries to read and run same-origin.
const rebindPage = `<!doctype html><title>rebind</title><script>
(async () => {
  await fetch("/switch");
  const seen = {};
  for (let i = 0; i < 200; i++) {
    try {
      const r = await fetch("/api/health");
      if (r.headers.get("X-Request-Id")) { seen.health = r.status; break; }
    } catch (e) {}
    await new Promise(ok => setTimeout(ok, 100));
  }
  const sessions = await fetch("/api/sessions");
  seen.sessions = sessions.status;
  seen.sessionsBody = (await sessions.text()).slice(0, 200);
  const run = await fetch("/api/agents/assistant/messages", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({message: "run it"})});
  seen.run = run.status;
  const a2a = await fetch("/a2a/agents/assistant", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({jsonrpc: "2.0", id: 1, method: "message/send", params: {message: {messageId: "m9", role: "user", kind: "message", parts: [{kind: "text", text: "run it"}]}}})});
  seen.a2a = a2a.status;
  document.title = "rebind: " + JSON.stringify(seen);
})();
</script>`

// TestCrossSiteInBrowser: finding 1 of the trust-boundary review, in
// Chromium against a daemon without keys (the default). Pages of another
// site post text/plain and type-less JSON bodies to every route that
// runs an agent (these once ran shell_exec and file_write), and a DNS
// rebinding page reaches the daemon under its own host name. Every such
// request must arrive (the test would prove nothing otherwise) and be
// refused by admission; the model is never asked and no tool runs.
func TestCrossSiteInBrowser(t *testing.T) {
	node, dir := peers(t)
	var modelCalls atomic.Int64
	fake := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		modelCalls.Add(1)
		if last := r.Messages[len(r.Messages)-1]; last.Role == llm.RoleTool {
			return llmtest.Reply{Text: "done"}
		}
		return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("shell_exec", `{"command":"touch pwned"}`)}}
	})
	home := t.TempDir()
	dln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	daemonURL := "http://" + dln.Addr().String()
	toml := fmt.Sprintf(`listen = %q

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "assistant"
provider = "fake"
model = "m"
tools = ["shell_exec", "file_write"]

[agents.expose]
a2a = true

[a2a]
enabled = true
`, dln.Addr().String(), fake.URL)
	file := filepath.Join(home, "config.toml")
	if err := os.WriteFile(file, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: file, Home: home, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	d, err := daemon.New(context.Background(), cfg, daemon.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	// What reached the daemon, and how it was answered.
	var mu sync.Mutex
	var arrived []string
	h := d.Handler()
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		h.ServeHTTP(rec, r)
		mu.Lock()
		arrived = append(arrived, fmt.Sprintf("%s %s %s %d", r.Host, r.Method, r.URL.Path, rec.status))
		mu.Unlock()
	})
	serve := func(ln net.Listener) *http.Server {
		s := &http.Server{Handler: counted, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("serve: %v", err)
			}
		}()
		t.Cleanup(func() { s.Close() })
		return s
	}
	serve(dln)

	// The attacker: another site (localhost is another site than
	// 127.0.0.1), and a host name rebound to the daemon's address on a
	// port the attacker first serves and then gives up.
	attack := &http.ServeMux{}
	attack.HandleFunc("GET /cross", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, crossSitePage, daemonURL)
	})
	aln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rebindAddr := rln.Addr().String()
	rebindSrv := &http.Server{ReadHeaderTimeout: 10 * time.Second}
	switched := make(chan struct{})
	var once sync.Once
	rebindMux := &http.ServeMux{}
	rebindMux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, rebindPage)
	})
	rebindMux.HandleFunc("GET /switch", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusNoContent)
		once.Do(func() {
			go func() {
				defer close(switched)
				rebindSrv.Close()
				ln, err := net.Listen("tcp", rebindAddr)
				if err != nil {
					t.Errorf("take over the rebound port: %v", err)
					return
				}
				serve(ln)
			}()
		})
	})
	rebindSrv.Handler = rebindMux
	go rebindSrv.Serve(rln)
	attackSrv := &http.Server{Handler: attack, ReadHeaderTimeout: 10 * time.Second}
	go attackSrv.Serve(aln)
	t.Cleanup(func() { attackSrv.Close(); rebindSrv.Close() })
	_, aport, _ := net.SplitHostPort(aln.Addr().String())
	_, rport, _ := net.SplitHostPort(rebindAddr)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "cross-site-e2e.mjs"))
	cmd.Dir = dir
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CHROMIUM=" + chromium,
		"ATTACKER_URL=http://localhost:" + aport + "/cross",
		"REBIND_URL=http://rebind.test:" + rport + "/",
	}
	out, err := cmd.CombinedOutput()
	t.Logf("cross-site-e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the browser script failed: %v", err)
	}
	<-switched

	mu.Lock()
	defer mu.Unlock()
	t.Logf("requests that reached the daemon:\n%s", strings.Join(arrived, "\n"))
	// The cross-site posts: 7 routes, two bodies each, every one arrived
	// and refused 403 by admission.
	crossRefused := 0
	for _, a := range arrived {
		if strings.HasPrefix(a, dln.Addr().String()+" POST ") {
			if !strings.HasSuffix(a, " 403") {
				t.Errorf("a cross-site post was not refused with 403: %s", a)
			}
			crossRefused++
		}
	}
	if crossRefused != 14 {
		t.Errorf("%d of the page's 14 cross-site posts reached the daemon", crossRefused)
	}
	// The rebound page: the daemon answered it (it saw a request id), and
	// refused everything with 421.
	m := regexp.MustCompile(`rebound page saw (\{.*\})`).FindSubmatch(out)
	if m == nil {
		t.Fatal("the rebound page reported nothing")
	}
	var seen map[string]any
	if err := json.Unmarshal(m[1], &seen); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"health", "sessions", "run", "a2a"} {
		if seen[k] != float64(http.StatusMisdirectedRequest) {
			t.Errorf("rebound page: %s answered %v, want 421 (%v)", k, seen[k], seen)
		}
	}
	rebound := 0
	for _, a := range arrived {
		if strings.HasPrefix(a, "rebind.test:") {
			rebound++
			if !strings.HasSuffix(a, " 421") {
				t.Errorf("a rebound request was served: %s", a)
			}
		}
	}
	if rebound < 4 {
		t.Errorf("only %d rebound requests reached the daemon", rebound)
	}
	if n := modelCalls.Load(); n != 0 {
		t.Errorf("the model was asked %d times: an agent ran", n)
	}
	if _, err := os.Stat(filepath.Join(cfg.WorkspaceDir("assistant", cfg.Agents[0]), "pwned")); err == nil {
		t.Error("shell_exec ran: the workspace has the attack's file")
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
