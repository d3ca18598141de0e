package config

import (
	"math"
	"net"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentd/agentd/internal/manifest"
)

// Messages reused across fields. None quotes the offending value: these
// fields are where a user pastes a secret by mistake.
const (
	envNameMsg = "must name an environment variable (letters, digits and '_', not starting with a digit); put the secret in that variable, not here"
	urlMsg     = "must be an http:// or https:// URL with a host"
	credsMsg   = "must not contain credentials (user:password@); reference an environment variable instead"
	nameRules  = "1-64 letters, digits, '-' or '_', starting with a letter or digit"
)

// agentSource says where an agent was defined: an [[agents]] table of
// config.toml or a file of the agents directory.
type agentSource struct {
	src  *source
	base fieldPath
}

// Validate checks a Config built in code (no file positions). Load has
// already validated what it returns.
func (c *Config) Validate() error {
	r := &report{}
	srcs := make([]agentSource, len(c.Agents))
	for i := range c.Agents {
		srcs[i] = agentSource{base: fieldPath{}.key("agents").index(i)}
	}
	validateConfig(r, nil, c, srcs)
	return r.err()
}

// maxMCPTimeoutSecs bounds an MCP server's timeout_secs (a day): beyond
// it a typo, not a plan.
const maxMCPTimeoutSecs = 86400

// ValidateMCPServer checks one upstream server, such as one registered
// through the API from JSON or brought by an editor over ACP. It is the
// one validation of a server entry: the config file runs the same checks
// with file:line positions. Field paths are relative to the server
// (transport.type).
func ValidateMCPServer(s MCPServer) error {
	r := &report{}
	checkMCPServer(r, nil, nil, s)
	return r.err()
}

func validateConfig(r *report, src *source, c *Config, agents []agentSource) {
	var root fieldPath

	if c.Listen != "" && !validHostPort(c.Listen) {
		r.add(src, root.key("listen"), "%q is not host:port (for example 127.0.0.1:4200)", c.Listen)
	}
	if c.APIKey != "" {
		if c.APIKeyEnv != "" {
			r.add(src, root.key("api_key"), "api_key and api_key_env are both set; keep one (api_key_env is preferred)")
		}
		if c.APIKey == redacted {
			r.add(src, root.key("api_key"), "is the redaction placeholder %q, not a key", redacted)
		}
	}
	if c.APIKeyEnv != "" && !ValidEnvName(c.APIKeyEnv) {
		r.add(src, root.key("api_key_env"), envNameMsg)
	}
	if c.PublicURL != "" {
		checkURL(r, src, root.key("public_url"), c.PublicURL)
	}
	checkPrincipals(r, src, root, c)
	checkServer(r, src, root.key("server"), c.Server)
	checkSandbox(r, src, root, c)
	if c.LogLevel != "" {
		checkOneOf(r, src, root.key("log_level"), c.LogLevel, "debug", "info", "warn", "error")
	}

	providers := c.Providers
	if len(providers) == 0 {
		providers = defaultProviders()
	}
	for _, name := range sortedStringKeys(c.Providers) {
		checkProvider(r, src, root.key("providers").key(name), name, c.Providers[name])
	}
	checkEndpoints(r, src, c)

	servers := make(map[string]bool)
	seen := make(map[string]int)
	for i, s := range c.MCPServers {
		p := root.key("mcp_servers").index(i)
		checkMCPServer(r, src, p, s)
		servers[s.Name] = true
		norm := strings.ToLower(strings.ReplaceAll(s.Name, "-", "_"))
		if j, ok := seen[norm]; ok {
			if c.MCPServers[j].Name == s.Name {
				r.add(src, p.key("name"), "%q is already used by mcp_servers[%d]", s.Name, j)
			} else {
				r.add(src, p.key("name"), "%q collides with mcp_servers[%d] (%q): their tools would get the same mcp_<server>_<tool> names", s.Name, j, c.MCPServers[j].Name)
			}
		} else {
			seen[norm] = i
		}
	}

	mp := root.key("mcp")
	if c.MCP.Path != "" {
		checkRoutePath(r, src, mp.key("path"), c.MCP.Path)
	}
	for i, o := range c.MCP.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil {
			r.add(src, mp.key("allowed_origins").index(i), "%q is not an origin (scheme://host[:port])", o)
		}
	}
	for i, g := range c.MCP.Gateways {
		if !servers[g] {
			r.add(src, mp.key("gateways").index(i), "%q is not the name of an [[mcp_servers]] entry", g)
		}
	}

	nonNegative(r, src, mp.key("task_ttl_secs"), c.MCP.TaskTTLSecs)
	nonNegative(r, src, mp.key("task_max_ttl_secs"), c.MCP.TaskMaxTTLSecs)
	nonNegative(r, src, mp.key("task_poll_interval_ms"), c.MCP.TaskPollIntervalMillis)
	if c.MCP.TaskTTLSecs > 0 && c.MCP.TaskMaxTTLSecs > 0 && c.MCP.TaskTTLSecs > c.MCP.TaskMaxTTLSecs {
		r.add(src, mp.key("task_ttl_secs"), "%d is more than task_max_ttl_secs (%d)", c.MCP.TaskTTLSecs, c.MCP.TaskMaxTTLSecs)
	}

	ap := root.key("a2a")
	if c.A2A.ListenPath != "" {
		checkRoutePath(r, src, ap.key("listen_path"), c.A2A.ListenPath)
		if c.A2A.ListenPath == c.MCP.Path {
			r.add(src, ap.key("listen_path"), "%q is also mcp.path; they need separate paths", c.A2A.ListenPath)
		}
	}
	nonNegative(r, src, ap.key("max_tasks"), c.A2A.MaxTasks)
	external := make(map[string]int)
	for i, e := range c.A2A.ExternalAgents {
		p := ap.key("external_agents").index(i)
		if !manifest.ValidName(e.Name) {
			r.add(src, p.key("name"), "%q is not a valid name (%s)", e.Name, nameRules)
		} else if j, ok := external[e.Name]; ok {
			r.add(src, p.key("name"), "%q is already used by a2a.external_agents[%d]", e.Name, j)
		} else {
			external[e.Name] = i
		}
		if e.URL == "" {
			r.add(src, p.key("url"), "required: the base URL where the agent publishes its card")
		} else {
			checkURL(r, src, p.key("url"), e.URL)
		}
		if e.TokenEnv != "" && !ValidEnvName(e.TokenEnv) {
			r.add(src, p.key("token_env"), envNameMsg)
		}
	}

	cp := root.key("acp")
	if c.ACP.UserTrust != "" {
		checkOneOf(r, src, cp.key("user_trust"), c.ACP.UserTrust, "trusted", "untrusted")
	}
	if c.ACP.AuthTokenEnv != "" && !ValidEnvName(c.ACP.AuthTokenEnv) {
		r.add(src, cp.key("auth_token_env"), envNameMsg)
	}

	checkTools(r, src, root.key("tools"), &c.Tools)
	checkStore(r, src, root.key("store"), c.Store)
	checkTelemetry(r, src, c)
	checkCluster(r, src, root.key("cluster"), c.Store, c.Cluster)

	lp := root.key("limits")
	if math.IsNaN(c.Limits.RatePerSec) || math.IsInf(c.Limits.RatePerSec, 0) || c.Limits.RatePerSec < 0 {
		r.add(src, lp.key("rate_per_sec"), "must be a non-negative number")
	}
	nonNegative(r, src, lp.key("burst"), c.Limits.Burst)
	if c.Limits.MaxBodyBytes < 0 {
		r.add(src, lp.key("max_body_bytes"), "must not be negative")
	}
	nonNegative(r, src, lp.key("read_timeout_secs"), c.Limits.ReadTimeoutSec)
	nonNegative(r, src, lp.key("idle_timeout_secs"), c.Limits.IdleTimeoutSec)

	names := make(map[string]int)
	for i := range c.Agents {
		a := agents[i]
		checkManifest(r, a.src, a.base, &c.Agents[i], providers, servers)
		name := c.Agents[i].Name
		if j, ok := names[name]; ok && name != "" {
			first := agents[j]
			r.add(a.src, a.base.key("name"), "agent %q is already defined at %s", name, describe(first.src, first.base.key("name")))
		} else {
			names[name] = i
		}
	}
	if c.DefaultAgent != "" {
		if _, ok := names[c.DefaultAgent]; !ok {
			r.add(src, root.key("default_agent"), "%q is not a configured agent", c.DefaultAgent)
		}
	}
}

// describe says where p is, for messages that point at a second place.
func describe(src *source, p fieldPath) string {
	if src == nil || src.file == "" {
		return p.String()
	}
	if l := src.lineOf(p); l > 0 {
		return src.file + ":" + strconv.Itoa(l)
	}
	return src.file
}

func checkProvider(r *report, src *source, p fieldPath, name string, pr Provider) {
	if !manifest.ValidName(name) {
		r.add(src, p, "%q is not a valid provider name (%s)", name, nameRules)
	}
	switch {
	case pr.Kind == "" && isProviderKind(name):
		// ApplyDefaults takes the kind from the name.
	case pr.Kind == "":
		r.add(src, p.key("kind"), "required: one of openai, anthropic, gemini (openai also covers OpenAI-compatible servers)")
	default:
		checkOneOf(r, src, p.key("kind"), pr.Kind, KindOpenAI, KindAnthropic, KindGemini)
	}
	if pr.BaseURL != "" {
		checkURL(r, src, p.key("base_url"), pr.BaseURL)
	}
	if pr.APIKeyEnv != "" && !ValidEnvName(pr.APIKeyEnv) {
		r.add(src, p.key("api_key_env"), envNameMsg)
	}
	nonNegative(r, src, p.key("max_retries"), pr.MaxRetries)
	nonNegative(r, src, p.key("timeout_secs"), pr.TimeoutSecs)
}

func checkMCPServer(r *report, src *source, p fieldPath, s MCPServer) {
	if !manifest.ValidName(s.Name) {
		r.add(src, p.key("name"), "%q is not a valid server name (%s)", s.Name, nameRules)
	}
	nonNegative(r, src, p.key("timeout_secs"), s.TimeoutSecs)
	checkSandboxProfile(r, src, p.key("sandbox"), s.Sandbox)
	if s.TimeoutSecs > maxMCPTimeoutSecs {
		r.add(src, p.key("timeout_secs"), "must be at most %d (a day)", maxMCPTimeoutSecs)
	}
	switch s.Tasks {
	case "", "auto", "always", "never":
	default:
		r.add(src, p.key("tasks"), "%q is not one of \"auto\", \"always\", \"never\"", s.Tasks)
	}
	nonNegative(r, src, p.key("task_after_secs"), s.TaskAfterSecs)
	if s.TaskAfterSecs > maxMCPTimeoutSecs {
		r.add(src, p.key("task_after_secs"), "must be at most %d (a day)", maxMCPTimeoutSecs)
	}
	for i, e := range s.Env {
		if !ValidEnvName(e) {
			r.add(src, p.key("env").index(i), envNameMsg)
		}
	}

	if o := s.OAuth; o != nil {
		op := p.key("oauth")
		if o.ClientSecretEnv != "" && !ValidEnvName(o.ClientSecretEnv) {
			r.add(src, op.key("client_secret_env"), envNameMsg)
		}
		if o.ClientSecretEnv != "" && o.ClientID == "" {
			r.add(src, op.key("client_id"), "required with client_secret_env")
		}
		if u := o.ClientMetadataURL; u != "" {
			if pu, err := url.Parse(u); err != nil || pu.Scheme != "https" || pu.Host == "" || pu.Path == "" || pu.Path == "/" {
				r.add(src, op.key("client_metadata_url"), "%q is not an https URL with a path (a Client ID Metadata Document)", u)
			}
		}
		if o.RedirectURL != "" {
			checkURL(r, src, op.key("redirect_url"), o.RedirectURL)
		}
		if s.Transport.Type == "stdio" {
			r.add(src, op, "OAuth is only supported for the http transport")
		}
	}

	tp, t := p.key("transport"), s.Transport
	switch t.Type {
	case "stdio":
		switch {
		case t.Command == "":
			r.add(src, tp.key("command"), "required for the stdio transport")
		case hasDotDot(t.Command):
			r.add(src, tp.key("command"), "%q must not contain \"..\" path segments", t.Command)
		}
		if t.URL != "" {
			r.add(src, tp.key("url"), "not used by the stdio transport")
		}
		if len(s.Headers) > 0 {
			r.add(src, p.key("headers"), "only the http and sse transports send headers")
		}
	case "http", "sse":
		if s.OAuth != nil && t.Type != "http" {
			r.add(src, p.key("oauth"), "OAuth is only supported for the http transport")
		}
		if t.URL == "" {
			r.add(src, tp.key("url"), "required for the %s transport", t.Type)
		} else {
			checkURL(r, src, tp.key("url"), t.URL)
		}
		if t.Command != "" {
			r.add(src, tp.key("command"), "not used by the %s transport", t.Type)
		}
		if len(t.Args) > 0 {
			r.add(src, tp.key("args"), "not used by the %s transport", t.Type)
		}
		if t.Dir != "" {
			r.add(src, tp.key("dir"), "not used by the %s transport", t.Type)
		}
		if len(s.Env) > 0 {
			r.add(src, p.key("env"), "only stdio servers receive environment variables; send a header with ${NAME} instead")
		}
	case "":
		r.add(src, tp.key("type"), "required: one of stdio, sse, http")
	default:
		r.add(src, tp.key("type"), "%q is not one of stdio, sse, http", t.Type)
	}

	for _, name := range sortedStringKeys(s.Headers) {
		hp := p.key("headers").key(name)
		v := s.Headers[name]
		if !validHeaderName(name) {
			r.add(src, hp, "is not a valid HTTP header name")
			continue
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			r.add(src, hp, "the value contains a line break")
			continue
		}
		if _, err := expandRefs(v, nil); err != nil {
			r.add(src, hp, "%v", err)
			continue
		}
		if sensitiveHeader(name) && !strings.Contains(v, "${") {
			r.add(src, hp, "literal secrets are not allowed; reference an environment variable, e.g. \"Bearer ${GITHUB_TOKEN}\"")
		}
	}
	if s.AllowedTools != nil {
		for i, pat := range *s.AllowedTools {
			checkGlob(r, src, p.key("allowed_tools").index(i), pat)
		}
	}
}

func checkStore(r *report, src *source, p fieldPath, s Store) {
	if s.Backend != "" {
		checkOneOf(r, src, p.key("backend"), s.Backend, BackendSQLite, BackendPostgres)
	}
	if s.URLEnv == "" {
		return
	}
	if !ValidEnvName(s.URLEnv) {
		r.add(src, p.key("url_env"), "%s (the PostgreSQL connection URL)", envNameMsg)
	} else if s.Backend != BackendPostgres {
		r.add(src, p.key("url_env"), "only used with backend = %q", BackendPostgres)
	}
}

func checkCluster(r *report, src *source, p fieldPath, s Store, c Cluster) {
	nonNegative(r, src, p.key("drain_timeout_secs"), c.DrainTimeoutSecs)
	if s.Backend != BackendPostgres {
		if c != (Cluster{DrainTimeoutSecs: c.DrainTimeoutSecs}) {
			r.add(src, p, "only used with [store] backend = %q: replicas share a PostgreSQL database", BackendPostgres)
		}
		return
	}
	if c.Name != "" && (strings.ContainsAny(c.Name, " \t\r\n") || len(c.Name) > 64) {
		r.add(src, p.key("name"), "must be 1-64 characters without spaces")
	}
	if c.HeartbeatSecs < 1 {
		r.add(src, p.key("heartbeat_secs"), "must be at least 1")
	}
	if c.LeaseSecs < 2*c.HeartbeatSecs {
		r.add(src, p.key("lease_secs"), "must be at least twice heartbeat_secs (%d): one late heartbeat must not make a live replica look dead", c.HeartbeatSecs)
	}
	nonNegative(r, src, p.key("store_retry_secs"), c.StoreRetrySecs)
	if c.SessionKeyEnv != "" && !ValidEnvName(c.SessionKeyEnv) {
		r.add(src, p.key("session_key_env"), "%s (the secret sealing MCP session ids)", envNameMsg)
	}
}

func checkTools(r *report, src *source, p fieldPath, t *Tools) {
	nonNegative(r, src, p.key("timeout_secs"), t.TimeoutSecs)
	nonNegative(r, src, p.key("max_result_chars"), t.MaxResultChars)
	nonNegative(r, src, p.key("max_result_image_bytes"), t.MaxResultImageBytes)
	nonNegative(r, src, p.key("loop_guard"), t.LoopGuard)
	nonNegative(r, src, p.key("agent_send_max_depth"), t.AgentSendMax)
	nonNegative(r, src, p.key("approval_timeout_secs"), t.ApprovalTimeoutSecs)
	for _, k := range sortedStringKeys(t.Timeouts) {
		kp := p.key("timeouts").key(k)
		if checkGlob(r, src, kp, k) && t.Timeouts[k] <= 0 {
			r.add(src, kp, "must be a positive number of seconds")
		}
	}
	for _, k := range sortedStringKeys(t.Untrusted) {
		kp := p.key("untrusted").key(k)
		if checkGlob(r, src, kp, k) {
			checkOneOf(r, src, kp, t.Untrusted[k], "allow", "ask", "deny")
		}
	}
	wp := p.key("web_fetch")
	nonNegative(r, src, wp.key("max_bytes"), t.WebFetch.MaxBytes)
	for i, h := range t.WebFetch.AllowHosts {
		if h == "" || strings.ContainsAny(h, "/@ ?#") {
			r.add(src, wp.key("allow_hosts").index(i), "%q is not a host name (write example.com, not a URL)", h)
		}
	}
	sp := p.key("shell")
	nonNegative(r, src, sp.key("timeout_secs"), t.Shell.TimeoutSecs)
	nonNegative(r, src, sp.key("max_output_bytes"), t.Shell.MaxOutputBytes)
}

// checkManifest checks one agent field by field, then runs the
// manifest's own Validate as a safety net so that config never accepts
// what the rest of agentd would refuse. A nil providers or servers map
// skips the cross-references (a manifest checked on its own).
func checkManifest(r *report, src *source, p fieldPath, m *manifest.Manifest, providers map[string]Provider, servers map[string]bool) {
	before := len(r.list)
	if !manifest.ValidName(m.Name) {
		r.add(src, p.key("name"), "%q is not a valid agent name (%s)", m.Name, nameRules)
	}
	switch m.Kind {
	case "", manifest.KindLLM:
		switch {
		case m.Provider == "":
			r.add(src, p.key("provider"), "required: the name of a [providers.NAME] table (%s)", strings.Join(sortedStringKeys(providers), ", "))
		case providers != nil && !hasKey(providers, m.Provider):
			r.add(src, p.key("provider"), "%q is not a configured provider (configured: %s)", m.Provider, strings.Join(sortedStringKeys(providers), ", "))
		}
		if m.Model == "" {
			r.add(src, p.key("model"), "required for an llm agent")
		}
	case manifest.KindMCPProxy:
	default:
		r.add(src, p.key("kind"), "%q is not one of %s, %s", m.Kind, manifest.KindLLM, manifest.KindMCPProxy)
	}
	if m.Temperature != nil {
		if t := *m.Temperature; math.IsNaN(t) || t < 0 || t > 2 {
			r.add(src, p.key("temperature"), "%v is outside 0..2", t)
		}
	}
	nonNegative(r, src, p.key("max_tokens"), m.MaxTokens)
	if !manifest.ValidReasoning(m.Reasoning) {
		r.add(src, p.key("reasoning"), "%q is not one of \"low\", \"medium\", \"high\"", m.Reasoning)
	}
	nonNegative(r, src, p.key("max_iterations"), m.MaxIterations)
	nonNegative(r, src, p.key("token_budget"), m.TokenBudget)
	for i, pat := range m.Tools {
		checkGlob(r, src, p.key("tools").index(i), pat)
	}
	for i, s := range m.MCPServers {
		if servers != nil && !servers[s] {
			r.add(src, p.key("mcp_servers").index(i), "%q is not the name of an [[mcp_servers]] entry", s)
		}
	}
	for i, s := range m.Skills {
		sp := p.key("skills").index(i)
		if s.ID == "" {
			r.add(src, sp.key("id"), "required")
		}
		if s.Name == "" {
			r.add(src, sp.key("name"), "required")
		}
	}
	if m.Workspace != "" && !filepath.IsAbs(m.Workspace) && !filepath.IsLocal(m.Workspace) {
		r.add(src, p.key("workspace"), "%q leaves AGENTD_HOME/workspaces; use a path below it or an absolute path", m.Workspace)
	}
	if len(r.list) > before {
		return
	}
	if err := m.Validate(); err != nil {
		// One problem a line, each by its field.
		for _, line := range strings.Split(err.Error(), "\n") {
			field, msg, ok := strings.Cut(line, ": ")
			if !ok || strings.ContainsAny(field, " ,") {
				r.add(src, p, "%s", line)
				continue
			}
			r.add(src, append(slices.Clip(p), parsePath(field)...), "%s", msg)
		}
	}
}

// parsePath reads a simple path such as skills[0].id.
func parsePath(s string) fieldPath {
	var p fieldPath
	for part := range strings.SplitSeq(s, ".") {
		name, rest, _ := strings.Cut(part, "[")
		p = p.key(name)
		for rest != "" {
			num, after, ok := strings.Cut(rest, "]")
			n, err := strconv.Atoi(num)
			if !ok || err != nil {
				break
			}
			p = p.index(n)
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return p
}

func checkOneOf(r *report, src *source, p fieldPath, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	r.add(src, p, "%q is not one of %s", v, strings.Join(allowed, ", "))
}

func nonNegative(r *report, src *source, p fieldPath, n int) {
	if n < 0 {
		r.add(src, p, "must not be negative")
	}
}

// checkURL accepts an absolute http(s) URL without credentials. The
// value is never quoted back: URLs carry tokens in queries and userinfo.
func checkURL(r *report, src *source, p fieldPath, s string) {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		r.add(src, p, urlMsg)
	case u.User != nil:
		r.add(src, p, credsMsg)
	}
}

// checkRoutePath accepts an HTTP route prefix that cannot shadow the
// API or the well-known documents.
func checkRoutePath(r *report, src *source, p fieldPath, s string) {
	switch {
	case !strings.HasPrefix(s, "/") || s == "/" || path.Clean(s) != s || strings.ContainsAny(s, "?#{} \t"):
		r.add(src, p, "%q is not a clean path such as /mcp", s)
	case s == "/api" || strings.HasPrefix(s, "/api/") || strings.HasPrefix(s, "/.well-known"):
		r.add(src, p, "%q is reserved for the HTTP API", s)
	}
}

// checkGlob accepts a non-empty path.Match pattern.
func checkGlob(r *report, src *source, p fieldPath, pat string) bool {
	if pat == "" {
		r.add(src, p, "empty pattern")
		return false
	}
	if _, err := path.Match(pat, ""); err != nil {
		r.add(src, p, "bad pattern %q: not a valid pattern (use *, ? and [...])", pat)
		return false
	}
	return true
}

func validHostPort(s string) bool {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

func hasDotDot(cmd string) bool {
	for seg := range strings.FieldsFuncSeq(cmd, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return true
		}
	}
	return false
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isBareKeyByte(c) && c != '_' || strings.IndexByte("!#$%&'*+.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// sensitiveHeader reports headers whose values are credentials by name.
func sensitiveHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	for _, w := range []string{"token", "secret", "key", "auth", "password", "credential", "session"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// checkServer validates the admission settings: each entry must be what
// its list holds, since a typo there either locks clients out or, worse,
// silently admits nothing it was meant to.
func checkServer(r *report, src *source, p fieldPath, s Server) {
	for i, h := range s.AllowedHosts {
		name := strings.TrimPrefix(h, "*.")
		if name == "" || strings.ContainsAny(name, "/:@ *") || strings.HasPrefix(name, ".") {
			r.add(src, p.key("allowed_hosts").index(i), "%q is not a host name (example.com, *.example.com, or an IP address; no scheme or port)", h)
		}
	}
	for i, o := range s.AllowedOrigins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil || u.RawQuery != "" {
			r.add(src, p.key("allowed_origins").index(i), "%q is not an origin (http[s]://host[:port])", o)
		}
	}
	for i, t := range s.TrustedProxies {
		if _, _, err := net.ParseCIDR(t); err != nil && net.ParseIP(t) == nil {
			r.add(src, p.key("trusted_proxies").index(i), "%q is not an IP address or CIDR range (10.0.0.0/8)", t)
		}
	}
}
