package httpapi

import (
	"context"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// Admission: what a request must be before any route sees it. Protect
// applies these checks to every request of the listener, in this order,
// so a handler cannot opt out by forgetting (docs/identity.md):
//
//  1. Host: one of the daemon's own names (hostAllowed). A page that
//     rebinds its DNS name to 127.0.0.1 is same-origin with the daemon in
//     the browser's eyes, but its requests still carry its own name.
//  2. Cross-site: a request a browser marks as coming from another site
//     (Sec-Fetch-Site, Origin) is refused on every route that is not
//     public, whatever its method: a "simple" cross-site POST (text/plain,
//     no preflight) has its side effect even though its answer is
//     unreadable. State-changing requests are refused on public routes
//     too (the dashboard's login).
//  3. Failed authentications, limited per client address (AuthLimiter).
//  4. Credentials (bearer key, OAuth token, the dashboard's cookie).
//  5. Media type: the body of a POST, PUT, PATCH or DELETE must be JSON
//     (every route that takes a body takes JSON), so no form, multipart
//     or text/plain body is read.

// HostPolicy says which Host header values the listener serves.
type HostPolicy struct {
	// Names are exact host names, or "*.example.com" for its subdomains;
	// IP literals are compared as addresses.
	Names []string
	// AnyIP admits every IP literal: the daemon listens on an unspecified
	// address (0.0.0.0, ::), so every address of the machine is its own.
	// An IP literal cannot be rebound: a page can only carry it as its
	// Host by being served from that address.
	AnyIP bool
}

// hostAllowed reports whether the request's Host names this daemon:
// localhost (and its subdomains, which browsers resolve to loopback
// themselves), a loopback literal, or one of p's names. An empty Host
// (HTTP/1.0) comes from no browser and is admitted.
func (p HostPolicy) hostAllowed(hostport string) bool {
	if hostport == "" {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.IsLoopback() || p.AnyIP {
			return true
		}
		for _, n := range p.Names {
			if want, err := netip.ParseAddr(strings.Trim(n, "[]")); err == nil && want.Unmap() == ip.Unmap() {
				return true
			}
		}
		return false
	}
	for _, n := range p.Names {
		n = strings.ToLower(strings.TrimSuffix(n, "."))
		if suffix, ok := strings.CutPrefix(n, "*"); ok {
			if strings.HasSuffix(host, suffix) && len(host) > len(suffix) {
				return true
			}
		} else if host == n {
			return true
		}
	}
	return false
}

// crossSite reports whether a browser marked r as coming from a page of
// another origin that trusted does not admit. Sec-Fetch-Site is the
// browser's own statement; without it (older browsers) an Origin that
// differs from the Host does. A request with neither comes from no
// browser, or from a navigation typed by the user.
func crossSite(r *http.Request, trusted func(origin string) bool) bool {
	origin := r.Header.Get("Origin")
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return false
	case "":
		if origin == "" {
			return false
		}
		if u, err := url.Parse(origin); err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host) {
			return false
		}
	}
	return !trusted(origin)
}

// jsonBody reports whether r carries no body, or a JSON one: the media
// type application/json or application/<anything>+json. Browsers can send
// text/plain, form and multipart bodies across sites without a
// preflight; no route of the daemon takes them.
func jsonBody(r *http.Request) bool {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return true
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// ClientAddrs says who the client of a request is, for limits that count
// per client: the peer's address, or, when the peer is a trusted reverse
// proxy, the address its X-Forwarded-For names.
type ClientAddrs struct {
	// Trusted are the proxies' addresses; their X-Forwarded-For is
	// believed, read from the right, up to the first address that is not
	// a trusted proxy itself.
	Trusted []netip.Prefix
}

// Of returns the client address of r.
func (c ClientAddrs) Of(r *http.Request) string {
	peer := remoteHost(r)
	if len(c.Trusted) == 0 || !c.trusted(peer) {
		return peer
	}
	hops := r.Header.Values("X-Forwarded-For")
	var list []string
	for _, h := range hops {
		for part := range strings.SplitSeq(h, ",") {
			list = append(list, strings.TrimSpace(part))
		}
	}
	for i := len(list) - 1; i >= 0; i-- {
		addr, err := netip.ParseAddr(list[i])
		if err != nil {
			return peer // malformed: believe nothing past it
		}
		if !c.trusted(addr.String()) {
			return addr.String()
		}
	}
	return peer
}

func (c ClientAddrs) trusted(host string) bool {
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	for _, p := range c.Trusted {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

type clientAddrKey struct{}

// ClientAddr returns the client address Protect found for the request
// ctx belongs to ("" outside Protect).
func ClientAddr(ctx context.Context) string {
	s, _ := ctx.Value(clientAddrKey{}).(string)
	return s
}

// AuthLimiter bounds failed authentications per client address: a wrong
// key or token, a refused login. It counts addresses, not keys, so that
// trying many different keys is as slow as trying one; loopback counts
// too (a local page or process guessing keys is still guessing). While an
// address is over its budget every credentialed request from it is
// refused with 429, right keys included: a guesser learns nothing from
// the answers until the budget has refilled.
type AuthLimiter struct {
	g *gcra
}

// Defaults of AuthLimiter: a user who mistypes a key a few times is never
// held up; a script guessing keys gets about one try a second.
const (
	DefaultAuthFailuresPerSec = 1
	DefaultAuthFailureBurst   = 10
)

// NewAuthLimiter allows perSec failed authentications per address with a
// burst; now is the clock (nil = time.Now).
func NewAuthLimiter(perSec float64, burst int, now func() time.Time) *AuthLimiter {
	return &AuthLimiter{g: newGCRA(perSec, burst, now)}
}

// Blocked reports whether addr is over its budget of failures, and how
// long until it may try again.
func (l *AuthLimiter) Blocked(addr string) (bool, time.Duration) {
	if l == nil {
		return false, 0
	}
	return l.g.exhausted(addr)
}

// Failed counts one failed authentication of addr.
func (l *AuthLimiter) Failed(addr string) {
	if l != nil {
		l.g.allow(addr)
	}
}

// exhausted reports, without spending, whether key's next request would
// be refused, and the wait until it would not.
func (g *gcra) exhausted(key string) (bool, time.Duration) {
	if g.interval == 0 {
		return false, 0
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	tat, ok := g.tat[key]
	if !ok || tat.Before(now) {
		return false, 0
	}
	if wait := tat.Add(g.interval).Sub(now) - g.tau; wait > 0 {
		return true, wait
	}
	return false, 0
}
