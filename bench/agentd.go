package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Agent names of the bench's agentd config.
const (
	agentInstant = "instant" // answers "ok" at once
	agentLooper  = "looper"  // one tool call, then text
	agentHolder  = "holder"  // never finishes: holds streams open
	// agentProxy is the model-free mcp_proxy agent in front of the
	// "everything" server, when that server is configured.
	agentProxy = "proxy"
)

// AgentdConfig is what a bench agentd instance serves.
type AgentdConfig struct {
	// LLM is the fake model's base URL; empty leaves agents out.
	LLM string
	// Workspace is the looper agent's workspace.
	Workspace string
	// Servers are stdio MCP servers, each running server-everything.
	Servers     []string
	Gateways    []string
	ExposeTools bool
	// PostgresURL, if set, puts the store on this PostgreSQL database
	// ([store] backend = "postgres"), passed in pgURLEnv.
	PostgresURL string
	// TracesURL, if set, exports traces there over OTLP/HTTP, every
	// trace sampled.
	TracesURL string
	// MetricsOff turns metrics off ([metrics] enabled = false); otherwise
	// /metrics is served without a key, for the bench to read.
	MetricsOff bool
	// Env is added to the process's environment (GOMAXPROCS=1).
	Env []string
	// Bin is the agentd binary to run; empty is this checkout's (Env.Agentd).
	Bin string
}

// Agentd is a running agentd.
type Agentd struct {
	Proc *Proc
	URL  string // http://127.0.0.1:PORT
	Home string
	// Config is the config file's path.
	Config string
	// env is added to the process's environment.
	env []string
	// bin is the binary, if not this checkout's.
	bin string
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `"` + r.Replace(s) + `"`
}

func tomlList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = tomlString(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// render writes the config file: loopback, no rate limit (the load
// generators would hit it), quiet logs.
func (c AgentdConfig) render(e *Env, listen string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("listen = %s", tomlString(listen))
	p("log_level = \"warn\"")
	if c.LLM != "" {
		p("default_agent = %s", tomlString(agentInstant))
		p("\n[providers.fake]\nkind = \"openai\"\nbase_url = %s", tomlString(c.LLM))
		agent := func(name, model string, tools []string, ws string) {
			p("\n[[agents]]\nname = %s\nprovider = \"fake\"\nmodel = %s", tomlString(name), tomlString(model))
			if len(tools) > 0 {
				p("tools = %s", tomlList(tools))
			}
			if ws != "" {
				p("workspace = %s", tomlString(ws))
			}
			p("[agents.expose]\na2a = true\nmcp = false")
		}
		agent(agentInstant, modelInstant, nil, "")
		agent(agentLooper, modelTool, []string{toolForLoop}, c.Workspace)
		agent(agentHolder, modelHold, nil, "")
		if slices.Contains(c.Servers, "everything") {
			p("\n[[agents]]\nname = %s\nkind = \"mcp_proxy\"\ntools = [\"mcp_everything_*\"]\nmcp_servers = [\"everything\"]", tomlString(agentProxy))
			p("[agents.expose]\na2a = true")
		}
	}
	for _, name := range c.Servers {
		p("\n[[mcp_servers]]\nname = %s\nallowed_tools = [\"*\"]", tomlString(name))
		p("[mcp_servers.transport]\ntype = \"stdio\"\ncommand = %s\nargs = %s", tomlString(e.Node), tomlList([]string{e.Everything}))
	}
	p("\n[mcp]\nexpose_tools = %t", c.ExposeTools)
	if len(c.Gateways) > 0 {
		p("gateways = %s", tomlList(c.Gateways))
	}
	if c.MetricsOff {
		p("\n[metrics]\nenabled = false")
	} else {
		p("\n[metrics]\npublic = true")
	}
	p("\n[a2a]\nenabled = true")
	p("\n[limits]\nrate_per_sec = 100000000\nburst = 100000000")
	if c.PostgresURL != "" {
		p("\n[store]\nbackend = \"postgres\"\nurl_env = %s", tomlString(pgURLEnv))
	}
	if c.TracesURL != "" {
		p("\n[telemetry]\ntraces_endpoint = %s\nsample_ratio = 1.0", tomlString(c.TracesURL))
	}
	return b.String()
}

// StartAgentd writes a config into a fresh AGENTD_HOME and starts agentd
// on a free loopback port, waiting until /api/health answers.
func (e *Env) StartAgentd(ctx context.Context, name string, c AgentdConfig) (*Agentd, error) {
	home := filepath.Join(e.Tmp, "home-"+name)
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	a := &Agentd{Home: home, Config: filepath.Join(home, "config.toml"), bin: c.Bin}
	if c.PostgresURL != "" {
		a.env = append(a.env, pgURLEnv+"="+c.PostgresURL)
	}
	a.env = append(a.env, c.Env...)
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	listen := fmt.Sprintf("127.0.0.1:%d", port)
	a.URL = "http://" + listen
	if err := os.WriteFile(a.Config, []byte(c.render(e, listen)), 0o600); err != nil {
		return nil, err
	}
	if err := a.start(ctx, e, name); err != nil {
		return nil, err
	}
	return a, nil
}

// start (re)starts the process of an instance whose home and config
// exist and waits until it is healthy.
func (a *Agentd) start(ctx context.Context, e *Env, name string) error {
	bin := a.bin
	if bin == "" {
		var err error
		if bin, err = e.Agentd(ctx); err != nil {
			return err
		}
	}
	p, err := e.Procs.Start(ctx, "agentd-"+name, Spec{
		Path: bin, Args: []string{"start", "--config", a.Config},
		Env: e.NodeEnv(append([]string{"AGENTD_HOME=" + a.Home}, a.env...)...),
	})
	if err != nil {
		return err
	}
	a.Proc = p
	if err := waitHTTP(ctx, e.HTTP, a.URL+"/api/health", p, 30*time.Second); err != nil {
		_ = p.Stop(time.Second)
		return fmt.Errorf("agentd %s: %w", name, err)
	}
	return nil
}

// Stop stops the instance (agentd shuts down its MCP servers itself; the
// process tree is killed after a grace period in any case).
func (a *Agentd) Stop() error { return a.Proc.Stop(5 * time.Second) }

// RSS returns agentd's own resident memory in kB, children excluded.
func (a *Agentd) RSS() (int64, error) { return rssKB(a.Proc.Pid()) }

// WaitMCP waits until n MCP servers are connected.
func (a *Agentd) WaitMCP(ctx context.Context, c *http.Client, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		var st struct {
			Connected int `json:"total_connected"`
		}
		body, code, err := getJSON(ctx, c, a.URL+"/api/mcp/servers", &st)
		if err == nil && code == http.StatusOK && st.Connected >= n {
			return nil
		}
		last = fmt.Sprintf("%d connected, status %d: %s", st.Connected, code, abbreviate(body, 300))
		if a.Proc.Exited() {
			return fmt.Errorf("agentd exited: %s", lastLines(a.Proc.Stderr(), 5))
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d mcp servers not connected after %s (%s)", n, timeout, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// MainAgentd starts, once, the instance scenarios 1, 2, 3 and 5 share:
// the fake model's agents, server-everything as an upstream served
// through a gateway, expose_tools, A2A.
func (e *Env) MainAgentd(ctx context.Context) (*Agentd, error) {
	e.mainOnce.Do(func() {
		e.main, e.mainErr = e.startMain(ctx)
	})
	return e.main, e.mainErr
}

func (e *Env) startMain(ctx context.Context) (*Agentd, error) {
	llm, err := e.FakeLLM(ctx)
	if err != nil {
		return nil, err
	}
	c := AgentdConfig{LLM: llm, Workspace: filepath.Join(e.Tmp, "ws-looper"), ExposeTools: true}
	if e.mainMCPErr = e.NeedNode(); e.mainMCPErr == nil {
		c.Servers = []string{"everything"}
		c.Gateways = []string{"everything"}
	}
	a, err := e.StartAgentd(ctx, "main", c)
	if err != nil {
		return nil, err
	}
	if len(c.Servers) > 0 {
		if err := a.WaitMCP(ctx, e.HTTP, 1, 60*time.Second); err != nil {
			e.mainMCPErr = fmt.Errorf("agentd main: %w", err)
		}
	}
	return a, nil
}

// OneProcAgentd starts, once, an instance configured as the main one but
// run with GOMAXPROCS=1, for scenarios 1 and 3's information rows: on a
// small machine that agentd shares with its MCP servers and its clients,
// the Go scheduler's idle processors spin looking for work on every
// hand-off, and one processor spends less CPU per request. The rows
// show what that setting does here; no target reads them.
func (e *Env) OneProcAgentd(ctx context.Context) (*Agentd, error) {
	e.oneProcOnce.Do(func() {
		e.oneProc, e.oneProcErr = e.startOneProc(ctx)
	})
	return e.oneProc, e.oneProcErr
}

func (e *Env) startOneProc(ctx context.Context) (*Agentd, error) {
	if err := e.NeedNode(); err != nil {
		return nil, err
	}
	llm, err := e.FakeLLM(ctx)
	if err != nil {
		return nil, err
	}
	c := AgentdConfig{LLM: llm, Workspace: filepath.Join(e.Tmp, "ws-looper"), ExposeTools: true,
		Servers: []string{"everything"}, Gateways: []string{"everything"}, Env: []string{"GOMAXPROCS=1"}}
	a, err := e.StartAgentd(ctx, "gomaxprocs1", c)
	if err != nil {
		return nil, err
	}
	if err := a.WaitMCP(ctx, e.HTTP, 1, 60*time.Second); err != nil {
		return nil, fmt.Errorf("agentd gomaxprocs1: %w", err)
	}
	return a, nil
}

// probe POSTs body to url and returns the status code, for telling "not
// served yet" (404) from a working endpoint.
func probe(ctx context.Context, c *http.Client, url, body string, headers ...string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b), nil
}

// getJSON GETs url into v.
func getJSON(ctx context.Context, c *http.Client, url string, v any) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", resp.StatusCode, err
	}
	if resp.StatusCode == http.StatusOK {
		err = json.Unmarshal(b, v)
	}
	return string(b), resp.StatusCode, err
}

func abbreviate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// mcpAvailable tells whether agentd serves MCP at path: the daemon may not
// mount the MCP server edge yet.
func mcpAvailable(ctx context.Context, c *http.Client, a *Agentd, path string) error {
	code, body, err := probe(ctx, c, a.URL+path, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	if err != nil {
		return fmt.Errorf("probe %s: %w", path, err)
	}
	if code == http.StatusNotFound {
		return notAvailable("agentd does not serve %s yet (the daemon does not mount internal/mcpserver): %s", path, abbreviate(body, 120))
	}
	return nil
}

// a2aAvailable tells whether agentd serves agent's A2A endpoint.
func a2aAvailable(ctx context.Context, c *http.Client, a *Agentd, agent string) error {
	var card map[string]any
	_, code, err := getJSON(ctx, c, a.URL+"/a2a/agents/"+agent+"/.well-known/agent-card.json", &card)
	if code == http.StatusNotFound {
		return notAvailable("agentd does not serve /a2a/agents/%s yet (the daemon does not mount internal/a2aedge)", agent)
	}
	if err != nil {
		return fmt.Errorf("get agent card: %w", err)
	}
	return nil
}
