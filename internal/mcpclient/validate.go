package mcpclient

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/manifest"
)

// Transport types of config.MCPTransport.Type.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// maxTimeoutSecs bounds timeout_secs (a day): beyond it a typo, not a plan.
const maxTimeoutSecs = 86400

// ValidateServer checks one server entry the way Add does, without
// connecting. Error messages never quote header values or URLs.
func ValidateServer(s config.MCPServer) error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	switch {
	case s.Name == "":
		bad("name is empty")
	case !manifest.ValidName(s.Name):
		bad("name %q: use 1-64 letters, digits, '-' or '_', starting with a letter or digit", s.Name)
	}
	if s.TimeoutSecs < 0 || s.TimeoutSecs > maxTimeoutSecs {
		bad("timeout_secs must be between 0 (default) and %d", maxTimeoutSecs)
	}
	t := s.Transport
	switch t.Type {
	case TransportStdio:
		if !stdioSupported {
			bad("stdio servers are not supported on this system")
		}
		if t.Command == "" {
			bad("transport.command is empty")
		}
		if hasDotDot(t.Command) {
			bad("transport.command must not contain a '..' path segment")
		}
		if t.URL != "" {
			bad("transport.url is for http and sse servers")
		}
		for _, n := range s.Env {
			if !validEnvName(n) {
				bad("env: %q is not a variable name", n)
			}
		}
		if len(s.Headers) > 0 {
			bad("headers are for http and sse servers")
		}
	case TransportHTTP, TransportSSE:
		if t.URL == "" {
			bad("transport.url is empty")
		} else if u, err := url.Parse(t.URL); err != nil {
			bad("transport.url does not parse")
		} else if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			bad("transport.url must be an http or https URL with a host")
		}
		if t.Command != "" || len(t.Args) > 0 {
			bad("transport.command and args are for stdio servers")
		}
		for k, v := range s.Headers {
			if !validHeaderName(k) {
				bad("headers: %q is not a header name", k)
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				bad("headers: the value of %q contains a line break", k)
			}
		}
	case "":
		bad("transport.type is empty (stdio, http or sse)")
	default:
		bad("transport.type %q is not stdio, http or sse", t.Type)
	}
	if s.AllowedTools != nil {
		for _, p := range *s.AllowedTools {
			if _, err := path.Match(p, ""); err != nil {
				bad("allowed_tools: bad pattern %q", p)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("mcp server %q: %w", s.Name, errors.Join(errs...))
}

// hasDotDot reports whether p has a ".." path segment.
func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(p), "/"), "..")
}

func validEnvName(n string) bool {
	if n == "" {
		return false
	}
	for i, r := range n {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// validHeaderName accepts an RFC 9110 token.
func validHeaderName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
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
