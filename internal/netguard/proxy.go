package netguard

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// Proxy is an outbound HTTP proxy chosen by the standard variables
// (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, or their lower-case forms). A proxy
// connects on agentd's behalf, out of DialContext's sight, so a Policy
// with a Proxy checks a proxied request's destination itself, before the
// request is handed to the proxy: the URL's host is classified, or
// resolved and every address checked, as a direct connection's would be.
// The proxy resolves the name again: a name whose answers change between
// the two lookups (DNS rebinding) is the proxy's to refuse, as it is for
// every client behind it. Requests NO_PROXY exempts, and loopback
// destinations (never proxied), are dialled directly through the guard.
type Proxy struct {
	fn func(*url.URL) (*url.URL, error)
	// hosts are the proxies' host:port: operator-chosen, dialled without
	// the guard (a proxy is often on loopback or the private network).
	hosts map[string]bool
}

// ProxyFromEnv reads the proxy variables through lookup (nil: none) and
// returns nil when neither HTTPS_PROXY nor HTTP_PROXY is set. A
// variable's upper-case form wins over its lower-case one.
func ProxyFromEnv(lookup func(string) (string, bool)) (*Proxy, error) {
	if lookup == nil {
		return nil, nil
	}
	get := func(name string) string {
		if v, ok := lookup(name); ok && v != "" {
			return v
		}
		v, _ := lookup(strings.ToLower(name))
		return v
	}
	cfg := &httpproxy.Config{HTTPSProxy: get("HTTPS_PROXY"), HTTPProxy: get("HTTP_PROXY"), NoProxy: get("NO_PROXY")}
	if cfg.HTTPSProxy == "" && cfg.HTTPProxy == "" {
		return nil, nil
	}
	p := &Proxy{fn: cfg.ProxyFunc(), hosts: map[string]bool{}}
	for _, v := range []string{cfg.HTTPSProxy, cfg.HTTPProxy} {
		if v == "" {
			continue
		}
		// As httpproxy reads it: a bare host:port is an http:// proxy.
		u, err := url.Parse(v)
		if err != nil || u.Host == "" {
			u, err = url.Parse("http://" + v)
		}
		if err != nil || u.Host == "" {
			return nil, &BlockedError{Reason: "the proxy variable " + redactProxy(v) + " is not a URL"}
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "socks5": "1080"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		p.hosts[net.JoinHostPort(u.Hostname(), port)] = true
	}
	return p, nil
}

// redactProxy is a proxy variable's value without its credentials.
func redactProxy(v string) string {
	if u, err := url.Parse(v); err == nil && u.User != nil {
		u.User = url.User("redacted")
		return u.String()
	}
	if i := strings.LastIndex(v, "@"); i >= 0 {
		return "…" + v[i:]
	}
	return v
}

// forRequest is the Transport's Proxy: the proxy of req, once its
// destination passed the policy.
func (p *Policy) forRequest(req *http.Request) (*url.URL, error) {
	pu, err := p.Proxy.fn(req.URL)
	if err != nil || pu == nil {
		return pu, err
	}
	if err := p.CheckParsedURL(req.Context(), req.URL); err != nil {
		return nil, err
	}
	return pu, nil
}

// dialProxied dials a proxy unguarded, and anything else through the
// guard.
func (p *Policy) dialProxied(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.Proxy.hosts[addr] {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		return d.DialContext(ctx, network, addr)
	}
	return p.DialContext(ctx, network, addr)
}
