//go:build linux

package reliability

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// blockedText is what every refusal of the SSRF guard says
// (netguard.ErrBlocked).
const blockedText = "destination blocked by SSRF policy"

// countingListener accepts and counts connections: a target that must
// never be reached.
type countingListener struct {
	ln   net.Listener
	hits atomic.Int32
}

func listenCounting(t testing.TB, network, addr string) *countingListener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil
	}
	c := &countingListener{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.hits.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return c
}

func (c *countingListener) port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// hostsAlias returns a name from /etc/hosts that resolves to a loopback
// or private address and is not a localhost name, or "".
func hostsAlias() (name, addr string) {
	f, err := os.Open("/etc/hosts")
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.SplitN(sc.Text(), "#", 2)[0])
		if len(fields) < 2 {
			continue
		}
		ip, err := netip.ParseAddr(fields[0])
		if err != nil || !(ip.IsLoopback() || ip.IsPrivate()) {
			continue
		}
		for _, n := range fields[1:] {
			l := strings.ToLower(n)
			if l != "localhost" && !strings.HasSuffix(l, ".localhost") && !strings.HasPrefix(l, "localhost.") && !strings.HasPrefix(l, "ip6-") {
				return n, fields[0]
			}
		}
	}
	return "", ""
}

// ssrfTarget is one row of the matrix: a URL an outbound path must refuse.
type ssrfTarget struct {
	name string
	url  string
	// counted says the URL points at a counting listener: no connection
	// may reach it.
	counted bool
}

// ssrfTargets builds the rows: v4 and v6 listen on loopback ports that
// count connections (nil when unavailable).
func ssrfTargets(v4, v6 *countingListener) ([]ssrfTarget, []string) {
	p := v4.port()
	var rows []ssrfTarget
	var skipped []string
	add := func(name, url string, counted bool) { rows = append(rows, ssrfTarget{name, url, counted}) }
	add("IPv4 loopback", fmt.Sprintf("http://127.0.0.1:%d/", p), true)
	add("IPv4 loopback, other address", fmt.Sprintf("http://127.0.0.2:%d/", p), false)
	add("unspecified 0.0.0.0", fmt.Sprintf("http://0.0.0.0:%d/", p), true)
	add("IPv4-mapped IPv6 loopback", fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", p), true)
	if v6 != nil {
		add("IPv6 loopback", fmt.Sprintf("http://[::1]:%d/", v6.port()), true)
	} else {
		add("IPv6 loopback", fmt.Sprintf("http://[::1]:%d/", p), false)
		skipped = append(skipped, "IPv6 loopback: no [::1] listener here, so only the refusal is checked, not the absence of a connection")
	}
	add("private 10/8", "http://10.0.0.1/", false)
	add("private 172.16/12", "http://172.16.0.1/", false)
	add("private 192.168/16", "http://192.168.1.1/", false)
	add("CGNAT 100.64/10", "http://100.64.0.1/", false)
	add("IPv6 unique local", "http://[fd00::1]/", false)
	add("link-local 169.254/16", "http://169.254.1.1/", false)
	add("IPv6 link-local", "http://[fe80::1]/", false)
	add("metadata 169.254.169.254", "http://169.254.169.254/latest/meta-data/", false)
	add("metadata fd00:ec2::254", "http://[fd00:ec2::254]/latest/meta-data/", false)
	add("metadata.google.internal", "http://metadata.google.internal/computeMetadata/v1/", false)
	add("decimal 2130706433", fmt.Sprintf("http://2130706433:%d/", p), true)
	add("octal 0177.0.0.1", fmt.Sprintf("http://0177.0.0.1:%d/", p), true)
	add("hex 0x7f.0.0.1", fmt.Sprintf("http://0x7f.0.0.1:%d/", p), true)
	add("hex 0x7f000001", fmt.Sprintf("http://0x7f000001:%d/", p), true)
	add("short 127.1", fmt.Sprintf("http://127.1:%d/", p), true)
	add("decimal metadata 2852039166", "http://2852039166/latest/meta-data/", false)
	add("localhost", fmt.Sprintf("http://localhost:%d/", p), true)
	add("LOCALHOST.", fmt.Sprintf("http://LOCALHOST.:%d/", p), true)
	add("sub.localhost", fmt.Sprintf("http://api.localhost:%d/", p), true)
	add("userinfo trick", fmt.Sprintf("http://example.com@127.0.0.1:%d/", p), true)
	if name, addr := hostsAlias(); name != "" {
		add(fmt.Sprintf("name resolving to %s (%s, /etc/hosts)", addr, name), fmt.Sprintf("http://%s:%d/", name, p), strings.HasPrefix(addr, "127."))
	} else {
		skipped = append(skipped, "name resolving to a private address: /etc/hosts has no non-localhost name for a loopback or private address")
	}
	return rows, skipped
}

// outboundPath is one way the daemon connects somewhere a caller names.
type outboundPath struct {
	name string
	// try asks the daemon to reach url and returns the caller's view
	// and whether it was refused: by the SSRF guard, or rejected as an
	// invalid URL before any connection.
	try func(t *testing.T, url string) (verdict, seen string)
}

// TestSSRFMatrix points every outbound path of a daemon at loopback,
// private, link-local and metadata destinations in every spelling, and at
// redirects to them: each must be refused by the guard, with no
// connection reaching a loopback target, unless the config allows it.
func TestSSRFMatrix(t *testing.T) {
	track(t, areaSSRF, false)
	v4 := listenCounting(t, "tcp4", "127.0.0.1:0")
	if v4 == nil {
		t.Fatal("no IPv4 loopback listener")
	}
	v6 := listenCounting(t, "tcp6", "[::1]:0")
	rows, skipped := ssrfTargets(v4, v6)

	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "ok"}))
	cfg := func(extra string) string {
		return fmt.Sprintf(`api_key = %q
[providers.fake]
kind = "openai"
base_url = %q
[[agents]]
name = "alpha"
provider = "fake"
model = "m"
[agents.expose]
a2a = true
[a2a]
enabled = true
[limits]
rate_per_sec = 100000
burst = 100000
%s`, faultKey, model.URL, extra)
	}
	p := startDaemon(t, daemonSpec{Key: faultKey, TOML: cfg("")})
	ctx := context.Background()
	a2acl := a2aClient(t, p.URL, "alpha", faultKey, loadTransport())

	var serverN atomic.Int32
	mcpTry := func(kind string, allowPrivate bool) func(t *testing.T, url string) (string, string) {
		return func(t *testing.T, url string) (string, string) {
			name := fmt.Sprintf("s%d", serverN.Add(1))
			body, _ := json.Marshal(map[string]any{"name": name, "allow_private": allowPrivate, "allowed_tools": []string{}, "transport": map[string]string{"type": kind, "url": url}})
			r := p.call(t, "POST", "/api/mcp/servers", string(body))
			defer p.call(t, "DELETE", "/api/mcp/servers/"+name, nil)
			if r.Status >= 400 {
				if r.Status == http.StatusBadRequest && !strings.Contains(string(r.Body), blockedText) {
					return "rejected as invalid", string(r.Body)
				}
				return guardVerdict(strings.Contains(string(r.Body), blockedText)), string(r.Body)
			}
			// Added: the refusal shows in the server's status.
			deadline := time.Now().Add(10 * time.Second)
			for {
				var st struct {
					Servers []struct {
						Name      string `json:"name"`
						State     string `json:"state"`
						LastError string `json:"last_error"`
					} `json:"servers"`
				}
				decodeJSON(t, p.call(t, "GET", "/api/mcp/servers", nil).Body, &st)
				for _, s := range st.Servers {
					if s.Name == name && s.LastError != "" {
						return guardVerdict(strings.Contains(s.LastError, blockedText)), s.State + ": " + s.LastError
					}
					if s.Name == name && s.State == "connected" {
						return "", "connected"
					}
				}
				if time.Now().After(deadline) {
					return "", "no error after 10 s"
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	paths := []outboundPath{
		{"web_fetch tool", func(t *testing.T, url string) (string, string) {
			r := p.call(t, "POST", "/api/tools/web_fetch/call", map[string]string{"url": url})
			return guardVerdict(strings.Contains(string(r.Body), blockedText) && strings.Contains(string(r.Body), `"is_error": true`)), string(r.Body)
		}},
		{"MCP server (http)", mcpTry("http", false)},
		{"MCP server (sse)", mcpTry("sse", false)},
		{"A2A discover", func(t *testing.T, url string) (string, string) {
			r := p.call(t, "POST", "/api/a2a/discover", map[string]string{"url": url})
			return guardVerdict(r.Status == http.StatusForbidden && strings.Contains(string(r.Body), blockedText)), r.String()
		}},
		{"A2A send to a URL", func(t *testing.T, url string) (string, string) {
			r := p.call(t, "POST", "/api/a2a/send", map[string]string{"agent": url, "message": "hi"})
			return guardVerdict(r.Status == http.StatusForbidden && strings.Contains(string(r.Body), blockedText)), r.String()
		}},
		{"A2A push webhook", func(t *testing.T, url string) (string, string) {
			req := textMessage("hi")
			req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: url + "hook"}}
			_, err := a2acl.SendMessage(ctx, req)
			if err == nil {
				return "", "accepted"
			}
			return guardVerdict(strings.Contains(strings.ToLower(err.Error()), "ssrf") || strings.Contains(err.Error(), "blocked")), err.Error()
		}},
	}

	header := []string{"destination"}
	for _, path := range paths {
		header = append(header, path.name)
	}
	var table [][]string
	refused, total := 0, 0
	for _, row := range rows {
		cells := []string{fmt.Sprintf("%s `%s`", row.name, row.url)}
		for _, path := range paths {
			before := v4.hits.Load()
			var before6 int32
			if v6 != nil {
				before6 = v6.hits.Load()
			}
			verdict, seen := path.try(t, row.url)
			total++
			reached := v4.hits.Load() != before || (v6 != nil && v6.hits.Load() != before6)
			switch {
			case reached:
				t.Errorf("%s → %s: a connection reached the target (%s)", path.name, row.url, truncate(seen, 300))
				cells = append(cells, "**REACHED**")
			case verdict == "":
				t.Errorf("%s → %s: not refused by the SSRF guard: %s", path.name, row.url, truncate(seen, 300))
				cells = append(cells, "**not refused**")
			default:
				refused++
				cells = append(cells, verdict)
			}
		}
		table = append(table, cells)
	}

	// Redirects from an allowed origin to a metadata address.
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	allowing := startDaemon(t, daemonSpec{Key: faultKey, TOML: cfg("[tools.web_fetch]\nallow_private = true\n")})
	redirectRow := []string{fmt.Sprintf("redirect from an allowed loopback origin to 169.254.169.254 `%s`", redirector.URL)}
	redirectPaths := map[string]func(t *testing.T) (bool, string){
		"web_fetch tool": func(t *testing.T) (bool, string) {
			r := allowing.call(t, "POST", "/api/tools/web_fetch/call", map[string]string{"url": redirector.URL + "/"})
			return strings.Contains(string(r.Body), blockedText), string(r.Body)
		},
		"MCP server (http)": func(t *testing.T) (bool, string) {
			return mcpRedirect(t, mcpTry("http", true), redirector.URL+"/mcp")
		},
		"MCP server (sse)": func(t *testing.T) (bool, string) {
			return mcpRedirect(t, mcpTry("sse", true), redirector.URL+"/sse")
		},
		"A2A discover": func(t *testing.T) (bool, string) {
			r := p.call(t, "POST", "/api/a2a/discover", map[string]any{"url": redirector.URL, "allow_private": true})
			return r.Status >= 400 && strings.Contains(string(r.Body), blockedText), r.String()
		},
	}
	for _, path := range paths {
		f, ok := redirectPaths[path.name]
		if !ok {
			redirectRow = append(redirectRow, "n/a (no allowed origin can be configured)")
			continue
		}
		ok, seen := f(t)
		total++
		if !ok {
			t.Errorf("%s: redirect to the metadata address not refused: %s", path.name, truncate(seen, 300))
			redirectRow = append(redirectRow, "**not refused**")
			continue
		}
		refused++
		redirectRow = append(redirectRow, "refused")
	}
	table = append(table, redirectRow)

	// ...and from an allow_hosts origin to loopback (web_fetch).
	hostsDaemon := startDaemon(t, daemonSpec{Key: faultKey, TOML: cfg("[tools.web_fetch]\nallow_hosts = [\"localhost\"]\n")})
	toLoopback := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("http://127.0.0.1:%d/", v4.port()), http.StatusFound)
	}))
	t.Cleanup(toLoopback.Close)
	lbURL := strings.Replace(toLoopback.URL, "127.0.0.1", "localhost", 1) + "/"
	before := v4.hits.Load()
	r := hostsDaemon.call(t, "POST", "/api/tools/web_fetch/call", map[string]string{"url": lbURL})
	total++
	row := []string{fmt.Sprintf("redirect from an allow_hosts origin to 127.0.0.1 `%s`", lbURL)}
	if !strings.Contains(string(r.Body), blockedText) || v4.hits.Load() != before {
		t.Errorf("web_fetch: redirect from an allow_hosts origin to loopback not refused: %v", r)
		row = append(row, "**not refused**")
	} else {
		refused++
		row = append(row, "refused")
	}
	for range paths[1:] {
		row = append(row, "n/a (allow_hosts is web_fetch's)")
	}
	table = append(table, row)

	// Allowed where the config allows it: the guard is not refusing
	// everything.
	okServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from loopback")
	}))
	t.Cleanup(okServer.Close)
	mcpOK, _ := fakeMCPHTTP(t, "X-Unused", "")
	allowedRow := []string{"loopback, where the config allows it (positive control)"}
	for _, path := range paths {
		var ok bool
		var seen string
		switch path.name {
		case "web_fetch tool":
			r := allowing.call(t, "POST", "/api/tools/web_fetch/call", map[string]string{"url": okServer.URL + "/"})
			ok, seen = strings.Contains(string(r.Body), "hello from loopback"), string(r.Body)
		case "MCP server (http)":
			verdict, s := mcpTry("http", true)(t, mcpOK)
			ok, seen = verdict == "" && s == "connected", s
		case "A2A discover":
			r := p.call(t, "POST", "/api/a2a/discover", map[string]any{"url": p.URL + "/a2a/agents/alpha", "allow_private": true})
			ok, seen = r.Status == http.StatusOK, r.String()
		default:
			allowedRow = append(allowedRow, "n/a")
			continue
		}
		if !ok {
			t.Errorf("%s: an allowed loopback destination failed: %s", path.name, truncate(seen, 300))
			allowedRow = append(allowedRow, "**failed**")
			continue
		}
		allowedRow = append(allowedRow, "allowed")
	}
	table = append(table, allowedRow)

	addTable(areaSSRF, "SSRF matrix (each cell: what the daemon did with the destination)", header, table)
	fig(t, areaSSRF, "Destinations refused", "%d of %d (destination × outbound path) combinations refused by the guard; connections reaching a loopback target: %d",
		refused, total, v4.hits.Load()+func() int32 {
			if v6 != nil {
				return v6.hits.Load()
			}
			return 0
		}())
	for _, s := range skipped {
		fig(t, areaSSRF, "Not covered here", "%s", s)
	}
}

// guardVerdict is the cell of a refusal by the SSRF guard.
func guardVerdict(refused bool) string {
	if refused {
		return "refused"
	}
	return ""
}

// mcpRedirect adds an MCP server at url (a redirector) with
// allow_private and reports whether the redirect was refused: by the
// SSRF guard, or because the client never leaves the configured origin.
func mcpRedirect(t *testing.T, try func(t *testing.T, url string) (string, string), url string) (bool, string) {
	verdict, seen := try(t, url)
	if verdict != "" {
		return true, seen
	}
	low := strings.ToLower(seen)
	return strings.Contains(low, "redirect") && !strings.Contains(low, "connected"), seen
}
