package daemon

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/mcpclient"
	"github.com/agentd/agentd/internal/oauthrs"
	"github.com/agentd/agentd/internal/webui"
)

// routeMux is the daemon's ServeMux. It records every pattern it is given,
// so the set of routes can be enumerated (the auth matrix test proves each
// non-public one refuses a missing or wrong key).
type routeMux struct {
	*http.ServeMux

	mu       sync.Mutex
	patterns []string
}

func newRouteMux() *routeMux { return &routeMux{ServeMux: http.NewServeMux()} }

// Handle registers h for pattern.
func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.record(pattern)
	m.ServeMux.Handle(pattern, tagged(pattern, h))
}

// HandleFunc registers f for pattern.
func (m *routeMux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.record(pattern)
	m.ServeMux.Handle(pattern, tagged(pattern, http.HandlerFunc(f)))
}

// tagged tells the observing middleware which pattern matched, for the
// route label of metrics and spans (a path would be unbounded).
func tagged(pattern string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.TagRoute(w, pattern)
		h.ServeHTTP(w, r)
	})
}

func (m *routeMux) record(p string) {
	m.mu.Lock()
	m.patterns = append(m.patterns, p)
	m.mu.Unlock()
}

// Routes returns every registered ServeMux pattern ("GET /api/agents",
// "/mcp", ...), sorted.
func (d *Daemon) Routes() []string {
	d.mux.mu.Lock()
	defer d.mux.mu.Unlock()
	out := slices.Clone(d.mux.patterns)
	slices.Sort(out)
	return out
}

// publicRoute is a route served without credentials, and why.
type publicRoute struct {
	// pattern is the ServeMux pattern, exactly as registered.
	pattern string
	// only narrows the route to some of its requests (nil: all of them).
	only func(d *Daemon, r *http.Request) bool
	why  string
}

// publicRoutes is the one list of what anyone may reach. Everything else
// the mux serves needs credentials: Protect asks public() with the
// pattern the request routes to, so a new route is protected unless it
// is listed here, and TestRouteTableAdmission walks the route table to
// hold every route to one of the two.
func (d *Daemon) publicRoutes() []publicRoute {
	lp := strings.TrimRight(d.Config().A2A.ListenPath, "/")
	return []publicRoute{
		{"GET /api/health", nil, "load balancers' and probes' check"},
		{"GET " + httpapi.OpenAPIPath, nil, "the API's description: no data, the same for every daemon of a version, read by clients and generators before they hold a key"},
		{"GET /livez", nil, "liveness probe (probes carry no keys)"},
		{"GET /readyz", nil, "readiness probe (probes carry no keys)"},
		{"POST " + httpapi.UIPath + "login", nil, "the dashboard's login: the key is in its body"},
		{"GET /{$}", nil, "the dashboard's page, before anyone has logged in"},
		{"GET " + webui.Prefix, nil, "the dashboard's static files (no data)"},
		{"GET " + mcpclient.CallbackPath, nil, "an authorization server's redirect: its state is the credential"},
		{"GET /.well-known/agent-card.json", (*Daemon).cardsPublic, "the default agent's card"},
		{"GET /.well-known/agent.json", (*Daemon).cardsPublic, "the default agent's card (A2A 0.2 name)"},
		{lp + "/agents/{name}/{rest...}", (*Daemon).agentCardPath, "an agent's card, below its A2A routes"},
		{"GET " + oauthrs.WellKnown, (*Daemon).oauthPublic, "OAuth protected resource metadata"},
		{"GET " + oauthrs.WellKnown + "/{path...}", (*Daemon).oauthPublic, "OAuth protected resource metadata"},
		{"GET /metrics", (*Daemon).metricsPublic, "[metrics] public = true"},
	}
}

// public reports whether r may be served without credentials: the
// pattern it routes to is listed in publicRoutes, and the entry's
// condition holds.
func (d *Daemon) public(r *http.Request) bool {
	_, pattern := d.mux.ServeMux.Handler(r)
	for _, p := range d.publicList {
		if p.pattern == pattern {
			return p.only == nil || p.only(d, r)
		}
	}
	return false
}

func (d *Daemon) cardsPublic(*http.Request) bool { return d.publicCards() }

func (d *Daemon) agentCardPath(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && d.publicCard(r.URL.Path)
}

func (d *Daemon) oauthPublic(*http.Request) bool { return d.tokens != nil }

func (d *Daemon) metricsPublic(*http.Request) bool { return d.Config().Metrics.Public }

// hostPolicy is what the Host header may name: the listen address, the
// public URL's host and [server] allowed_hosts (localhost and loopback
// literals always).
func (d *Daemon) hostPolicy() httpapi.HostPolicy {
	p := httpapi.HostPolicy{Names: slices.Clone(d.Config().Server.AllowedHosts)}
	if host, _, err := net.SplitHostPort(d.Config().Listen); err == nil {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			p.AnyIP = true
		} else {
			p.Names = append(p.Names, host)
		}
	}
	if u, err := url.Parse(d.Config().PublicURL); err == nil && u.Hostname() != "" {
		p.Names = append(p.Names, u.Hostname())
	}
	return p
}

// trustedOrigin reports whether a browser page of origin may call r's
// route across sites: [server] allowed_origins anywhere, and [mcp]
// allowed_origins below the MCP endpoint (the MCP spec's Origin rule).
func (d *Daemon) trustedOrigin(r *http.Request, origin string) bool {
	if origin == "" {
		return false
	}
	if slices.ContainsFunc(d.Config().Server.AllowedOrigins, func(o string) bool { return sameOrigin(o, origin) }) {
		return true
	}
	mp := d.Config().MCP.Path
	if mp == "" {
		mp = "/mcp"
	}
	if r.URL.Path == mp || strings.HasPrefix(r.URL.Path, mp+"/") {
		return slices.ContainsFunc(d.Config().MCP.AllowedOrigins, func(o string) bool { return sameOrigin(o, origin) })
	}
	return false
}

func sameOrigin(a, b string) bool {
	return strings.EqualFold(strings.TrimRight(a, "/"), strings.TrimRight(b, "/"))
}
