// Package config loads and validates agentd's configuration. It is the only
// package that reads configuration files or environment variables; the
// rest of the daemon receives typed values.
package config

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/manifest"
)

// Config is the whole configuration, as read from config.toml.
type Config struct {
	// Home is AGENTD_HOME; not read from the file.
	Home string `toml:"-" json:"-"`
	// File is the path the config was loaded from; not read from the file.
	File string `toml:"-" json:"-"`

	Listen    string `toml:"listen" json:"listen"`           // default 127.0.0.1:4200
	APIKey    Secret `toml:"api_key" json:"api_key"`         // literal key (the only literal secret allowed)
	APIKeyEnv string `toml:"api_key_env" json:"api_key_env"` // or the env var holding it
	// PublicURL is the externally visible base URL used in Agent Cards
	// when the daemon runs behind a proxy; empty = derive from requests.
	PublicURL string `toml:"public_url" json:"public_url"`
	LogLevel  string `toml:"log_level" json:"log_level"` // debug, info, warn, error
	// LogFormat is "text" (default, logfmt-like) or "json" (one object a
	// line, for log shippers).
	LogFormat string `toml:"log_format" json:"log_format"`
	// DefaultAgent serves /.well-known/agent-card.json and `agentd acp`
	// without --agent; empty = the first configured agent.
	DefaultAgent string `toml:"default_agent" json:"default_agent"`
	// AgentsDir holds extra agents/*.toml manifests; default HOME/agents.
	AgentsDir string `toml:"agents_dir" json:"agents_dir"`

	Providers  map[string]Provider `toml:"providers" json:"providers"`
	Agents     []manifest.Manifest `toml:"agents" json:"agents"`
	MCPServers []MCPServer         `toml:"mcp_servers" json:"mcp_servers"`
	MCP        MCPServe            `toml:"mcp" json:"mcp"`
	A2A        A2A                 `toml:"a2a" json:"a2a"`
	ACP        ACP                 `toml:"acp" json:"acp"`
	Tools      Tools               `toml:"tools" json:"tools"`
	Limits     Limits              `toml:"limits" json:"limits"`
	Server     Server              `toml:"server" json:"server"`
	Principals []Principal         `toml:"principals" json:"principals,omitempty"`
	Auth       Auth                `toml:"auth" json:"auth"`
	Store      Store               `toml:"store" json:"store"`
	Metrics    Metrics             `toml:"metrics" json:"metrics"`
	Telemetry  Telemetry           `toml:"telemetry" json:"telemetry"`
	Cluster    Cluster             `toml:"cluster" json:"cluster"`
	Sandbox    Sandbox             `toml:"sandbox" json:"sandbox"`

	// lookupEnv is the environment as seen by Load; secrets are read
	// through it on demand so they never sit in the struct. nil means
	// os.LookupEnv (a Config built directly, as tests do).
	lookupEnv func(string) (string, bool)
	// origin is which file Load looked for and why; see Origin.
	origin origin
	// baseURLAt says where each provider's base_url was written
	// (file:line), for ProviderEndpoint; nil for a Config built in code.
	baseURLAt map[string]string
}

// Secret is a string that never prints: String, GoString, MarshalJSON and
// slog's LogValue all redact it. Reveal returns the value.
type Secret string

// Reveal returns the secret's value, for the one place that compares it.
func (s Secret) Reveal() string { return string(s) }

// Principal is one identity that may call the daemon, with its rights.
// The top-level api_key is one more principal, "admin", with every right.
type Principal struct {
	Name string `toml:"name" json:"name"`
	// KeyEnv names the environment variable holding its bearer key; or
	// KeySHA256 is the hex SHA-256 of the key (`agentd principals new-key`).
	KeyEnv    string `toml:"key_env" json:"key_env,omitempty"`
	KeySHA256 string `toml:"key_sha256" json:"key_sha256,omitempty"`
	// Agents are the agent name globs it may run; Tools the tool name
	// globs it may call directly. Unset: none, or every one for an admin.
	Agents []string `toml:"agents" json:"agents,omitempty"`
	Tools  []string `toml:"tools" json:"tools,omitempty"`
	// DenyTools and AskTools are tool globs denied, or needing approval,
	// in every run this principal starts, whatever the agent.
	DenyTools []string `toml:"deny_tools" json:"deny_tools,omitempty"`
	AskTools  []string `toml:"ask_tools" json:"ask_tools,omitempty"`
	// Admin may change agents and servers and read every session and the
	// audit log.
	Admin bool `toml:"admin" json:"admin,omitempty"`
	// A2AAgents are the globs of the external A2A agents ([[a2a.agents]])
	// it may send to through the daemon, spending the daemon's credential
	// for them. Unset: none, or every one for an admin.
	A2AAgents []string `toml:"a2a_agents" json:"a2a_agents,omitempty"`
	// OAuthSubjects are the values of [auth.oauth]'s principal claim
	// whose access tokens are this principal (besides a claim equal to
	// its name): an IdP's opaque subject ids, say.
	OAuthSubjects []string `toml:"oauth_subjects" json:"oauth_subjects,omitempty"`
}

// Store chooses where agentd keeps its state (agents and MCP servers
// created through the API, sessions, tasks, memory, the audit log).
type Store struct {
	// Backend is "sqlite" (default: the file AGENTD_HOME/agentd.db) or
	// "postgres" (a database several agentd processes may share).
	Backend string `toml:"backend" json:"backend"`
	// URLEnv names the environment variable holding the PostgreSQL
	// connection URL, which carries a password and so never sits in the
	// file; default AGENTD_POSTGRES_URL. Only for backend "postgres".
	URLEnv string `toml:"url_env" json:"url_env,omitempty"`
}

// Cluster tunes the replicas that share one PostgreSQL store ([store]
// backend = "postgres"): how they prove they are alive, when one is
// presumed dead, and the key that seals MCP session ids so that any
// replica can serve any session. Only used with backend "postgres".
type Cluster struct {
	// Name labels this replica in logs and in the replicas table; default
	// the host name and the listen port.
	Name string `toml:"name" json:"name,omitempty"`
	// HeartbeatSecs is how often a replica records that it is alive;
	// default 5.
	HeartbeatSecs int `toml:"heartbeat_secs" json:"heartbeat_secs,omitempty"`
	// LeaseSecs is how long a replica may stay silent before the others
	// presume it dead and fail the tasks and turns it was running;
	// default 15, at least twice heartbeat_secs.
	LeaseSecs int `toml:"lease_secs" json:"lease_secs,omitempty"`
	// SessionKeyEnv names the environment variable holding the secret
	// that seals MCP session ids: comma-separated secrets, the first
	// seals and every one opens (rotation). Unset: a key generated once
	// and kept in the database.
	SessionKeyEnv string `toml:"session_key_env" json:"session_key_env,omitempty"`
	// StoreRetrySecs is how long the writes of a run wait, retrying, for
	// an unavailable database before the run fails (store unavailable);
	// 0 = DefaultStoreRetrySecs (StoreRetry).
	StoreRetrySecs int `toml:"store_retry_secs" json:"store_retry_secs,omitempty"`
	// DrainTimeoutSecs is how long a stopping daemon (SIGTERM) lets its
	// runs finish, taking no new ones, before it fails the rest
	// ("replica shutting down"); 0 = DefaultDrainSecs (DrainTimeout).
	// The one key of [cluster] that a daemon on SQLite takes too.
	DrainTimeoutSecs int `toml:"drain_timeout_secs" json:"drain_timeout_secs,omitempty"`
}

// Defaults of the [cluster] durations, which zero leaves to StoreRetry and
// DrainTimeout (not ApplyDefaults: with SQLite, [cluster] stays empty).
const (
	DefaultStoreRetrySecs = 60
	DefaultDrainSecs      = 30
)

// StoreRetry is how long a run's writes wait for an unavailable store.
func (c Cluster) StoreRetry() time.Duration {
	return time.Duration(cmp.Or(c.StoreRetrySecs, DefaultStoreRetrySecs)) * time.Second
}

// DrainTimeout is how long a stopping daemon lets its runs finish.
func (c Cluster) DrainTimeout() time.Duration {
	return time.Duration(cmp.Or(c.DrainTimeoutSecs, DefaultDrainSecs)) * time.Second
}

// Auth configures how clients authenticate beyond API keys.
type Auth struct {
	// OAuth makes the daemon an OAuth 2.1 resource server.
	OAuth *OAuthRS `toml:"oauth" json:"oauth,omitempty"`
}

// OAuthRS accepts JWT access tokens from one authorization server.
type OAuthRS struct {
	Issuer string `toml:"issuer" json:"issuer"`
	// Audience every token must carry; default public_url, else the
	// listen address as http://host:port.
	Audience string `toml:"audience" json:"audience,omitempty"`
	// JWKSURL of the issuer's keys; default discovered from its metadata.
	JWKSURL string `toml:"jwks_url" json:"jwks_url,omitempty"`
	// PrincipalClaim names the principal; default "sub".
	PrincipalClaim string `toml:"principal_claim" json:"principal_claim,omitempty"`
	// ScopeRights lets a token whose principal claim no [[principals]]
	// entry names be the principal "oauth:<claim>", with the rights its
	// scopes grant. Off (the default), such a token is refused (403).
	ScopeRights bool `toml:"scope_rights" json:"scope_rights,omitempty"`
	// LeewaySecs is the clock skew allowed; default 60.
	LeewaySecs int `toml:"leeway_secs" json:"leeway_secs,omitempty"`
	// AllowPrivate lets the issuer be on loopback or a private network
	// (development); the SSRF guard refuses it otherwise.
	AllowPrivate bool `toml:"allow_private" json:"allow_private,omitempty"`
}

// OAuthAudience returns the audience tokens must carry.
func (c *Config) OAuthAudience() string {
	if c.Auth.OAuth == nil {
		return ""
	}
	if c.Auth.OAuth.Audience != "" {
		return c.Auth.OAuth.Audience
	}
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	return "http://" + c.Listen
}

// TrustedProxies returns [server] trusted_proxies as prefixes (a bare
// address is its own /32 or /128). Validation has refused anything else.
func (c *Config) TrustedProxies() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range c.Server.TrustedProxies {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
	}
	return out
}

// Provider configures one LLM provider.
type Provider struct {
	// Kind is openai, anthropic or gemini. openai also covers every
	// OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio, ...).
	Kind string `toml:"kind" json:"kind"`
	// BaseURL of the API; empty means the vendor's base-URL environment
	// variable (OPENAI_BASE_URL, ...) when set, else the vendor's public
	// endpoint. Config.ProviderEndpoint resolves it.
	BaseURL   string `toml:"base_url" json:"base_url,omitempty"`
	APIKeyEnv string `toml:"api_key_env" json:"api_key_env,omitempty"` // empty = no key (local servers)
	// MaxRetries on 429/5xx; default 3.
	MaxRetries int `toml:"max_retries" json:"max_retries,omitempty"`
	// TimeoutSecs bounds one model call; default 300.
	TimeoutSecs int `toml:"timeout_secs" json:"timeout_secs,omitempty"`
}

// MCPServer is one upstream MCP server: the seed's [[mcp_servers]] block.
type MCPServer struct {
	Name        string       `toml:"name" json:"name"`
	Transport   MCPTransport `toml:"transport" json:"transport"`
	TimeoutSecs int          `toml:"timeout_secs" json:"timeout_secs,omitempty"` // default 30
	// Env lists the names of environment variables passed through to a
	// stdio server; everything else is cleared but PATH, HOME and TMPDIR.
	Env []string `toml:"env" json:"env,omitempty"`
	// Headers are sent on HTTP and SSE requests. A value "${NAME}" or
	// containing ${NAME} is expanded from the environment at connect time.
	// Values are redacted in logs and in the API.
	Headers map[string]string `toml:"headers" json:"headers,omitempty"`
	// AllowedTools: nil = every tool (with a warning), empty = none,
	// otherwise names or globs of the upstream's tool names.
	AllowedTools *[]string `toml:"allowed_tools" json:"allowed_tools,omitempty"`
	Enabled      *bool     `toml:"enabled" json:"enabled,omitempty"` // nil = true
	// AllowPrivate lets an HTTP/SSE URL point at loopback or private
	// addresses (refused by the SSRF guard otherwise).
	AllowPrivate bool `toml:"allow_private" json:"allow_private,omitempty"`
	// OAuth, when present, authorizes an http server with OAuth 2.1
	// (MCP authorization) instead of static headers.
	OAuth *MCPOAuth `toml:"oauth" json:"oauth,omitempty"`
	// Sandbox confines a stdio server; nil takes the defaults (see
	// docs/security.md).
	Sandbox *SandboxProfile `toml:"sandbox" json:"sandbox,omitempty"`
	// Tasks says which calls to a server that supports MCP tasks
	// (SEP-1686) are task-augmented, to survive a reconnect: "auto"
	// (default: tools that require it, and optional ones once a call of
	// theirs ran past TaskAfterSecs), "always" or "never".
	Tasks string `toml:"tasks" json:"tasks,omitempty"`
	// TaskAfterSecs is auto's threshold; default 10.
	TaskAfterSecs int `toml:"task_after_secs" json:"task_after_secs,omitempty"`
}

// MCPOAuth configures MCP authorization for one http server. With none
// of ClientID and ClientMetadataURL set, the client registers itself
// dynamically (RFC 7591).
type MCPOAuth struct {
	// ClientID is a client registered beforehand with the server's
	// authorization server; ClientSecretEnv names the variable holding
	// its secret (none for a public client).
	ClientID        string `toml:"client_id" json:"client_id,omitempty"`
	ClientSecretEnv string `toml:"client_secret_env" json:"client_secret_env,omitempty"`
	// ClientMetadataURL is an HTTPS URL serving a Client ID Metadata
	// Document, used as the client_id where the server supports it.
	ClientMetadataURL string `toml:"client_metadata_url" json:"client_metadata_url,omitempty"`
	// Scopes to request; empty means what the server advertises.
	Scopes []string `toml:"scopes" json:"scopes,omitempty"`
	// RedirectURL is where the browser returns after the user approves;
	// default the daemon's own /oauth/callback on loopback.
	RedirectURL string `toml:"redirect_url" json:"redirect_url,omitempty"`
}

// MCPTransport says how to reach an MCP server.
type MCPTransport struct {
	Type    string   `toml:"type" json:"type"` // stdio, sse, http
	Command string   `toml:"command" json:"command,omitempty"`
	Args    []string `toml:"args" json:"args,omitempty"`
	Dir     string   `toml:"dir" json:"dir,omitempty"`
	URL     string   `toml:"url" json:"url,omitempty"`
}

// MCPServe configures agentd's own MCP server endpoints.
type MCPServe struct {
	// Path of the Streamable HTTP endpoint; default /mcp.
	Path string `toml:"path" json:"path"`
	// ExposeTools also serves the full tool set (built-in + upstream) on
	// the endpoint, through the same runner and policy.
	ExposeTools bool `toml:"expose_tools" json:"expose_tools"`
	// AllowedOrigins are accepted in the Origin header besides loopback.
	AllowedOrigins []string `toml:"allowed_origins" json:"allowed_origins,omitempty"`
	// Gateways serve one upstream server's tools unprefixed at
	// /mcp/gateway/{server}.
	Gateways []string `toml:"gateways" json:"gateways,omitempty"`
	// TaskTTLSecs is how long a task an MCP client started (a
	// task-augmented tools/call) is kept when the client asks no ttl.
	TaskTTLSecs int `toml:"task_ttl_secs" json:"task_ttl_secs"`
	// TaskMaxTTLSecs caps the ttl a client may ask for.
	TaskMaxTTLSecs int `toml:"task_max_ttl_secs" json:"task_max_ttl_secs"`
	// TaskPollIntervalMillis is the pollInterval suggested to clients,
	// and the floor of how often tasks/result looks at a task.
	TaskPollIntervalMillis int `toml:"task_poll_interval_ms" json:"task_poll_interval_ms"`
}

// A2A configures the A2A server and client: the seed's [a2a] block.
type A2A struct {
	Enabled    bool   `toml:"enabled" json:"enabled"`
	ListenPath string `toml:"listen_path" json:"listen_path"` // default /a2a
	// PublicCard serves Agent Cards without auth; default true.
	PublicCard *bool `toml:"public_card" json:"public_card,omitempty"`
	MaxTasks   int   `toml:"max_tasks" json:"max_tasks"` // default 1000
	// PushAllowPrivate lets clients register push-notification webhooks
	// on loopback or private addresses (local development); the SSRF
	// guard refuses them otherwise. Cloud metadata stays refused.
	PushAllowPrivate bool            `toml:"push_allow_private" json:"push_allow_private,omitempty"`
	ExternalAgents   []ExternalAgent `toml:"external_agents" json:"external_agents"`
}

// ExternalAgent is a remote A2A agent discovered at start.
type ExternalAgent struct {
	Name string `toml:"name" json:"name"`
	URL  string `toml:"url" json:"url"`
	// TokenEnv names an env var holding a bearer token for the agent.
	TokenEnv     string `toml:"token_env" json:"token_env,omitempty"`
	AllowPrivate bool   `toml:"allow_private" json:"allow_private,omitempty"`
}

// ACP configures `agentd acp`: the headless agent's [acp] block.
type ACP struct {
	Name    string `toml:"name" json:"name"`       // agentInfo.name; default agentd
	Version string `toml:"version" json:"version"` // agentInfo.version; default the build version
	// UserTrust labels editor prompt content: trusted or untrusted.
	UserTrust string `toml:"user_trust" json:"user_trust"`
	// AuthTokenEnv, when set, requires `authenticate` with that token.
	AuthTokenEnv string `toml:"auth_token_env" json:"auth_token_env,omitempty"`
}

// Tools configures the tool runner and the built-in tools.
type Tools struct {
	TimeoutSecs    int            `toml:"timeout_secs" json:"timeout_secs"`         // default 60
	Timeouts       map[string]int `toml:"timeouts" json:"timeouts,omitempty"`       // per tool name, seconds
	MaxResultChars int            `toml:"max_result_chars" json:"max_result_chars"` // default 50000
	// MaxResultImageBytes caps the images of one tool result shown to a
	// model that takes images; default 5 MiB.
	MaxResultImageBytes int `toml:"max_result_image_bytes" json:"max_result_image_bytes"`
	LoopGuard           int `toml:"loop_guard" json:"loop_guard"` // identical calls in a row; default 3
	// Untrusted maps tool patterns to "allow", "ask" or "deny" while
	// untrusted data is in the context. Default: shell_exec and file_write ask.
	Untrusted    map[string]string `toml:"untrusted" json:"untrusted,omitempty"`
	WebFetch     WebFetch          `toml:"web_fetch" json:"web_fetch"`
	Shell        Shell             `toml:"shell" json:"shell"`
	AgentSendMax int               `toml:"agent_send_max_depth" json:"agent_send_max_depth"` // default 3
	// ApprovalTimeoutSecs bounds how long a call that needs approval, in a
	// run whose edge cannot ask, waits for a decision in the dashboard
	// before it is denied; default 300.
	ApprovalTimeoutSecs int `toml:"approval_timeout_secs" json:"approval_timeout_secs"`
}

// WebFetch configures the web_fetch tool.
type WebFetch struct {
	AllowPrivate bool     `toml:"allow_private" json:"allow_private"`
	AllowHosts   []string `toml:"allow_hosts" json:"allow_hosts,omitempty"` // hosts exempt from the SSRF guard
	MaxBytes     int      `toml:"max_bytes" json:"max_bytes"`               // default 2 MB
}

// Shell configures the shell_exec tool.
type Shell struct {
	TimeoutSecs    int `toml:"timeout_secs" json:"timeout_secs"`         // default 30
	MaxOutputBytes int `toml:"max_output_bytes" json:"max_output_bytes"` // default 64 KiB
}

// Server configures who may reach the listener at all: the admission
// layer every route passes (docs/identity.md, "Admission").
type Server struct {
	// AllowedHosts are the Host header values (names, without port)
	// served besides localhost, loopback literals, the listen address and
	// public_url's host. A name may start with "*." to allow its
	// subdomains. Anything else is refused (421): a page that rebinds its
	// own DNS name to this daemon's address carries that name.
	AllowedHosts []string `toml:"allowed_hosts" json:"allowed_hosts,omitempty"`
	// AllowedOrigins are browser origins (scheme://host[:port]) whose
	// cross-site requests are admitted on every route; by default only
	// the daemon's own origin is (the dashboard).
	AllowedOrigins []string `toml:"allowed_origins" json:"allowed_origins,omitempty"`
	// TrustedProxies are the addresses or CIDR ranges of reverse proxies
	// whose X-Forwarded-For names the client: failed authentications and
	// rate limits then count per forwarded address, not per proxy.
	TrustedProxies []string `toml:"trusted_proxies" json:"trusted_proxies,omitempty"`
}

// Limits bounds what clients may send.
type Limits struct {
	RatePerSec float64 `toml:"rate_per_sec" json:"rate_per_sec"` // per client; default 50
	Burst      int     `toml:"burst" json:"burst"`               // default 100
	// LimitLoopback throttles loopback clients too when no api_key is set
	// (default false: local editors, relays and peers are not throttled).
	LimitLoopback  bool  `toml:"limit_loopback" json:"limit_loopback,omitempty"`
	MaxBodyBytes   int64 `toml:"max_body_bytes" json:"max_body_bytes"`       // default 10 MB
	ReadTimeoutSec int   `toml:"read_timeout_secs" json:"read_timeout_secs"` // default 30
	IdleTimeoutSec int   `toml:"idle_timeout_secs" json:"idle_timeout_secs"` // default 120
}

// origin is where Load looked for the configuration file and why there.
type origin struct {
	path string // the file read, or looked for and not found
	how  string // how that path was chosen: "AGENTD_HOME=...", ...
}

// HomeID identifies the AGENTD_HOME this config serves: the first 16 hex
// digits of a SHA-256 of its real path. GET /api/health reports it, so
// that `agentd mcp` relays only to a daemon of its own home; the path
// itself is not disclosed. Empty for a config without a home.
func (c *Config) HomeID() string { return pathID("agentd home", c.Home) }

// FileID identifies the config file read, as HomeID the home: `agentd
// mcp --config FILE`, started by an MCP host without the AGENTD_HOME of
// the daemon it should reach, relays to a daemon of the same file. Empty
// without a file.
func (c *Config) FileID() string { return pathID("agentd config", c.File) }

// pathID is the first 16 hex digits of a SHA-256 of kind and the real
// path of p; empty for an empty p.
func pathID(kind, p string) string {
	if p == "" {
		return ""
	}
	path, err := filepath.Abs(p)
	if err == nil {
		if real, err := filepath.EvalSymlinks(path); err == nil {
			path = real
		}
	}
	sum := sha256.Sum256([]byte(kind + "\x00" + path))
	return hex.EncodeToString(sum[:8])
}

// Origin says which configuration file was read, or where none was found,
// and how that place was chosen, for messages that explain surprising
// behaviour: an MCP host starts `agentd mcp` with a minimal environment,
// without the AGENTD_HOME of the user's shell, and so reads another file,
// or none.
func (c *Config) Origin() string {
	switch {
	case c.File != "" && c.origin.how != "":
		return "config file " + c.File + " (" + c.origin.how + ")"
	case c.File != "":
		return "config file " + c.File
	case c.origin.path != "":
		return "no config file at " + c.origin.path + " (" + c.origin.how + "); built-in defaults apply"
	}
	return "a configuration built in code"
}
