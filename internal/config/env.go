package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/agentd/agentd/internal/manifest"
)

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidEnvName reports whether s can name an environment variable.
func ValidEnvName(s string) bool { return envNameRE.MatchString(s) }

func (c *Config) lookup(name string) (string, bool) {
	if c.lookupEnv != nil {
		return c.lookupEnv(name)
	}
	return os.LookupEnv(name)
}

// LookupSecret reads the environment variable a config field names
// (a provider's api_key_env, an A2A token_env, ...). A variable that is
// set but empty counts as unset: an empty key only fails later and less
// clearly.
func (c *Config) LookupSecret(envName string) (string, bool) {
	if envName == "" {
		return "", false
	}
	v, ok := c.lookup(envName)
	if !ok || v == "" {
		return "", false
	}
	return v, true
}

// APIKeyValue returns the key clients must present: the literal api_key,
// else the value of api_key_env, else "" (no authentication).
func (c *Config) APIKeyValue() string {
	if c.APIKey != "" {
		return c.APIKey.Reveal()
	}
	v, _ := c.LookupSecret(c.APIKeyEnv)
	return v
}

// ExpandHeaders returns h with every ${NAME} replaced by the variable's
// value, for use when connecting. Errors name the header and the
// variable, never a value.
func (c *Config) ExpandHeaders(h map[string]string) (map[string]string, error) {
	if h == nil {
		return nil, nil
	}
	out := make(map[string]string, len(h))
	for _, name := range sortedStringKeys(h) {
		v, err := expandRefs(h[name], func(ref string) (string, bool) { return c.LookupSecret(ref) })
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// expandRefs replaces ${NAME} references in s. A '$' not followed by '{'
// is literal.
func expandRefs(s string, lookup func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ (write ${VARIABLE_NAME})")
		}
		name := s[i+2 : i+end]
		if !ValidEnvName(name) {
			return "", fmt.Errorf("${...} must hold an environment variable name")
		}
		if lookup != nil {
			v, ok := lookup(name)
			if !ok {
				return "", fmt.Errorf("environment variable %s is not set", name)
			}
			b.WriteString(v)
		}
		s = s[i+end+1:]
	}
}

// envRefOnlyRE matches header values that reveal nothing but variable
// names: "${TOKEN}", "Bearer ${TOKEN}".
var envRefOnlyRE = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9-]* )?(?:\$\{[A-Za-z_][A-Za-z0-9_]*\})+$`)

// RedactHeaders returns a copy of h safe to log or return from the API.
// Values that only reference variables ("Bearer ${TOKEN}") are kept, as
// they show which variable is used; every other value, including an
// expanded one, becomes "[redacted]".
func RedactHeaders(h map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		if v != "" && !envRefOnlyRE.MatchString(v) {
			v = redacted
		}
		out[k] = v
	}
	return out
}

// WorkspaceDir is the directory agent's file tools are confined to: the
// manifest's workspace when absolute, else HOME/workspaces/<workspace or
// agent name>.
func (c *Config) WorkspaceDir(agent string, m manifest.Manifest) string {
	if filepath.IsAbs(m.Workspace) {
		return filepath.Clean(m.Workspace)
	}
	rel := m.Workspace
	if rel == "" {
		rel = agent
	}
	return filepath.Join(c.Home, "workspaces", rel)
}

// PostgresURL returns the PostgreSQL connection URL, read from the
// variable store.url_env names. The error names the variable, never a
// value.
func (c *Config) PostgresURL() (Secret, error) {
	name := c.Store.URLEnv
	if name == "" {
		name = DefaultPostgresURLEnv
	}
	v, ok := c.LookupSecret(name)
	if !ok {
		return "", fmt.Errorf("store.url_env: environment variable %s is not set; it must hold the PostgreSQL connection URL (postgres://user:password@host:5432/database)", name)
	}
	return Secret(v), nil
}

// MinSessionKeyLen is the shortest secret accepted to seal MCP session
// ids: shorter ones could be guessed.
const MinSessionKeyLen = 32

// SessionKeys returns the secrets that seal MCP session ids across
// replicas, read from the variable cluster.session_key_env names: the
// first seals, every one opens. None (and no error) when the setting is
// unset: the replicas then share a key kept in the database. The error
// names the variable, never a value.
func (c *Config) SessionKeys() ([]Secret, error) {
	name := c.Cluster.SessionKeyEnv
	if name == "" {
		return nil, nil
	}
	v, ok := c.LookupSecret(name)
	if !ok {
		return nil, fmt.Errorf("cluster.session_key_env: environment variable %s is not set; it must hold a secret of at least %d characters (several, comma-separated, while rotating)", name, MinSessionKeyLen)
	}
	var keys []Secret
	for i, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		if len(k) < MinSessionKeyLen {
			return nil, fmt.Errorf("cluster.session_key_env: secret %d in %s is %d characters; at least %d are needed (generate one with: openssl rand -base64 48)", i+1, name, len(k), MinSessionKeyLen)
		}
		keys = append(keys, Secret(k))
	}
	return keys, nil
}

// StorePath is the SQLite database: HOME/agentd.db.
func (c *Config) StorePath() string { return filepath.Join(c.Home, "agentd.db") }

// MCPServerEnabled reports whether s should be connected; servers are
// enabled unless they say enabled = false.
func (c *Config) MCPServerEnabled(s MCPServer) bool { return s.Enabled == nil || *s.Enabled }

func sortedStringKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
