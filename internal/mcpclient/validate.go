package mcpclient

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/agentd/agentd/internal/config"
)

// Transport types of config.MCPTransport.Type.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// ValidateServer checks one server entry the way Add does, without
// connecting: config.ValidateMCPServer, the one validation of an entry,
// and whether this system can run a stdio server. Error messages never
// quote header values or URLs.
func ValidateServer(s config.MCPServer) error {
	if err := config.ValidateMCPServer(s); err != nil {
		return fmt.Errorf("mcp server %q: %w", s.Name, err)
	}
	if s.Transport.Type == TransportStdio && !stdioSupported {
		return fmt.Errorf("mcp server %q: transport.type: stdio servers are not supported on this system", s.Name)
	}
	return nil
}

// enabled reports whether a server entry is enabled (nil means yes).
func enabled(s config.MCPServer) bool { return s.Enabled == nil || *s.Enabled }

// RedactedConfig returns s with every header value replaced, for the
// API's list of configured servers and for logs.
func RedactedConfig(s config.MCPServer) config.MCPServer {
	if len(s.Headers) > 0 {
		h := make(map[string]string, len(s.Headers))
		for k := range s.Headers {
			h[k] = "[redacted]"
		}
		s.Headers = h
	}
	if u, err := url.Parse(s.Transport.URL); err == nil && (u.User != nil || u.RawQuery != "") {
		s.Transport.URL = redactURL(u)
	}
	return s
}

// redactURL hides credentials and query values, which often carry tokens.
func redactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		c.User = url.User("[redacted]")
	}
	if c.RawQuery != "" {
		q := c.Query()
		for k := range q {
			q[k] = []string{"[redacted]"}
		}
		c.RawQuery = q.Encode()
	}
	return c.String()
}

// urlSecrets returns the values of raw's query and its password, in the
// spellings an error message may quote them (as written and decoded);
// values shorter than 4 bytes are left (they would redact ordinary words).
func urlSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	add := func(v string) {
		if len(v) >= 4 {
			out = append(out, v)
		}
	}
	if p, ok := u.User.Password(); ok {
		add(p)
		add(url.QueryEscape(p))
	}
	for _, pair := range strings.Split(u.RawQuery, "&") {
		_, v, _ := strings.Cut(pair, "=")
		add(v)
		if dv, err := url.QueryUnescape(v); err == nil && dv != v {
			add(dv)
		}
	}
	return out
}
