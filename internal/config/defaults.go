package config

import (
	"bytes"
	_ "embed"
	"path/filepath"
)

// Defaults applied by ApplyDefaults. A zero or absent value means "use
// the default"; zero is never a useful setting for these.
const (
	DefaultListen      = "127.0.0.1:4200"
	DefaultLogLevel    = "info"
	DefaultLogFormat   = "text"
	DefaultMCPPath     = "/mcp"
	DefaultA2APath     = "/a2a"
	DefaultA2AMaxTasks = 1000
	// MCP tasks ([mcp] task_*): a day at most, an hour unless asked, a
	// poll a second.
	DefaultMCPTaskTTL     = 3600
	DefaultMCPTaskMaxTTL  = 86400
	DefaultMCPTaskPollMS  = 1000
	DefaultACPName        = "agentd"
	DefaultUserTrust      = "trusted"
	DefaultToolTimeout    = 60
	DefaultMaxResultChars = 50000
	DefaultMaxImageBytes  = 5 << 20
	DefaultLoopGuard      = 3
	// DefaultApprovalTimeout is [tools] approval_timeout_secs' default.
	DefaultApprovalTimeout = 300
	DefaultWebFetchBytes   = 2 << 20
	DefaultShellTimeout    = 30
	DefaultShellOutput     = 64 << 10
	DefaultAgentSendDepth  = 3
	DefaultRatePerSec      = 50
	DefaultBurst           = 100
	DefaultMaxBodyBytes    = 10 << 20
	DefaultReadTimeout     = 30
	DefaultIdleTimeout     = 120
	DefaultMCPTimeout      = 30
	DefaultMaxRetries      = 3
	DefaultModelTimeout    = 300
	DefaultStoreBackend    = BackendSQLite
	DefaultPostgresURLEnv  = "AGENTD_POSTGRES_URL"
	DefaultHeartbeatSecs   = 5
	DefaultLeaseSecs       = 15
)

// Store backends.
const (
	BackendSQLite   = "sqlite"
	BackendPostgres = "postgres"
)

// Provider kinds.
const (
	KindOpenAI    = "openai"
	KindAnthropic = "anthropic"
	KindGemini    = "gemini"
)

//go:embed default.toml
var defaultTOML []byte

// DefaultFile returns the commented config.toml written on first start.
// It loads without error and explains every section.
func DefaultFile() []byte { return bytes.Clone(defaultTOML) }

// defaultProviders is used when a config defines no provider at all.
func defaultProviders() map[string]Provider {
	return map[string]Provider{
		"openai":    {Kind: KindOpenAI, APIKeyEnv: "OPENAI_API_KEY"},
		"anthropic": {Kind: KindAnthropic, APIKeyEnv: "ANTHROPIC_API_KEY"},
		"gemini":    {Kind: KindGemini, APIKeyEnv: "GEMINI_API_KEY"},
		"ollama":    {Kind: KindOpenAI, BaseURL: "http://127.0.0.1:11434/v1"},
	}
}

// defaultUntrusted is merged under [tools.untrusted]: a user's entry for
// the same pattern wins, and a user who adds web_fetch = "deny" does not
// silently lose the shell_exec prompt.
func defaultUntrusted() map[string]string {
	return map[string]string{"shell_exec": "ask", "file_write": "ask"}
}

// ApplyDefaults fills every zero setting with its default. Load calls it;
// tests that build a Config by hand may too. It is idempotent.
func (c *Config) ApplyDefaults() {
	setString(&c.Listen, DefaultListen)
	setString(&c.LogLevel, DefaultLogLevel)
	setString(&c.Store.Backend, DefaultStoreBackend)
	if c.Store.Backend == BackendPostgres {
		// Only there: with sqlite an url_env would be a mistake to report.
		setString(&c.Store.URLEnv, DefaultPostgresURLEnv)
		setInt(&c.Cluster.HeartbeatSecs, DefaultHeartbeatSecs)
		if c.Cluster.LeaseSecs == 0 {
			c.Cluster.LeaseSecs = max(DefaultLeaseSecs, 2*c.Cluster.HeartbeatSecs)
		}
	}
	setString(&c.LogFormat, DefaultLogFormat)
	if c.Home != "" {
		switch {
		case c.AgentsDir == "":
			c.AgentsDir = filepath.Join(c.Home, "agents")
		case !filepath.IsAbs(c.AgentsDir):
			c.AgentsDir = filepath.Join(c.Home, c.AgentsDir)
		}
	}

	if len(c.Providers) == 0 {
		c.Providers = defaultProviders()
	}
	for name, p := range c.Providers {
		if p.Kind == "" && isProviderKind(name) {
			// [providers.anthropic] needs no kind = "anthropic".
			p.Kind = name
		}
		setInt(&p.MaxRetries, DefaultMaxRetries)
		setInt(&p.TimeoutSecs, DefaultModelTimeout)
		c.Providers[name] = p
	}

	for i := range c.MCPServers {
		setInt(&c.MCPServers[i].TimeoutSecs, DefaultMCPTimeout)
	}
	setString(&c.MCP.Path, DefaultMCPPath)
	setInt(&c.MCP.TaskTTLSecs, DefaultMCPTaskTTL)
	setInt(&c.MCP.TaskMaxTTLSecs, DefaultMCPTaskMaxTTL)
	setInt(&c.MCP.TaskPollIntervalMillis, DefaultMCPTaskPollMS)

	setString(&c.A2A.ListenPath, DefaultA2APath)
	setInt(&c.A2A.MaxTasks, DefaultA2AMaxTasks)
	if c.A2A.PublicCard == nil {
		t := true
		c.A2A.PublicCard = &t
	}

	setString(&c.ACP.Name, DefaultACPName)
	setString(&c.ACP.UserTrust, DefaultUserTrust)

	t := &c.Tools
	setInt(&t.TimeoutSecs, DefaultToolTimeout)
	setInt(&t.MaxResultChars, DefaultMaxResultChars)
	setInt(&t.MaxResultImageBytes, DefaultMaxImageBytes)
	setInt(&t.LoopGuard, DefaultLoopGuard)
	if t.Untrusted == nil {
		t.Untrusted = make(map[string]string)
	}
	for k, v := range defaultUntrusted() {
		if _, ok := t.Untrusted[k]; !ok {
			t.Untrusted[k] = v
		}
	}
	setInt(&t.WebFetch.MaxBytes, DefaultWebFetchBytes)
	setInt(&t.Shell.TimeoutSecs, DefaultShellTimeout)
	setInt(&t.Shell.MaxOutputBytes, DefaultShellOutput)
	setInt(&t.AgentSendMax, DefaultAgentSendDepth)
	setInt(&t.ApprovalTimeoutSecs, DefaultApprovalTimeout)

	lim := &c.Limits
	if lim.RatePerSec == 0 {
		lim.RatePerSec = DefaultRatePerSec
	}
	setInt(&lim.Burst, DefaultBurst)
	if lim.MaxBodyBytes == 0 {
		lim.MaxBodyBytes = DefaultMaxBodyBytes
	}
	setInt(&lim.ReadTimeoutSec, DefaultReadTimeout)
	setInt(&lim.IdleTimeoutSec, DefaultIdleTimeout)
}

func setString(s *string, def string) {
	if *s == "" {
		*s = def
	}
}

func setInt(n *int, def int) {
	if *n == 0 {
		*n = def
	}
}

func isProviderKind(s string) bool {
	return s == KindOpenAI || s == KindAnthropic || s == KindGemini
}
