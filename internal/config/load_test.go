package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/manifest"
)

// fakeEnv is a LookupEnv over a fixed map, so tests never see the real
// environment.
func fakeEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// loadString writes body as HOME/config.toml in a fresh home and loads it.
func loadString(t *testing.T, body string) (*Config, error) {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(LoadOptions{Path: path, Home: home, LookupEnv: fakeEnv(nil)})
}

func mustLoad(t *testing.T, body string) *Config {
	t.Helper()
	cfg, err := loadString(t, body)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

// findError returns the problem at line/field, or nil.
func findError(err error, line int, field string) *Error {
	var list ErrorList
	if !errors.As(err, &list) {
		return nil
	}
	for _, e := range list {
		if e.Line == line && e.Field == field {
			return e
		}
	}
	return nil
}

func TestLoadMissingFileGivesDefaults(t *testing.T) {
	home := t.TempDir()
	cfg, err := Load(LoadOptions{Home: home, LookupEnv: fakeEnv(nil)})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if cfg.File != "" {
		t.Errorf("File = %q, want \"\" when there is no file", cfg.File)
	}
	if _, err := os.Stat(filepath.Join(home, "config.toml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("config.toml was written without WriteDefault (stat err %v)", err)
	}
	tru := true
	checks := []struct {
		name      string
		got, want any
	}{
		{"Home", cfg.Home, home},
		{"Listen", cfg.Listen, "127.0.0.1:4200"},
		{"LogLevel", cfg.LogLevel, "info"},
		{"AgentsDir", cfg.AgentsDir, filepath.Join(home, "agents")},
		{"providers", sortedStringKeys(cfg.Providers), []string{"anthropic", "gemini", "ollama", "openai"}},
		{"openai", cfg.Providers["openai"], Provider{Kind: "openai", APIKeyEnv: "OPENAI_API_KEY", MaxRetries: 3, TimeoutSecs: 300}},
		{"anthropic", cfg.Providers["anthropic"], Provider{Kind: "anthropic", APIKeyEnv: "ANTHROPIC_API_KEY", MaxRetries: 3, TimeoutSecs: 300}},
		{"gemini", cfg.Providers["gemini"], Provider{Kind: "gemini", APIKeyEnv: "GEMINI_API_KEY", MaxRetries: 3, TimeoutSecs: 300}},
		{"ollama", cfg.Providers["ollama"], Provider{Kind: "openai", BaseURL: "http://127.0.0.1:11434/v1", MaxRetries: 3, TimeoutSecs: 300}},
		{"MCP.Path", cfg.MCP.Path, "/mcp"},
		{"A2A.Enabled", cfg.A2A.Enabled, false},
		{"A2A.ListenPath", cfg.A2A.ListenPath, "/a2a"},
		{"A2A.MaxTasks", cfg.A2A.MaxTasks, 1000},
		{"A2A.PublicCard", cfg.A2A.PublicCard, &tru},
		{"ACP.Name", cfg.ACP.Name, "agentd"},
		{"ACP.UserTrust", cfg.ACP.UserTrust, "trusted"},
		{"Tools.TimeoutSecs", cfg.Tools.TimeoutSecs, 60},
		{"Tools.MaxResultChars", cfg.Tools.MaxResultChars, 50000},
		{"Tools.MaxResultImageBytes", cfg.Tools.MaxResultImageBytes, 5 << 20},
		{"Tools.LoopGuard", cfg.Tools.LoopGuard, 3},
		{"Tools.Untrusted", cfg.Tools.Untrusted, map[string]string{"shell_exec": "ask", "file_write": "ask"}},
		{"Tools.WebFetch.MaxBytes", cfg.Tools.WebFetch.MaxBytes, 2 << 20},
		{"Tools.Shell.TimeoutSecs", cfg.Tools.Shell.TimeoutSecs, 30},
		{"Tools.Shell.MaxOutputBytes", cfg.Tools.Shell.MaxOutputBytes, 64 << 10},
		{"Tools.AgentSendMax", cfg.Tools.AgentSendMax, 3},
		{"Limits.RatePerSec", cfg.Limits.RatePerSec, 50.0},
		{"Limits.Burst", cfg.Limits.Burst, 100},
		{"Limits.MaxBodyBytes", cfg.Limits.MaxBodyBytes, int64(10 << 20)},
		{"Limits.ReadTimeoutSec", cfg.Limits.ReadTimeoutSec, 30},
		{"Limits.IdleTimeoutSec", cfg.Limits.IdleTimeoutSec, 120},
		{"StorePath", cfg.StorePath(), filepath.Join(home, "agentd.db")},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestLoadExplicitMissingPathFails(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.toml")
	_, err := Load(LoadOptions{Path: missing, Home: t.TempDir(), LookupEnv: fakeEnv(nil), WriteDefault: true})
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("Load(missing --config) = %v, want a not-exist error naming %s", err, missing)
	}
	if _, statErr := os.Stat(missing); !errors.Is(statErr, fs.ErrNotExist) {
		t.Error("WriteDefault wrote a file for an explicit --config path")
	}
}

func TestWriteDefault(t *testing.T) {
	home := filepath.Join(t.TempDir(), "new-home")
	opts := LoadOptions{Home: home, LookupEnv: fakeEnv(nil), WriteDefault: true}
	cfg, err := Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	path := filepath.Join(home, "config.toml")
	if cfg.File != path {
		t.Errorf("File = %q, want %q", cfg.File, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(DefaultFile()) {
		t.Error("written file differs from DefaultFile()")
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(path)
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("config.toml mode = %o, want 600", perm)
		}
		di, _ := os.Stat(home)
		if perm := di.Mode().Perm(); perm != 0o700 {
			t.Errorf("home mode = %o, want 700", perm)
		}
	}
	if len(cfg.Agents) != 1 || cfg.Agents[0].Name != "assistant" {
		t.Errorf("agents = %+v, want the default assistant", cfg.Agents)
	}

	// An existing file is read, never overwritten.
	if err := os.WriteFile(path, []byte("log_level = \"debug\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(opts)
	if err != nil {
		t.Fatalf("second Load: %v", err)
	}
	if cfg.LogLevel != "debug" || len(cfg.Agents) != 0 {
		t.Errorf("second Load did not read the edited file: log_level %q, %d agents", cfg.LogLevel, len(cfg.Agents))
	}
}

func TestDefaultFileLoads(t *testing.T) {
	cfg := mustLoad(t, string(DefaultFile()))
	if len(cfg.Agents) != 1 {
		t.Fatalf("default file defines %d agents, want 1", len(cfg.Agents))
	}
	a := cfg.Agents[0]
	if a.Name != "assistant" || a.Provider != "openai" || a.Model != "gpt-4.1-mini" {
		t.Errorf("assistant = %s/%s/%s", a.Name, a.Provider, a.Model)
	}
	if want := []string{"file_*", "web_fetch", "memory_*", "agent_*", "mcp_*"}; !slices.Equal(a.Tools, want) {
		t.Errorf("assistant tools = %v, want %v", a.Tools, want)
	}
	if !a.Expose.MCP || !a.Expose.A2A {
		t.Errorf("assistant expose = %+v, want mcp and a2a", a.Expose)
	}
	if len(a.Skills) != 1 || a.Skills[0].ID == "" || len(a.Skills[0].Examples) == 0 {
		t.Errorf("assistant skills = %+v, want one skill with examples", a.Skills)
	}
	if !strings.Contains(a.SystemPrompt, "data, not instructions") {
		t.Error("assistant system prompt lacks the untrusted-content rule")
	}
	if !cfg.A2A.Enabled {
		t.Error("[a2a] enabled is not true in the default file")
	}
	if len(cfg.MCPServers) != 0 || len(cfg.A2A.ExternalAgents) != 0 {
		t.Error("the default file's example blocks must stay commented out")
	}
	if _, ok := cfg.Providers["ollama"]; !ok {
		t.Error("the default file must keep the default providers")
	}
}

// TestDefaultFileExamplesLoad uncomments the example blocks of the
// default file so that the examples users copy stay valid.
func TestDefaultFileExamplesLoad(t *testing.T) {
	var b strings.Builder
	inExample := false
	for line := range strings.SplitSeq(string(DefaultFile()), "\n") {
		if strings.HasPrefix(line, "# [[mcp_servers]]") || strings.HasPrefix(line, "# [[a2a.external_agents]]") {
			inExample = true
		}
		if inExample && (line == "" || strings.HasPrefix(line, "# ---")) {
			inExample = false
		}
		if inExample && strings.HasPrefix(line, "# ") && !strings.HasPrefix(line, "# # ") {
			body := strings.TrimPrefix(line, "# ")
			if !strings.HasPrefix(body, "A ") && !strings.HasPrefix(body, "HTTP") && !strings.HasPrefix(body, "variables") && !strings.HasPrefix(body, "Remote") {
				line = body
			}
		}
		b.WriteString(line + "\n")
	}
	cfg, err := loadString(t, b.String())
	if err != nil {
		t.Fatalf("uncommented default file: %v\n%s", err, b.String())
	}
	var names []string
	for _, s := range cfg.MCPServers {
		names = append(names, s.Name)
	}
	if want := []string{"everything", "github", "remote-tools", "linear"}; !slices.Equal(names, want) {
		t.Errorf("example servers = %v, want %v", names, want)
	}
	if o := cfg.MCPServers[3].OAuth; o == nil {
		t.Error("the OAuth example lost its [mcp_servers.oauth] table")
	}
	if len(cfg.A2A.ExternalAgents) != 1 {
		t.Errorf("example external agents = %d, want 1", len(cfg.A2A.ExternalAgents))
	}
}

func TestSeedBlocksLoadVerbatim(t *testing.T) {
	type check func(t *testing.T, c *Config)
	server := func(name, typ, cmdOrURL string, timeout int, env ...string) check {
		return func(t *testing.T, c *Config) {
			for _, s := range c.MCPServers {
				if s.Name != name {
					continue
				}
				if s.Transport.Type != typ || (s.Transport.Command != cmdOrURL && s.Transport.URL != cmdOrURL) {
					t.Errorf("%s transport = %+v", name, s.Transport)
				}
				if s.TimeoutSecs != timeout {
					t.Errorf("%s timeout_secs = %d, want %d", name, s.TimeoutSecs, timeout)
				}
				if len(env) > 0 && !slices.Equal(s.Env, env) {
					t.Errorf("%s env = %v, want %v", name, s.Env, env)
				}
				return
			}
			t.Errorf("server %q missing", name)
		}
	}
	tests := []struct {
		file   string
		checks []check
	}{
		{"openfang_github.toml", []check{server("github", "stdio", "npx", 30, "GITHUB_PERSONAL_ACCESS_TOKEN")}},
		{"openfang_filesystem.toml", []check{server("filesystem", "stdio", "npx", 10), func(t *testing.T, c *Config) {
			if s := c.MCPServers[0]; s.Env == nil || len(s.Env) != 0 || len(s.Transport.Args) != 3 {
				t.Errorf("filesystem env/args = %#v / %#v", s.Env, s.Transport.Args)
			}
		}}},
		{"openfang_postgres.toml", []check{server("postgres", "stdio", "npx", 30, "DATABASE_URL")}},
		{"openfang_puppeteer.toml", []check{server("puppeteer", "stdio", "npx", 60)}},
		{"openfang_remote_sse.toml", []check{server("remote-tools", "sse", "https://tools.example.com/mcp", 30)}},
		{"openfang_multiple.toml", []check{
			server("github", "stdio", "npx", 30, "GITHUB_PERSONAL_ACCESS_TOKEN"),
			server("filesystem", "stdio", "npx", 30),
			server("postgres", "stdio", "npx", 30, "DATABASE_URL"),
		}},
		{"openfang_a2a.toml", []check{func(t *testing.T, c *Config) {
			want := []ExternalAgent{{Name: "research-agent", URL: "https://research.example.com"}, {Name: "data-analyst", URL: "https://data.example.com"}}
			if !c.A2A.Enabled || c.A2A.ListenPath != "/a2a" || !reflect.DeepEqual(c.A2A.ExternalAgents, want) {
				t.Errorf("a2a = %+v", c.A2A)
			}
		}}},
		{"headless_acp.toml", []check{func(t *testing.T, c *Config) {
			if c.ACP.Name != "headless-agent" || c.ACP.Version != "0.4.0" {
				t.Errorf("acp = %+v", c.ACP)
			}
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "seeds", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			cfg := mustLoad(t, string(data))
			for _, c := range tt.checks {
				c(t, cfg)
			}
		})
	}
}

// The headless agent's [[mcp.servers]] dialect is not accepted, but the
// error points at the equivalent block.
func TestHeadlessMCPServersDialectExplained(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "seeds", "headless_mcp_servers.toml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = loadString(t, string(data))
	e := findError(err, 1, "mcp.servers")
	if e == nil || !strings.Contains(e.Msg, "[[mcp_servers]]") {
		t.Fatalf("err = %v, want config.toml:1: mcp.servers with a [[mcp_servers]] hint", err)
	}
}

func TestAllowedTools(t *testing.T) {
	base := `
[[mcp_servers]]
name = "db"
%s
[mcp_servers.transport]
type = "stdio"
command = "mcp-server-postgres"
`
	tests := []struct {
		name    string
		line    string
		wantNil bool
		want    []string
	}{
		{"absent means every tool", "", true, nil},
		{"empty means none", "allowed_tools = []", false, []string{}},
		{"listed", `allowed_tools = ["query", "list_*"]`, false, []string{"query", "list_*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustLoad(t, strings.Replace(base, "%s", tt.line, 1))
			got := cfg.MCPServers[0].AllowedTools
			if (got == nil) != tt.wantNil {
				t.Fatalf("AllowedTools nil = %v, want %v", got == nil, tt.wantNil)
			}
			if got != nil && !slices.Equal(*got, tt.want) {
				t.Errorf("AllowedTools = %v, want %v", *got, tt.want)
			}
		})
	}
}

func TestGoodConfigs(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		check func(t *testing.T, c *Config)
	}{
		{"empty", "", func(t *testing.T, c *Config) {
			if c.Listen != DefaultListen || len(c.Providers) != 4 {
				t.Errorf("defaults not applied: %+v", c)
			}
			if c.Store != (Store{Backend: BackendSQLite}) {
				t.Errorf("store = %+v, want sqlite without url_env", c.Store)
			}
			if c.Cluster != (Cluster{}) {
				t.Errorf("cluster = %+v, want nothing without postgres", c.Cluster)
			}
		}},
		{"postgres store takes the default url_env", "[store]\nbackend = \"postgres\"\n", func(t *testing.T, c *Config) {
			if c.Store != (Store{Backend: BackendPostgres, URLEnv: "AGENTD_POSTGRES_URL"}) {
				t.Errorf("store = %+v", c.Store)
			}
			if c.Cluster != (Cluster{HeartbeatSecs: 5, LeaseSecs: 15}) {
				t.Errorf("cluster = %+v, want the default heartbeat and lease", c.Cluster)
			}
		}},
		{"cluster lease follows a long heartbeat", "[store]\nbackend = \"postgres\"\n[cluster]\nheartbeat_secs = 10\nsession_key_env = \"K\"\n", func(t *testing.T, c *Config) {
			if c.Cluster != (Cluster{HeartbeatSecs: 10, LeaseSecs: 20, SessionKeyEnv: "K"}) {
				t.Errorf("cluster = %+v", c.Cluster)
			}
		}},
		{"postgres store with its own variable", "[store]\nbackend = \"postgres\"\nurl_env = \"TEAM_DB_URL\"\n", func(t *testing.T, c *Config) {
			if c.Store.URLEnv != "TEAM_DB_URL" {
				t.Errorf("store = %+v", c.Store)
			}
		}},
		{"provider kind from name; one provider replaces defaults", `
[providers.anthropic]
api_key_env = "MY_ANTHROPIC"
max_retries = 5
`, func(t *testing.T, c *Config) {
			want := map[string]Provider{"anthropic": {Kind: "anthropic", APIKeyEnv: "MY_ANTHROPIC", MaxRetries: 5, TimeoutSecs: 300}}
			if !reflect.DeepEqual(c.Providers, want) {
				t.Errorf("providers = %+v", c.Providers)
			}
		}},
		{"custom openai-compatible provider and agent", `
default_agent = "local"
[providers.vllm]
kind = "openai"
base_url = "http://10.0.0.5:8000/v1"

[[agents]]
name = "local"
provider = "vllm"
model = "qwen3"
temperature = 0
tools = ["file_read", "mcp_db_*"]
mcp_servers = ["db"]
workspace = "projects/local"

[[mcp_servers]]
name = "db"
headers = { Authorization = "Bearer ${DB_TOKEN}", X-Client = "agentd" }
[mcp_servers.transport]
type = "http"
url = "https://db.example.com/mcp"
`, func(t *testing.T, c *Config) {
			a := c.Agents[0]
			if a.Temperature == nil || *a.Temperature != 0 {
				t.Errorf("temperature = %v, want explicit 0", a.Temperature)
			}
			if got := c.WorkspaceDir(a.Name, a); got != filepath.Join(c.Home, "workspaces", "projects", "local") {
				t.Errorf("WorkspaceDir = %q", got)
			}
			if c.MCPServers[0].TimeoutSecs != 30 {
				t.Errorf("mcp timeout default = %d", c.MCPServers[0].TimeoutSecs)
			}
		}},
		{"inline array of agents and untrusted merge", `
agents = [{ name = "a", provider = "openai", model = "m", expose = { a2a = true } }]
[tools.untrusted]
"mcp_*" = "deny"
shell_exec = "deny"
`, func(t *testing.T, c *Config) {
			want := map[string]string{"mcp_*": "deny", "shell_exec": "deny", "file_write": "ask"}
			if !reflect.DeepEqual(c.Tools.Untrusted, want) {
				t.Errorf("untrusted = %v, want %v", c.Tools.Untrusted, want)
			}
			if !c.Agents[0].Expose.A2A {
				t.Error("inline expose not decoded")
			}
		}},
		{"literal api key", `api_key = "s3cr3t-literal"`, func(t *testing.T, c *Config) {
			if c.APIKeyValue() != "s3cr3t-literal" {
				t.Error("literal api_key not returned by APIKeyValue")
			}
		}},
		{"mcp proxy agent needs no provider", `
[[agents]]
name = "proxy"
kind = "mcp_proxy"
`, nil},
		{"disabled server and gateway", `
[mcp]
gateways = ["fs"]
expose_tools = true
allowed_origins = ["https://app.example.com"]
[[mcp_servers]]
name = "fs"
enabled = false
[mcp_servers.transport]
type = "stdio"
command = "/usr/local/bin/mcp-fs"
args = ["/srv"]
`, func(t *testing.T, c *Config) {
			if c.MCPServerEnabled(c.MCPServers[0]) {
				t.Error("enabled = false server reported enabled")
			}
		}},
		{"every table", `
listen = "[::1]:9000"
api_key_env = "AGENTD_KEY"
public_url = "https://agents.example.com/base"
log_level = "debug"
agents_dir = "/tmp/does-not-exist-agentd-test"
[a2a]
enabled = true
listen_path = "/agents/a2a"
public_card = false
max_tasks = 10
[acp]
user_trust = "untrusted"
auth_token_env = "ACP_TOKEN"
[tools]
timeout_secs = 5
timeouts = { web_fetch = 10, "mcp_*" = 120 }
loop_guard = 5
agent_send_max_depth = 1
[tools.web_fetch]
allow_private = true
allow_hosts = ["intranet.local"]
max_bytes = 1024
[tools.shell]
timeout_secs = 3
max_output_bytes = 100
[limits]
rate_per_sec = 2.5
burst = 5
max_body_bytes = 1000
read_timeout_secs = 3
idle_timeout_secs = 4
`, func(t *testing.T, c *Config) {
			if c.Listen != "[::1]:9000" || *c.A2A.PublicCard || c.Limits.RatePerSec != 2.5 || c.Tools.Timeouts["mcp_*"] != 120 || c.AgentsDir != "/tmp/does-not-exist-agentd-test" {
				t.Errorf("values not decoded: %+v", c)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustLoad(t, tt.body)
			if err := cfg.Validate(); err != nil {
				t.Errorf("loaded config fails Validate: %v", err)
			}
			if tt.check != nil {
				tt.check(t, cfg)
			}
		})
	}
}

func TestBadConfigs(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		line  int
		field string
		msg   string
	}{
		{"unknown top-level key", "listne = \"x\"\n", 1, "listne", "valid keys here: listen, api_key"},
		{"keys are case-sensitive", "Listen = \"127.0.0.1:1\"\n", 1, "Listen", "did you mean listen?"},
		{"unknown key in second server's transport", `
[[mcp_servers]]
name = "a"
[mcp_servers.transport]
type = "stdio"
command = "a"

[[mcp_servers]]
name = "b"
[mcp_servers.transport]
type = "stdio"
command = "b"
cwd = "/tmp"
`, 13, "mcp_servers[1].transport.cwd", "valid keys here: type, command, args, dir, url"},
		{"command outside transport", `
[[mcp_servers]]
name = "a"
command = "x"
`, 4, "mcp_servers[0].command", "belongs in the [mcp_servers.transport] table"},
		{"wrong type", `
[[mcp_servers]]
name = "a"
timeout_secs = "30"
`, 4, "mcp_servers[0].timeout_secs", "expected an integer, got a string"},
		{"table where a value belongs", "[listen]\nx = 1\n", 1, "listen", "expected a string, got a table"},
		{"invalid TOML", "a = 1\nb = \n", 2, "", "invalid TOML"},
		{"bad listen", `listen = "localhost"`, 1, "listen", `"localhost" is not host:port`},
		{"bad log level", "\nlog_level = \"verbose\"", 2, "log_level", `"verbose" is not one of debug, info, warn, error`},
		{"both api keys", "api_key = \"x\"\napi_key_env = \"X\"\n", 1, "api_key", "both set"},
		{"placeholder api key", `api_key = "[redacted]"`, 1, "api_key", "placeholder"},
		{"public url with credentials", `public_url = "https://u:p@example.com"`, 1, "public_url", "credentials"},
		{"default agent unknown", `default_agent = "ghost"`, 1, "default_agent", `"ghost" is not a configured agent`},
		{"transport type (issue example)", `# line 1
# 2
# 3
[[mcp_servers]]
name = "ok"
[mcp_servers.transport]
type = "stdio"
command = "npx"

[[mcp_servers]]
name = "ws"
timeout_secs = 5
[mcp_servers.transport]
type = "websocket"
url = "ws://localhost:1"
`, 14, "mcp_servers[1].transport.type", `"websocket" is not one of stdio, sse, http`},
		{"transport type missing", "[[mcp_servers]]\nname = \"a\"\n[mcp_servers.transport]\ncommand = \"x\"\n", 3, "mcp_servers[0].transport.type", "required: one of stdio, sse, http"},
		{"stdio without command", "[[mcp_servers]]\nname = \"a\"\ntransport = { type = \"stdio\" }\n", 3, "mcp_servers[0].transport.command", "required for the stdio transport"},
		{"dot-dot command", "[[mcp_servers]]\nname = \"a\"\n[mcp_servers.transport]\ntype = \"stdio\"\ncommand = \"bin/../../x\"\n", 5, "mcp_servers[0].transport.command", `".." path segments`},
		{"http without url", "[[mcp_servers]]\nname = \"a\"\n[mcp_servers.transport]\ntype = \"http\"\n", 3, "mcp_servers[0].transport.url", "required for the http transport"},
		{"sse with ftp url", "[[mcp_servers]]\nname = \"a\"\n[mcp_servers.transport]\ntype = \"sse\"\nurl = \"ftp://x\"\n", 5, "mcp_servers[0].transport.url", "http:// or https://"},
		{"http with command", "[[mcp_servers]]\nname = \"a\"\n[mcp_servers.transport]\ntype = \"http\"\nurl = \"http://h/mcp\"\ncommand = \"x\"\n", 6, "mcp_servers[0].transport.command", "not used by the http transport"},
		{"bad server name", "[[mcp_servers]]\nname = \"a b\"\ntransport = { type = \"stdio\", command = \"x\" }\n", 2, "mcp_servers[0].name", "not a valid server name"},
		{"duplicate server", "[[mcp_servers]]\nname = \"a\"\ntransport = { type = \"stdio\", command = \"x\" }\n[[mcp_servers]]\nname = \"a\"\ntransport = { type = \"stdio\", command = \"x\" }\n", 5, "mcp_servers[1].name", "already used by mcp_servers[0]"},
		{"colliding server names", "[[mcp_servers]]\nname = \"my-db\"\ntransport = { type = \"stdio\", command = \"x\" }\n[[mcp_servers]]\nname = \"my_db\"\ntransport = { type = \"stdio\", command = \"x\" }\n", 5, "mcp_servers[1].name", "collides"},
		{"bad env name", "[[mcp_servers]]\nname = \"a\"\nenv = [\"OK\", \"1BAD\"]\ntransport = { type = \"stdio\", command = \"x\" }\n", 3, "mcp_servers[0].env[1]", "must name an environment variable"},
		{"headers on stdio", "[[mcp_servers]]\nname = \"a\"\nheaders = { X-A = \"b\" }\ntransport = { type = \"stdio\", command = \"x\" }\n", 3, "mcp_servers[0].headers", "only the http and sse transports"},
		{"literal authorization header", "[[mcp_servers]]\nname = \"a\"\ntransport = { type = \"http\", url = \"https://h\" }\n[mcp_servers.headers]\nAuthorization = \"Bearer abc\"\n", 5, "mcp_servers[0].headers.Authorization", "literal secrets are not allowed"},
		{"bad allowed_tools pattern", "[[mcp_servers]]\nname = \"a\"\nallowed_tools = [\n  \"ok\",\n  \"[\",\n]\ntransport = { type = \"stdio\", command = \"x\" }\n", 5, "mcp_servers[0].allowed_tools[1]", "not a valid pattern"},
		{"provider kind", "[providers.local]\nbase_url = \"http://127.0.0.1:1/v1\"\n[providers.x]\nkind = \"mistral\"\n", 4, "providers.x.kind", `"mistral" is not one of openai, anthropic, gemini`},
		{"provider kind required", "[providers.local]\nbase_url = \"http://127.0.0.1:1/v1\"\n", 1, "providers.local.kind", "required"},
		{"provider literal key", "[providers.openai]\napi_key = \"sk\"\n", 2, "providers.openai.api_key", "api_key_env"},
		{"agent unknown provider", "[[agents]]\nname = \"a\"\nprovider = \"nope\"\nmodel = \"m\"\n", 3, "agents[0].provider", `"nope" is not a configured provider`},
		{"agent missing model", "[[agents]]\nname = \"a\"\nprovider = \"openai\"\n", 1, "agents[0].model", "required"},
		{"agent bad kind", "[[agents]]\nname = \"a\"\nkind = \"robot\"\n", 3, "agents[0].kind", `"robot" is not one of llm, mcp_proxy`},
		{"agent unknown mcp server", "[[agents]]\nname = \"a\"\nprovider = \"openai\"\nmodel = \"m\"\nmcp_servers = [\"ghost\"]\n", 5, "agents[0].mcp_servers[0]", "not the name of an [[mcp_servers]] entry"},
		{"agent temperature", "[[agents]]\nname = \"a\"\nprovider = \"openai\"\nmodel = \"m\"\ntemperature = 3.5\n", 5, "agents[0].temperature", "outside 0..2"},
		{"oauth on sse", "[[mcp_servers]]\nname = \"s\"\n[mcp_servers.transport]\ntype = \"sse\"\nurl = \"https://x.example/sse\"\n[mcp_servers.oauth]\n", 6, "mcp_servers[0].oauth", "only supported for the http transport"},
		{"oauth metadata url not https", "[[mcp_servers]]\nname = \"s\"\n[mcp_servers.transport]\ntype = \"http\"\nurl = \"https://x.example/mcp\"\n[mcp_servers.oauth]\nclient_metadata_url = \"http://x.example/c.json\"\n", 7, "mcp_servers[0].oauth.client_metadata_url", "not an https URL"},
		{"oauth secret without client", "[[mcp_servers]]\nname = \"s\"\n[mcp_servers.transport]\ntype = \"http\"\nurl = \"https://x.example/mcp\"\n[mcp_servers.oauth]\nclient_secret_env = \"SECRET\"\n", 6, "mcp_servers[0].oauth.client_id", "required with client_secret_env"},
		{"agent reasoning", "[[agents]]\nname = \"a\"\nprovider = \"openai\"\nmodel = \"m\"\nreasoning = \"max\"\n", 5, "agents[0].reasoning", `"max" is not one of`},
		{"agent skill without id", "[[agents]]\nname = \"a\"\nprovider = \"openai\"\nmodel = \"m\"\n[[agents.skills]]\nname = \"S\"\n", 5, "agents[0].skills[0].id", "required"},
		{"agent workspace escapes", "[[agents]]\nname = \"a\"\nprovider = \"openai\"\nmodel = \"m\"\nworkspace = \"../x\"\n", 5, "agents[0].workspace", "leaves AGENTD_HOME/workspaces"},
		{"agent unknown key in expose", "[[agents]]\nname = \"a\"\n[agents.expose]\nacp = true\n", 4, "agents[0].expose.acp", "valid keys here: mcp, a2a"},
		{"duplicate agents", "[[agents]]\nname = \"a\"\nkind = \"mcp_proxy\"\n[[agents]]\nname = \"a\"\nkind = \"mcp_proxy\"\n", 5, "agents[1].name", `agent "a" is already defined at `},
		{"inline agent", "agents = [{ name = \"a\", provider = \"nope\", model = \"m\" }]\n", 1, "agents[0].provider", "not a configured provider"},
		{"a2a external agent url", "[a2a]\nenabled = true\n[[a2a.external_agents]]\nname = \"r\"\n", 3, "a2a.external_agents[0].url", "required"},
		{"a2a external agent name", "[[a2a.external_agents]]\nname = \"\"\nurl = \"https://x\"\n", 2, "a2a.external_agents[0].name", "not a valid name"},
		{"a2a path", "[a2a]\nlisten_path = \"a2a\"\n", 2, "a2a.listen_path", "not a clean path"},
		{"mcp path reserved", "[mcp]\npath = \"/api/mcp\"\n", 2, "mcp.path", "reserved"},
		{"gateway unknown", "[mcp]\ngateways = [\"fs\"]\n", 2, "mcp.gateways[0]", "not the name of an [[mcp_servers]] entry"},
		{"acp user_trust", "[acp]\nuser_trust = \"sometimes\"\n", 2, "acp.user_trust", `"sometimes" is not one of trusted, untrusted`},
		{"untrusted value", "[tools.untrusted]\nshell_exec = \"maybe\"\n", 2, "tools.untrusted.shell_exec", `"maybe" is not one of allow, ask, deny`},
		{"untrusted quoted pattern", "[tools]\nuntrusted = { \"mcp_*\" = \"nope\" }\n", 2, `tools.untrusted."mcp_*"`, "not one of allow, ask, deny"},
		{"negative timeout", "[tools]\ntimeouts = { web_fetch = -1 }\n", 2, "tools.timeouts.web_fetch", "positive"},
		{"negative burst", "[limits]\nburst = -1\n", 2, "limits.burst", "must not be negative"},
		{"int out of range for float", "[limits]\nrate_per_sec = 9007199254740993\n", 2, "limits.rate_per_sec", "too large"},
		{"special float", "[limits]\nrate_per_sec = inf\n", 2, "limits.rate_per_sec", "non-negative number"},
		{"web_fetch host is a url", "[tools.web_fetch]\nallow_hosts = [\"https://x\"]\n", 2, "tools.web_fetch.allow_hosts[0]", "not a host name"},
		{"date where a string belongs", "listen = 1979-05-27\n", 1, "listen", "got a date-time"},
		{"principal without credential", "[[principals]]\nname = \"bot\"\nagents = [\"*\"]\n", 1, "principals[0]", "needs a credential"},
		{"principal two credentials", "[[principals]]\nname = \"bot\"\nkey_env = \"K\"\nkey_sha256 = \"" + strings.Repeat("a", 64) + "\"\n", 4, "principals[0].key_sha256", "both set"},
		{"principal bad hash", "[[principals]]\nname = \"bot\"\nkey_sha256 = \"my-secret-key\"\n", 3, "principals[0].key_sha256", "64 hex digits"},
		{"principal bad env", "[[principals]]\nname = \"bot\"\nkey_env = \"1X\"\n", 3, "principals[0].key_env", "must name an environment variable"},
		{"principal named admin with api_key", "api_key_env = \"K\"\n[[principals]]\nname = \"admin\"\nkey_env = \"K2\"\n", 3, "principals[0].name", "principal of the top-level api_key"},
		{"principal duplicate", "[[principals]]\nname = \"a\"\nkey_env = \"K\"\n[[principals]]\nname = \"a\"\nkey_env = \"K2\"\n", 5, "principals[1].name", "already used by principals[0]"},
		{"unknown store backend", "\n[store]\nbackend = \"mysql\"\n", 3, "store.backend", `"mysql" is not one of sqlite, postgres`},
		{"store url_env not a name", "[store]\nbackend = \"postgres\"\nurl_env = \"postgres://h/db\"\n", 3, "store.url_env", "must name an environment variable"},
		{"store url_env without postgres", "[store]\nurl_env = \"AGENTD_POSTGRES_URL\"\n", 2, "store.url_env", `only used with backend = "postgres"`},
		{"store literal url", "[store]\nbackend = \"postgres\"\nurl = \"postgres://h/db\"\n", 3, "store.url", "url_env = \"AGENTD_POSTGRES_URL\""},
		{"cluster without postgres", "[cluster]\nlease_secs = 30\n", 1, "cluster", `only used with [store] backend = "postgres"`},
		{"cluster lease too short", "[store]\nbackend = \"postgres\"\n[cluster]\nheartbeat_secs = 5\nlease_secs = 6\n", 5, "cluster.lease_secs", "at least twice heartbeat_secs (5)"},
		{"cluster heartbeat negative", "[store]\nbackend = \"postgres\"\n[cluster]\nheartbeat_secs = -1\n", 4, "cluster.heartbeat_secs", "at least 1"},
		{"cluster session key not a name", "[store]\nbackend = \"postgres\"\n[cluster]\nsession_key_env = \"abc def\"\n", 4, "cluster.session_key_env", "must name an environment variable"},
		{"principal bad glob", "[[principals]]\nname = \"a\"\nkey_env = \"K\"\ntools = [\"ok\", \"[\"]\n", 4, "principals[0].tools[1]", "not a valid glob"},
		{"principal bad a2a_agents glob", "[[principals]]\nname = \"a\"\nkey_env = \"K\"\na2a_agents = [\"[\"]\n", 4, "principals[0].a2a_agents[0]", "not a valid glob"},
		{"oauth subject without oauth", "[[principals]]\nname = \"a\"\nkey_env = \"K\"\noauth_subjects = [\"x\"]\n", 4, "principals[0].oauth_subjects[0]", "needs [auth.oauth]"},
		{"oauth subject reserved", "[auth.oauth]\nissuer = \"https://id.example\"\n[[principals]]\nname = \"a\"\noauth_subjects = [\"admin\"]\n", 5, "principals[0].oauth_subjects[0]", "reserved"},
		{"oauth subjects of admin", "[auth.oauth]\nissuer = \"https://id.example\"\n[[principals]]\nname = \"admin\"\noauth_subjects = [\"x\"]\n", 5, "principals[0].oauth_subjects", "reserved name"},
		{"oauth subject twice", "[auth.oauth]\nissuer = \"https://id.example\"\n[[principals]]\nname = \"a\"\noauth_subjects = [\"x\"]\n[[principals]]\nname = \"b\"\noauth_subjects = [\"x\"]\n", 8, "principals[1].oauth_subjects[0]", "already mapped to principals[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadString(t, tt.body)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			e := findError(err, tt.line, tt.field)
			if e == nil {
				t.Fatalf("no error at line %d field %q; got:\n%v", tt.line, tt.field, err)
			}
			if !strings.Contains(e.Msg, tt.msg) {
				t.Errorf("message %q does not contain %q", e.Msg, tt.msg)
			}
			wantPrefix := "config.toml:" + strconv.Itoa(tt.line) + ": "
			if tt.field != "" {
				wantPrefix += tt.field + ": "
			}
			if !strings.Contains(err.Error(), wantPrefix) || !filepath.IsAbs(e.File) {
				t.Errorf("error %q lacks %q with an absolute file", err.Error(), wantPrefix)
			}
		})
	}
}

func TestIssueExampleFormat(t *testing.T) {
	body := strings.Repeat("\n", 10) + "[[mcp_servers]]\nname = \"x\"\n[mcp_servers.transport]\ntype = \"websocket\"\n"
	_, err := loadString(t, body)
	const want = `config.toml:14: mcp_servers[0].transport.type: "websocket" is not one of stdio, sse, http`
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("err = %v, want suffix %q", err, want)
	}
}

func TestAllProblemsReportedInLineOrder(t *testing.T) {
	_, err := loadString(t, "log_level = \"x\"\nlisten = \"y\"\n[acp]\nuser_trust = \"z\"\n")
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 3 {
		t.Fatalf("err = %v, want 3 problems", err)
	}
	for i, want := range []int{1, 2, 4} {
		if list[i].Line != want {
			t.Errorf("problem %d at line %d, want %d", i, list[i].Line, want)
		}
	}
}

func TestAgentsDir(t *testing.T) {
	writeHome := func(t *testing.T, config string, files map[string]string) string {
		t.Helper()
		home := t.TempDir()
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(home, "agents"), 0o700); err != nil {
			t.Fatal(err)
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(home, "agents", name), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return home
	}
	const inConfig = "[[agents]]\nname = \"main\"\nprovider = \"openai\"\nmodel = \"m\"\n"

	t.Run("loads toml files in name order", func(t *testing.T) {
		home := writeHome(t, inConfig+"[[mcp_servers]]\nname = \"db\"\ntransport = { type = \"stdio\", command = \"x\" }\n", map[string]string{
			"b.toml":      "name = \"bee\"\nprovider = \"anthropic\"\nmodel = \"claude\"\nmcp_servers = [\"db\"]\n",
			"a.toml":      "name = \"ant\"\nkind = \"mcp_proxy\"\n[expose]\na2a = true\n",
			"notes.txt":   "not toml",
			".tmp.toml":   "garbage =",
			"README.md":   "# agents",
			"c.toml.orig": "garbage =",
		})
		cfg, err := Load(LoadOptions{Home: home, LookupEnv: fakeEnv(nil)})
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		var names []string
		for _, a := range cfg.Agents {
			names = append(names, a.Name)
		}
		if want := []string{"main", "ant", "bee"}; !slices.Equal(names, want) {
			t.Errorf("agents = %v, want %v", names, want)
		}
		if !cfg.Agents[1].Expose.A2A {
			t.Error("[expose] of a.toml not decoded")
		}
	})

	tests := []struct {
		name    string
		files   map[string]string
		file    string
		line    int
		field   string
		message string
	}{
		{"unknown key", map[string]string{"x.toml": "name = \"x\"\nkind = \"mcp_proxy\"\nprovidr = \"openai\"\n"}, "x.toml", 3, "providr", "valid keys here: name, description"},
		{"unknown provider", map[string]string{"x.toml": "name = \"x\"\nprovider = \"ghost\"\nmodel = \"m\"\n"}, "x.toml", 2, "provider", `"ghost" is not a configured provider`},
		{"unknown mcp server", map[string]string{"x.toml": "name = \"x\"\nkind = \"mcp_proxy\"\nmcp_servers = [\"ghost\"]\n"}, "x.toml", 3, "mcp_servers[0]", "not the name of an [[mcp_servers]] entry"},
		{"duplicate of config agent", map[string]string{"x.toml": "name = \"main\"\nkind = \"mcp_proxy\"\n"}, "x.toml", 1, "name", `agent "main" is already defined at `},
		{"syntax", map[string]string{"x.toml": "name = \"x\"\nmodel = \n"}, "x.toml", 2, "", "invalid TOML"},
		{"config-style table", map[string]string{"x.toml": "[[agents]]\nname = \"x\"\n"}, "x.toml", 1, "agents", "unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := writeHome(t, inConfig, tt.files)
			_, err := Load(LoadOptions{Home: home, LookupEnv: fakeEnv(nil)})
			e := findError(err, tt.line, tt.field)
			if e == nil {
				t.Fatalf("no error at %s:%d %q; got:\n%v", tt.file, tt.line, tt.field, err)
			}
			if filepath.Base(e.File) != tt.file || !strings.Contains(e.Msg, tt.message) {
				t.Errorf("error = %v, want file %s and message containing %q", e, tt.file, tt.message)
			}
		})
	}

	t.Run("duplicate names point at the config line", func(t *testing.T) {
		home := writeHome(t, "\n"+inConfig, map[string]string{"x.toml": "name = \"main\"\nkind = \"mcp_proxy\"\n"})
		_, err := Load(LoadOptions{Home: home, LookupEnv: fakeEnv(nil)})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(home, "config.toml")+":3") {
			t.Errorf("err = %v, want it to point at config.toml:3", err)
		}
	})
}

func TestParseManifestTOML(t *testing.T) {
	m, err := ParseManifestTOML("coder.toml", []byte(`
name = "coder"
provider = "anything"
model = "m"
tools = ["file_*"]
[[skills]]
id = "code"
name = "Code"
`))
	if err != nil {
		t.Fatalf("ParseManifestTOML: %v", err)
	}
	want := manifest.Manifest{Name: "coder", Provider: "anything", Model: "m", Tools: []string{"file_*"}, Skills: []manifest.Skill{{ID: "code", Name: "Code"}}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("manifest = %+v, want %+v", m, want)
	}

	bad := []struct {
		name, body, want string
	}{
		{"unknown key", "name = \"x\"\nkind = \"mcp_proxy\"\nsystem = \"y\"\n", "coder.toml:3: system: unknown key"},
		{"invalid name", "name = \"bad name\"\nkind = \"mcp_proxy\"\n", `coder.toml:1: name: "bad name" is not a valid agent name`},
		{"missing model", "name = \"x\"\nprovider = \"p\"\n", "coder.toml: model: required"},
		{"syntax", "name = \"x\n", "coder.toml:1: invalid TOML"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseManifestTOML("coder.toml", []byte(tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestHomeResolution(t *testing.T) {
	tmp := t.TempDir()
	tests := []struct {
		name string
		opts LoadOptions
		want string
	}{
		{"explicit", LoadOptions{Home: filepath.Join(tmp, "h1"), LookupEnv: fakeEnv(map[string]string{"AGENTD_HOME": "/elsewhere"})}, filepath.Join(tmp, "h1")},
		{"AGENTD_HOME", LoadOptions{LookupEnv: fakeEnv(map[string]string{"AGENTD_HOME": filepath.Join(tmp, "h2"), "HOME": "/nope"})}, filepath.Join(tmp, "h2")},
		{"HOME/.agentd", LoadOptions{LookupEnv: fakeEnv(map[string]string{"HOME": filepath.Join(tmp, "u")})}, filepath.Join(tmp, "u", ".agentd")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := Load(tt.opts)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if cfg.Home != tt.want {
				t.Errorf("Home = %q, want %q", cfg.Home, tt.want)
			}
		})
	}
}

// TestErrorsNeverEchoSecrets puts a secret where users paste one by
// mistake; no error may repeat it.
func TestErrorsNeverEchoSecrets(t *testing.T) {
	const secret = "sk-LEAK-4242"
	tests := []struct{ name, body string }{
		{"in api_key_env", `api_key_env = "` + secret + `"`},
		{"api_key with env too", `api_key = "` + secret + "\"\napi_key_env = \"X\""},
		{"unquoted api_key", "api_key = " + secret},
		{"unquoted token key", "token = " + secret},
		{"unknown key", `token = "` + secret + `"`},
		{"provider api_key", "[providers.openai]\napi_key = \"" + secret + `"`},
		{"provider api_key_env", "[providers.openai]\napi_key_env = \"" + secret + `"`},
		{"mcp env entry", "[[mcp_servers]]\nname = \"a\"\nenv = [\"" + secret + "\"]\ntransport = { type = \"stdio\", command = \"x\" }"},
		{"header literal", "[[mcp_servers]]\nname = \"a\"\nheaders = { X-Api-Key = \"" + secret + "\" }\ntransport = { type = \"http\", url = \"https://h\" }"},
		{"header bad ref", "[[mcp_servers]]\nname = \"a\"\nheaders = { X-A = \"" + secret + "${\" }\ntransport = { type = \"http\", url = \"https://h\" }"},
		{"url userinfo", "[[mcp_servers]]\nname = \"a\"\ntransport = { type = \"sse\", url = \"https://u:" + secret + "@h\" }"},
		{"url query", "[[mcp_servers]]\nname = \"a\"\ntransport = { type = \"sse\", url = \"ftp://h/?key=" + secret + "\" }"},
		{"token_env", "[[a2a.external_agents]]\nname = \"a\"\nurl = \"https://h\"\ntoken_env = \"" + secret + `"`},
		{"auth_token_env", "[acp]\nauth_token_env = \"" + secret + `"`},
		{"api_key of wrong type", "api_key = [\"" + secret + "\"]"},
		{"store url", "[store]\nbackend = \"postgres\"\nurl = \"postgres://u:" + secret + "@h/db\""},
		{"store url in url_env", "[store]\nbackend = \"postgres\"\nurl_env = \"postgres://u:" + secret + "@h/db\""},
		{"session key in session_key_env", "[store]\nbackend = \"postgres\"\n[cluster]\nsession_key_env = \"" + secret + "-x\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadString(t, tt.body)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if strings.Contains(err.Error(), "LEAK") {
				t.Errorf("error echoes the secret: %v", err)
			}
		})
	}
}

// TestDefaultFileExplainsEverySection keeps the generated file in step
// with the types: every table and top-level key appears in it.
func TestDefaultFileExplainsEverySection(t *testing.T) {
	text := string(DefaultFile())
	for section, keys := range docSections() {
		if section == "" {
			for _, k := range keys {
				if !strings.Contains(text, "# "+k+" = ") {
					t.Errorf("default file does not show top-level key %q", k)
				}
			}
			continue
		}
		name := strings.TrimSuffix(section, ".NAME")
		if !strings.Contains(text, "["+name+"]") && !strings.Contains(text, "[["+name+"]]") && !strings.Contains(text, "["+name+".") {
			t.Errorf("default file does not explain [%s]", section)
		}
	}
}
