package mcpclient

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/tool"
)

// httpChild is the fault server serving HTTP in a subprocess of its own:
// its death is a real one, and its goroutines are not counted in ours.
type httpChild struct {
	cmd  *exec.Cmd
	addr string
	kind string
}

// startHTTPChild starts the fault server on addr ("127.0.0.1:0" for any
// port) speaking kind (see httpHandler).
func startHTTPChild(t *testing.T, kind, addr string) *httpChild {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, testServerArg, "-http="+addr, "-kind="+kind)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &httpChild{cmd: cmd, kind: kind}
	t.Cleanup(c.kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "LISTEN ") {
		t.Fatalf("http child: %q, %v", line, err)
	}
	c.addr = strings.TrimSpace(strings.TrimPrefix(line, "LISTEN "))
	return c
}

func (c *httpChild) url() string {
	if c.kind == "sse" {
		return "http://" + c.addr + "/sse"
	}
	return "http://" + c.addr + "/mcp"
}

func (c *httpChild) kill() {
	if c.cmd.ProcessState == nil {
		c.cmd.Process.Kill()
		c.cmd.Wait()
	}
}

// forget makes the server drop every session, as a restart would.
func (c *httpChild) forget(t *testing.T) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Post("http://"+c.addr+"/forget", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func httpEntry(name, kind, url string) config.MCPServer {
	typ := TransportHTTP
	if kind == "sse" {
		typ = TransportSSE
	}
	return config.MCPServer{
		Name:         name,
		TimeoutSecs:  5,
		AllowPrivate: true,
		Headers:      map[string]string{"Authorization": "Bearer ${TEST_MCP_TOKEN}"},
		Transport:    config.MCPTransport{Type: typ, URL: url},
	}
}

const testToken = "tok-3f9a-very-secret"

func httpOptions(logs *logBuffer) Options {
	o := testOptions(logs)
	o.LookupEnv = func(k string) (string, bool) {
		if k == "TEST_MCP_TOKEN" {
			return testToken, true
		}
		return "", false
	}
	return o
}

func TestHTTPTransports(t *testing.T) {
	tests := []struct {
		kind      string
		transport string
		protocol  string
	}{
		{"streamable", "http", "2025-11-25"},
		{"json", "http", "2025-11-25"},
		{"stateless", "http", "2026-07-28"},
		{"sse", "sse", "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			up := startHTTPChild(t, tt.kind, "127.0.0.1:0")
			check := baseline(t)
			logs := &logBuffer{}
			m := NewManager(httpOptions(logs))
			if err := m.Add(t.Context(), httpEntry("web", tt.kind, up.url())); err != nil {
				t.Fatal(err)
			}
			st := waitConnected(t, m, "web")
			if st.ProtocolVersion != tt.protocol || st.Transport != tt.transport {
				t.Errorf("status = %+v", st)
			}
			res, err := callTool(t.Context(), mustTool(t, m, "mcp_web_echo"), map[string]string{"text": "over http"})
			if err != nil || res.Content != "over http" {
				t.Fatalf("echo = %+v, %v", res, err)
			}
			res, err = callTool(t.Context(), mustTool(t, m, "mcp_web_seen_auth"), nil)
			if err != nil || res.Content != "Bearer "+testToken {
				t.Errorf("Authorization headers the server saw: %q, %v", res.Content, err)
			}

			// Structured output arrives readable and raw.
			res, err = callTool(t.Context(), mustTool(t, m, "mcp_web_structured"), nil)
			if err != nil || res.Content != "city: Oslo\ntemp: 3" || string(res.Structured) != `{"city":"Oslo","temp":3}` {
				t.Errorf("structured = %q %s, %v", res.Content, res.Structured, err)
			}

			// Progress over HTTP.
			var steps atomic.Int32
			raw, _ := json.Marshal(map[string]int{"steps": 3, "interval_ms": 20})
			res, err = mustTool(t, m, "mcp_web_progress").Call(t.Context(), &tool.Call{Args: raw, Progress: func(string, float64, float64) { steps.Add(1) }})
			if err != nil || res.Content != "done after 3 steps" || steps.Load() < 2 {
				t.Errorf("progress = %+v, %v, %d notifications", res, err, steps.Load())
			}

			// Upstream log messages reach the daemon log, tagged.
			if _, err := callTool(t.Context(), mustTool(t, m, "mcp_web_log"), map[string]string{"text": "note from upstream"}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "the upstream log line", func() bool {
				return contains(logs.String(), "note from upstream") && contains(logs.String(), "mcp_server=web")
			})

			// tools/list_changed reaches us (on the standalone stream, or
			// through subscriptions/listen in the stateless protocol).
			if _, err := callTool(t.Context(), mustTool(t, m, "mcp_web_add_tool"), map[string]string{"name": "late"}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 5*time.Second, "list_changed", func() bool { return findTool(m, "mcp_web_late") != nil })

			blob, _ := json.Marshal(m.Status())
			if contains(string(blob), testToken) || contains(logs.String(), testToken) {
				t.Error("the header value leaked into status or logs")
			}
			if st, _ := status(m, "web"); st.Reconnects != 0 {
				t.Errorf("reconnects = %d", st.Reconnects)
			}
			m.Close()
			check()
		})
	}
}

func TestSSRFGuardRefusesPrivateURL(t *testing.T) {
	var requests atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "nothing here", http.StatusTeapot)
	}))
	defer up.Close()
	check := baseline(t)
	m := NewManager(httpOptions(nil))
	for _, url := range []string{up.URL + "/mcp", "http://localhost:1/mcp", "http://169.254.169.254/mcp"} {
		entry := httpEntry("private", "streamable", url)
		entry.AllowPrivate = false
		if err := m.Add(t.Context(), entry); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "the guard to refuse "+url, func() bool {
			st, _ := status(m, "private")
			return st.State == StateFailed
		})
		st, _ := status(m, "private")
		if !contains(st.LastError, "blocked") {
			t.Errorf("%s: last error = %q", url, st.LastError)
		}
		// A private address names the server's own setting; metadata,
		// which no setting allows, names none.
		hint := `set allow_private = true on MCP server "private"`
		if metadata := contains(url, "169.254"); contains(st.LastError, hint) == metadata {
			t.Errorf("%s: last error = %q, want the hint %q only for a private address", url, st.LastError, hint)
		}
		if err := m.Remove(t.Context(), "private"); err != nil {
			t.Fatal(err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the private server", n)
	}

	// allow_private lets the request through (and the server's refusal
	// is what fails the connect).
	entry := httpEntry("allowed", "streamable", up.URL+"/mcp")
	if err := m.Add(t.Context(), entry); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a request to arrive", func() bool { return requests.Load() > 0 })
	m.Close()
	check()
}

func TestHTTPExpiredSessionGetsAFreshOne(t *testing.T) {
	up := startHTTPChild(t, "streamable", "127.0.0.1:0")
	check := baseline(t)
	m := NewManager(httpOptions(nil))
	if err := m.Add(t.Context(), httpEntry("web", "streamable", up.url())); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "web")
	up.forget(t) // our session id now gets 404
	_, err := callTool(t.Context(), mustTool(t, m, "mcp_web_echo"), map[string]string{"text": "x"})
	if !errors.Is(err, tool.ErrDisconnected) {
		t.Fatalf("call on an expired session = %v, want ErrDisconnected", err)
	}
	waitFor(t, 5*time.Second, "a fresh session", func() bool {
		st, _ := status(m, "web")
		return st.Connected && st.Reconnects == 1
	})
	res, err := callTool(t.Context(), mustTool(t, m, "mcp_web_echo"), map[string]string{"text": "fresh"})
	if err != nil || res.Content != "fresh" {
		t.Fatalf("echo on the fresh session = %+v, %v", res, err)
	}
	m.Close()
	check()
}

func TestHTTPServerDeathIsNoticedAtOnce(t *testing.T) {
	for _, kind := range []string{"streamable", "stateless", "sse"} {
		t.Run(kind, func(t *testing.T) {
			up := startHTTPChild(t, kind, "127.0.0.1:0")
			check := baseline(t)
			o := httpOptions(nil)
			o.KeepAlive = -1 // detection must not rely on pings
			m := NewManager(o)
			entry := httpEntry("web", kind, up.url())
			entry.TimeoutSecs = 30
			if err := m.Add(t.Context(), entry); err != nil {
				t.Fatal(err)
			}
			waitConnected(t, m, "web")

			errc := callArrived(t, t.Context(), mustTool(t, m, "mcp_web_hang"))
			start := time.Now()
			up.kill()
			select {
			case err := <-errc:
				if !errors.Is(err, tool.ErrDisconnected) {
					t.Errorf("in-flight call = %v, want ErrDisconnected", err)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("in-flight call still waiting 2s after the server died")
			}
			waitFor(t, 3*time.Second, "the session to be dropped", func() bool {
				st, _ := status(m, "web")
				return !st.Connected
			})
			t.Logf("session dropped %s after the server died", time.Since(start))

			up2 := startHTTPChild(t, kind, up.addr)
			waitFor(t, 10*time.Second, "reconnect", func() bool {
				st, _ := status(m, "web")
				return st.Connected && st.Reconnects == 1
			})
			res, err := callTool(t.Context(), mustTool(t, m, "mcp_web_echo"), map[string]string{"text": "back"})
			if err != nil || res.Content != "back" {
				t.Fatalf("echo after restart = %+v, %v", res, err)
			}

			// An idle session's death is noticed too, through its event
			// stream; the stateless protocol has none, and no session to
			// lose.
			if kind != "stateless" {
				start = time.Now()
				up2.kill()
				waitFor(t, 3*time.Second, "the idle session to be dropped", func() bool {
					st, _ := status(m, "web")
					return !st.Connected
				})
				t.Logf("idle session dropped %s after the server died", time.Since(start))
			}
			m.Close()
			up2.kill()
			check()
		})
	}
}

func TestHTTPOversizedResult(t *testing.T) {
	for _, kind := range []string{"streamable", "json", "sse"} {
		t.Run(kind, func(t *testing.T) {
			up := startHTTPChild(t, kind, "127.0.0.1:0")
			check := baseline(t)
			o := httpOptions(nil)
			o.MaxResultBytes = 64 << 10
			m := NewManager(o)
			if err := m.Add(t.Context(), httpEntry("web", kind, up.url())); err != nil {
				t.Fatal(err)
			}
			waitConnected(t, m, "web")
			_, err := callTool(t.Context(), mustTool(t, m, "mcp_web_big"), map[string]int{"bytes": 100 << 10})
			if !errors.Is(err, ErrResultTooLarge) || !contains(err.Error(), "64 KB limit") {
				t.Fatalf("err = %v, want ErrResultTooLarge", err)
			}
			res, err := callTool(t.Context(), mustTool(t, m, "mcp_web_echo"), map[string]string{"text": "still fine"})
			if err != nil || res.Content != "still fine" {
				t.Fatalf("echo after = %+v, %v", res, err)
			}
			if st, _ := status(m, "web"); st.Reconnects != 0 {
				t.Errorf("reconnects = %d", st.Reconnects)
			}
			m.Close()
			check()
		})
	}
}

func TestSSEEndpointOnAnotherHostIsRefused(t *testing.T) {
	var posted atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posted.Add(1)
	}))
	defer evil.Close()
	lure := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message\n\n", evil.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer lure.Close()
	check := baseline(t)
	m := NewManager(httpOptions(nil))
	if err := m.Add(t.Context(), httpEntry("lure", "sse", lure.URL)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the connect to fail", func() bool {
		st, _ := status(m, "lure")
		return st.State == StateFailed
	})
	st, _ := status(m, "lure")
	if !contains(st.LastError, "refusing a request") {
		t.Errorf("last error = %q", st.LastError)
	}
	if posted.Load() != 0 {
		t.Error("a request (with our headers) reached the other host")
	}
	m.Close()
	check()
}

func TestHeaderVariables(t *testing.T) {
	env := map[string]string{"TOKEN": "abc123", "ORG": "acme"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		name    string
		headers map[string]string
		want    http.Header
		secrets []string
		err     string
	}{
		{"literal", map[string]string{"X-Api": "plain"}, http.Header{"X-Api": {"plain"}}, []string{"plain"}, ""},
		{"whole", map[string]string{"Authorization": "${TOKEN}"}, http.Header{"Authorization": {"abc123"}}, []string{"abc123"}, ""},
		{"inside", map[string]string{"Authorization": "Bearer ${TOKEN} org=${ORG}"}, http.Header{"Authorization": {"Bearer abc123 org=acme"}}, []string{"Bearer abc123 org=acme"}, ""},
		{"unset", map[string]string{"Authorization": "${MISSING}"}, nil, nil, "MISSING is not set"},
		{"unterminated", map[string]string{"Authorization": "${TOKEN"}, nil, nil, "unterminated"},
		{"bad name", map[string]string{"Authorization": "${A-B}"}, nil, nil, "not a variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, secrets, err := expandHeaders(tt.headers, lookup)
			if tt.err != "" {
				if err == nil || !contains(err.Error(), tt.err) || contains(err.Error(), "abc123") {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(h) != fmt.Sprint(tt.want) || fmt.Sprint(secrets) != fmt.Sprint(tt.secrets) {
				t.Errorf("got %v %v, want %v %v", h, secrets, tt.want, tt.secrets)
			}
		})
	}
}

func TestRedaction(t *testing.T) {
	s := &server{}
	secrets := []string{"Bearer abc123xyz"}
	s.secrets.Store(&secrets)
	if got := s.redact(`request with "Bearer abc123xyz" failed`); contains(got, "abc123") {
		t.Errorf("redact = %q", got)
	}
	cfg := RedactedConfig(config.MCPServer{
		Headers:   map[string]string{"Authorization": "Bearer ${TOKEN}"},
		Transport: config.MCPTransport{URL: "https://user:pw@example.com/mcp?key=k1"},
	})
	blob, _ := json.Marshal(cfg)
	for _, leak := range []string{"TOKEN", "pw", "k1"} {
		if contains(string(blob), leak) {
			t.Errorf("redacted config %s still holds %q", blob, leak)
		}
	}
}
