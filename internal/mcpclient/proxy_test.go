package mcpclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/netguard"
)

// forwardProxy is an HTTP forward proxy on loopback that serves the names
// in routes (host:port as requested → a loopback host:port) and records
// every request's destination. A name it does not know gets 502.
type forwardProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func startForwardProxy(t *testing.T, routes map[string]string) *forwardProxy {
	t.Helper()
	p := &forwardProxy{}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = routes[pr.In.URL.Host]
			pr.Out.Host = pr.In.URL.Host
		},
		FlushInterval: -1, // event streams pass as they come
	}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.URL.Host)
		p.mu.Unlock()
		if !r.URL.IsAbs() || routes[r.URL.Host] == "" {
			http.Error(w, "not a proxied request for a known host", http.StatusBadGateway)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *forwardProxy) destinations() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// TestEverythingThroughProxy: with HTTP_PROXY set, agentd reaches a
// remote MCP server (server-everything over Streamable HTTP) through the
// proxy, and the SSRF guard still judges the destination: the server's
// name resolves to a public address here, and a metadata address is
// refused before the proxy sees a request (issue 30, item 9).
func TestEverythingThroughProxy(t *testing.T) {
	p := interop(t)
	target := strings.TrimPrefix(startNodeHTTP(t, p, "streamableHttp"), "http://")
	_, port, _ := strings.Cut(target, ":")
	name := "everything.example:" + port
	proxy := startForwardProxy(t, map[string]string{name: target})
	px, err := netguard.ProxyFromEnv(func(k string) (string, bool) {
		if k == "HTTP_PROXY" {
			return proxy.URL, true
		}
		return "", false
	})
	if err != nil || px == nil {
		t.Fatalf("ProxyFromEnv: %v, %v", px, err)
	}
	o := testOptions(nil)
	o.Guard = func(allowPrivate bool) *netguard.Policy {
		return &netguard.Policy{AllowPrivate: allowPrivate, Proxy: px,
			LookupIP: func(_ context.Context, host string) ([]netip.Addr, error) {
				if host == "everything.example" {
					return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
				}
				return nil, &url.Error{Op: "lookup", URL: host, Err: http.ErrNotSupported}
			}}
	}
	m := newTestManager(t, o)
	if err := m.Add(t.Context(), config.MCPServer{Name: "everything", TimeoutSecs: 10,
		Transport: config.MCPTransport{Type: TransportHTTP, URL: "http://" + name + "/mcp"}}); err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "everything")
	if res := callText(t, m, "mcp_everything_echo", map[string]string{"message": "via proxy"}); res.Content != "Echo: via proxy" {
		t.Errorf("echo = %q", res.Content)
	}
	if d := proxy.destinations(); len(d) == 0 || d[0] != name {
		t.Errorf("the proxy saw %q, want requests for %s", d, name)
	}

	// A metadata destination is refused by the guard, not handed to the
	// proxy.
	before := len(proxy.destinations())
	err = m.Add(t.Context(), config.MCPServer{Name: "metadata", TimeoutSecs: 5,
		Transport: config.MCPTransport{Type: TransportHTTP, URL: "http://169.254.169.254/mcp"}})
	if err == nil {
		waitFor(t, 10*time.Second, "the metadata server's first attempt", func() bool {
			st, _ := status(m, "metadata")
			return st.LastError != ""
		})
		if st, _ := status(m, "metadata"); st.Connected || !strings.Contains(st.LastError, "cloud metadata address") {
			t.Errorf("metadata server: %+v", st)
		}
	} else if !strings.Contains(err.Error(), "metadata") {
		t.Errorf("metadata server refused with %v", err)
	}
	if after := proxy.destinations(); len(after) != before {
		t.Errorf("the proxy was asked for %q", after[before:])
	}
}
