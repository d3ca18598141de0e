package acpagent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/tool"
)

// EditorServer is one MCP server the editor passed with session/new or
// session/load, in agentd's config form.
type EditorServer struct {
	Config config.MCPServer
	// Values holds the literal values the editor gave for the environment
	// variables Config.Env names and the ${NAME} references of
	// Config.Headers. They are the editor's to give; nothing of agentd's
	// own environment is passed to these servers but PATH, HOME and
	// TMPDIR.
	Values map[string]string
}

// MCPSet is the MCP servers connected for one session.
type MCPSet interface {
	Tools() []tool.Tool
	Close() error
}

// ConnectMCP connects a session's editor MCP servers. It returns the set
// of servers it started (including ones still retrying) and an error
// naming each server that is not connected, which the editor is told
// about; the session is served either way.
type ConnectMCP func(ctx context.Context, servers []EditorServer) (MCPSet, error)

// MCPConnectorOptions configure NewMCPConnector.
type MCPConnectorOptions struct {
	// Client is the base configuration of each mcpclient.Manager; its
	// LookupEnv and Home are replaced per server.
	Client mcpclient.Options
	// Ambient reads agentd's own environment, consulted only for PATH,
	// HOME and TMPDIR of stdio servers. nil gives them none.
	Ambient func(string) (string, bool)
	// ConnectWait bounds how long session/new waits for the servers'
	// first connection attempts; default 20 s. Servers that are slower
	// keep connecting and their tools appear from the next turn.
	ConnectWait time.Duration
}

// NewMCPConnector returns a ConnectMCP built on mcpclient. Each editor
// server gets a Manager of its own: a Manager resolves every name through
// one LookupEnv, and two editor servers may give the same variable
// different values. The managers live as long as the session.
func NewMCPConnector(opts MCPConnectorOptions) ConnectMCP {
	if opts.ConnectWait <= 0 {
		opts.ConnectWait = 20 * time.Second
	}
	return func(ctx context.Context, servers []EditorServer) (MCPSet, error) {
		set := &managerSet{}
		var errs []error
		for _, es := range servers {
			mo := opts.Client
			mo.Home = ""
			mo.LookupEnv = editorEnv(es.Values, opts.Ambient)
			m := mcpclient.NewManager(mo)
			if err := m.Add(ctx, es.Config); err != nil {
				_ = m.Close()
				errs = append(errs, fmt.Errorf("mcp server %q: %w", es.Config.Name, err))
				continue
			}
			set.managers = append(set.managers, m)
			set.names = append(set.names, es.Config.Name)
		}
		errs = append(errs, set.waitConnected(ctx, opts.ConnectWait)...)
		if len(set.managers) == 0 {
			return nil, errors.Join(errs...)
		}
		return set, errors.Join(errs...)
	}
}

func editorEnv(values map[string]string, ambient func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if v, ok := values[name]; ok {
			return v, true
		}
		switch name {
		case "PATH", "HOME", "TMPDIR":
			if ambient != nil {
				return ambient(name)
			}
		}
		return "", false
	}
}

// WaitServers waits until every server of m has connected or failed its
// first attempt, for at most wait, and returns an error for each one not
// connected: `agentd acp` connects the config's servers in the background
// while the editor opens its session, and a turn that started before
// them would find their tools missing.
func WaitServers(ctx context.Context, m *mcpclient.Manager, wait time.Duration) []error {
	set := &managerSet{}
	for _, st := range m.Status() {
		set.managers = append(set.managers, m)
		set.names = append(set.names, st.Name)
	}
	if len(set.names) == 0 {
		return nil
	}
	return set.waitConnected(ctx, wait)
}

type managerSet struct {
	managers []*mcpclient.Manager
	names    []string
}

// waitConnected waits until every server has connected or failed its
// first attempt, and returns an error for each one not connected.
func (s *managerSet) waitConnected(ctx context.Context, wait time.Duration) []error {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		settled, errs := s.check(false)
		if settled {
			return errs
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			_, errs := s.check(true)
			return errs
		case <-ctx.Done():
			_, errs := s.check(true)
			return errs
		}
	}
}

// check reports whether every server's first attempt is over and, when
// it is (or final is set), the error of each server not connected.
func (s *managerSet) check(final bool) (bool, []error) {
	var errs []error
	for i, m := range s.managers {
		st := m.Status()
		state, lastErr := mcpclient.StateConnecting, ""
		for _, ss := range st {
			if ss.Name == s.names[i] {
				state, lastErr = ss.State, ss.LastError
			}
		}
		switch state {
		case mcpclient.StateConnected, mcpclient.StateDisabled:
		case mcpclient.StateFailed:
			errs = append(errs, fmt.Errorf("mcp server %q failed to connect (agentd keeps retrying): %s", s.names[i], lastErr))
		default:
			if !final {
				return false, nil
			}
			errs = append(errs, fmt.Errorf("mcp server %q is still connecting; its tools appear once it is up", s.names[i]))
		}
	}
	return true, errs
}

func (s *managerSet) Tools() []tool.Tool {
	var out []tool.Tool
	for _, m := range s.managers {
		out = append(out, m.Tools()...)
	}
	return out
}

func (s *managerSet) Close() error {
	errs := make([]error, len(s.managers))
	var wg sync.WaitGroup
	for i, m := range s.managers {
		wg.Go(func() { errs[i] = m.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

var (
	envNameRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	badNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
)

// maxServerName leaves room under mcpclient's 48-character limit for a
// de-duplicating suffix.
const maxServerName = 40

// serverName turns an editor's server name into a valid agentd one:
// tools are named mcp_{server}_{tool} after it.
func serverName(name string) string {
	n := strings.Trim(badNameChars.ReplaceAllString(name, "_"), "_-")
	if n == "" {
		n = "editor"
	}
	if len(n) > maxServerName {
		n = n[:maxServerName]
	}
	return n
}

// editorServers converts the editor's MCP servers. Entries agentd cannot
// use are left out with a notice for the user. Servers the editor names
// are the user's own choice, so their URLs may point at loopback or
// private addresses (a local dev server is the common case), and every
// tool they offer is allowed; the agent's tool patterns still decide what
// it sees.
func editorServers(in []acp.McpServer, cwd string) ([]EditorServer, []string) {
	var out []EditorServer
	var notices []string
	taken := map[string]bool{}
	all := []string{"*"}
	for i, srv := range in {
		var (
			name    string
			es      EditorServer
			headers []acp.HttpHeader
		)
		es.Values = map[string]string{}
		switch {
		case srv.Stdio != nil:
			name = srv.Stdio.Name
			es.Config.Transport = config.MCPTransport{Type: "stdio", Command: srv.Stdio.Command, Args: srv.Stdio.Args, Dir: cwd}
			for _, ev := range srv.Stdio.Env {
				if !envNameRE.MatchString(ev.Name) {
					notices = append(notices, fmt.Sprintf("MCP server %q: environment variable %q has an invalid name and was not passed", name, ev.Name))
					continue
				}
				es.Config.Env = append(es.Config.Env, ev.Name)
				es.Values[ev.Name] = ev.Value
			}
		case srv.Http != nil:
			name, headers = srv.Http.Name, srv.Http.Headers
			es.Config.Transport = config.MCPTransport{Type: "http", URL: srv.Http.Url}
		case srv.Sse != nil:
			name, headers = srv.Sse.Name, srv.Sse.Headers
			es.Config.Transport = config.MCPTransport{Type: "sse", URL: srv.Sse.Url}
		case srv.Acp != nil:
			notices = append(notices, fmt.Sprintf("MCP server %q uses the ACP transport, which agentd does not support; it was not connected", srv.Acp.Name))
			continue
		default:
			notices = append(notices, fmt.Sprintf("MCP server #%d has an unknown transport; it was not connected", i+1))
			continue
		}
		for j, h := range headers {
			if !headerNameRE.MatchString(h.Name) {
				notices = append(notices, fmt.Sprintf("MCP server %q: header %q has an invalid name and was not sent", name, h.Name))
				continue
			}
			// Literal values travel as references so that nothing in
			// them is taken for a ${NAME} of agentd's environment.
			ref := "ACP_HEADER_" + strconv.Itoa(j)
			if es.Config.Headers == nil {
				es.Config.Headers = map[string]string{}
			}
			es.Config.Headers[h.Name] = "${" + ref + "}"
			es.Values[ref] = h.Value
		}
		base := serverName(name)
		unique := base
		for n := 2; taken[strings.ToLower(strings.ReplaceAll(unique, "-", "_"))]; n++ {
			unique = base + "_" + strconv.Itoa(n)
		}
		taken[strings.ToLower(strings.ReplaceAll(unique, "-", "_"))] = true
		es.Config.Name = unique
		es.Config.AllowedTools = &all
		es.Config.AllowPrivate = true
		out = append(out, es)
	}
	return out, notices
}

// connectMCP connects the editor's servers for ss and returns the set and
// the notices for the user.
func (s *server) connectMCP(ctx context.Context, ss *session, in []acp.McpServer) (MCPSet, []string) {
	if len(in) == 0 {
		return nil, nil
	}
	servers, notices := editorServers(in, ss.cwd)
	if len(servers) == 0 {
		return nil, notices
	}
	if s.opts.ConnectMCP == nil {
		return nil, append(notices, "This agentd cannot connect MCP servers from the editor; they were ignored.")
	}
	set, err := s.opts.ConnectMCP(ctx, servers)
	if err != nil {
		s.log.Warn("editor mcp servers", "session", ss.id, "err", err)
		for _, line := range strings.Split(err.Error(), "\n") {
			notices = append(notices, "⚠ "+line)
		}
	}
	return set, notices
}
