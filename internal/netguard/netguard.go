// Package netguard is agentd's guard against server-side request forgery.
// Every outbound connection whose destination a model, a manifest or a
// remote peer can influence (web_fetch, MCP HTTP/SSE upstreams, the A2A
// client, push-notification webhooks) goes through a Policy, so that a
// prompt-injected URL cannot reach the loopback interface, the private
// network or a cloud metadata service.
//
// The guard works at two points. CheckURL validates a URL up front and
// gives a clear error; DialContext is the real enforcement: it resolves
// the host once, checks every address, and dials one of those checked
// addresses, so a DNS answer that changes between check and connect (DNS
// rebinding) gains nothing. Redirects are re-checked by Client.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrBlocked is wrapped by every refusal of the policy.
var ErrBlocked = errors.New("destination blocked by SSRF policy")

// BlockedError explains one refusal. It matches ErrBlocked with errors.Is.
type BlockedError struct {
	// Host is the host as given (never a URL, so never credentials).
	Host string
	// Addr is the offending address, when there is one.
	Addr netip.Addr
	// Class is Addr's class, when there is an address.
	Class Class
	// Reason says why, for humans and models.
	Reason string
}

// Error reports the host, the address and the reason.
func (e *BlockedError) Error() string {
	var b strings.Builder
	b.WriteString(ErrBlocked.Error())
	b.WriteString(": ")
	if e.Host != "" {
		fmt.Fprintf(&b, "host %q", e.Host)
		if e.Addr.IsValid() && e.Addr.String() != strings.Trim(e.Host, "[]") && !strings.Contains(e.Reason, e.Addr.String()) {
			fmt.Fprintf(&b, " (%s)", e.Addr)
		}
	} else if e.Addr.IsValid() {
		fmt.Fprintf(&b, "address %s", e.Addr)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Policy decides which destinations outbound connections may reach. The
// zero value (and a nil *Policy) allows public addresses only.
type Policy struct {
	// AllowPrivate allows loopback, private, link-local, CGNAT and
	// benchmarking addresses, and localhost names. Cloud metadata stays
	// refused unless AllowMetadata is set too.
	AllowPrivate bool
	// AllowMetadata allows cloud metadata addresses and names.
	AllowMetadata bool
	// Hint ends the refusal of a loopback or private destination with how
	// to allow it, naming the setting that sets AllowPrivate for this
	// connection ("set allow_private = true in [tools.web_fetch]"). Each
	// caller has its own setting, so the guard names none itself; empty
	// gives no hint (for connections no setting relaxes).
	Hint string
	// AllowHosts are host names or IP addresses exempt from every check
	// (exact match, case-insensitive; IPs match by value).
	AllowHosts []string
	// Resolver resolves names; nil means net.DefaultResolver.
	Resolver *net.Resolver
	// LookupIP, when set, replaces Resolver (for tests and for callers
	// with their own name service).
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// Proxy, when set, is the HTTP proxy Transport sends requests
	// through (ProxyFromEnv); the destination is checked before.
	Proxy *Proxy
}

// CheckIP reports whether the policy allows connecting to ip. A refusal
// is a *BlockedError wrapping ErrBlocked.
func (p *Policy) CheckIP(ip netip.Addr) error {
	c := Classify(ip)
	if p.allowsClass(c) {
		return nil
	}
	return &BlockedError{Addr: ip, Class: c, Reason: p.refusal(c)}
}

func (p *Policy) allowsClass(c Class) bool {
	switch c {
	case Public:
		return true
	case Metadata:
		return p != nil && p.AllowMetadata
	case Loopback, Private, LinkLocal, CGNAT, Benchmark:
		return p != nil && p.AllowPrivate
	}
	// Unspecified, multicast, broadcast, reserved and documentation space
	// are never a legitimate HTTP destination.
	return false
}

func (p *Policy) refusal(c Class) string {
	switch c {
	case Metadata:
		return "cloud metadata address"
	case Loopback, Private, LinkLocal, CGNAT, Benchmark:
		return c.String() + " address" + p.hint()
	}
	return c.String() + " address is never allowed"
}

// hint is Hint as the end of a refusal.
func (p *Policy) hint() string {
	if p == nil || p.Hint == "" {
		return ""
	}
	return " (" + p.Hint + ")"
}

// CheckURL parses raw and checks that it is an http or https URL whose
// host the policy allows: IP literals are classified, names are resolved
// and every address is checked. It returns the parsed URL.
func (p *Policy) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL, which may hold credentials.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("parse url: %w", err)
	}
	if err := p.CheckParsedURL(ctx, u); err != nil {
		return nil, err
	}
	return u, nil
}

// CheckParsedURL is CheckURL for an already parsed URL.
func (p *Policy) CheckParsedURL(ctx context.Context, u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &BlockedError{Host: u.Host, Reason: fmt.Sprintf("scheme %q is not http or https", u.Scheme)}
	}
	if u.Opaque != "" || u.Host == "" {
		return &BlockedError{Reason: "url has no host"}
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return &BlockedError{Host: u.Host, Reason: "invalid port"}
		}
	}
	_, err := p.resolve(ctx, u.Hostname())
	return err
}

// resolve checks host and returns the addresses a connection may use:
// the literal itself, or every address of the name (all checked).
func (p *Policy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	exempt := p.exempt(host)
	ph, legacy, err := parseHost(host)
	if err != nil {
		if errors.Is(err, errAmbiguous) {
			reason := err.Error()
			be := &BlockedError{Host: host, Reason: reason}
			if legacy.IsValid() {
				be.Addr, be.Class = legacy, Classify(legacy)
				be.Reason = fmt.Sprintf("%s of %s (%s)", reason, legacy, be.Class)
			}
			return nil, be
		}
		return nil, &BlockedError{Host: host, Reason: err.Error()}
	}
	if ph.kind == hostIP {
		if !exempt {
			if err := p.CheckIP(ph.ip); err != nil {
				be := err.(*BlockedError)
				be.Host = host
				return nil, be
			}
		}
		return []netip.Addr{ph.ip}, nil
	}
	if !exempt {
		if metadataNames[ph.name] && (p == nil || !p.AllowMetadata) {
			return nil, &BlockedError{Host: host, Class: Metadata, Reason: "cloud metadata host name"}
		}
		if isLocalhostName(ph.name) && (p == nil || !p.AllowPrivate) {
			return nil, &BlockedError{Host: host, Class: Loopback, Reason: "localhost name" + p.hint()}
		}
	}
	addrs, err := p.lookup(ctx, ph.name)
	if err != nil {
		return nil, fmt.Errorf("resolve %q: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %q: no addresses", host)
	}
	if !exempt {
		// One bad address taints the name: a dialler may pick any of them.
		for _, a := range addrs {
			if err := p.CheckIP(a); err != nil {
				be := err.(*BlockedError)
				be.Host = host
				be.Reason = "resolves to a " + be.Reason
				return nil, be
			}
		}
	}
	return addrs, nil
}

func (p *Policy) lookup(ctx context.Context, name string) ([]netip.Addr, error) {
	if p != nil && p.LookupIP != nil {
		return p.LookupIP(ctx, name)
	}
	r := net.DefaultResolver
	if p != nil && p.Resolver != nil {
		r = p.Resolver
	}
	return r.LookupNetIP(ctx, "ip", name)
}

// exempt reports whether host is in AllowHosts.
func (p *Policy) exempt(host string) bool {
	if p == nil || len(p.AllowHosts) == 0 {
		return false
	}
	h := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	hip, hipErr := netip.ParseAddr(h)
	for _, a := range p.AllowHosts {
		a = strings.TrimSuffix(strings.ToLower(strings.Trim(strings.TrimSpace(a), "[]")), ".")
		if a == h {
			return true
		}
		if hipErr == nil {
			if aip, err := netip.ParseAddr(a); err == nil && aip.Unmap() == hip.Unmap() {
				return true
			}
		}
	}
	return false
}

// DialContext resolves addr's host once, checks every address, and dials
// one of the checked addresses. Only TCP is supported.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, &BlockedError{Reason: fmt.Sprintf("network %q is not tcp", network)}
	}
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %q: %w", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return nil, &BlockedError{Host: host, Reason: "invalid port"}
	}
	addrs, err := p.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	exempt := p.exempt(host)
	timeout := 30 * time.Second
	if len(addrs) > 1 {
		// Leave time for the next address when one is black-holed.
		timeout = 10 * time.Second
	}
	d := &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		// The last line of defence: whatever the dialler connects to
		// is checked once more, right before connect(2).
		Control: func(_, address string, _ syscall.RawConn) error {
			if exempt {
				return nil
			}
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &BlockedError{Host: host, Reason: "unparseable dial address"}
			}
			return p.CheckIP(ap.Addr())
		},
	}
	var firstErr error
	tried := 0
	for _, a := range addrs {
		if network == "tcp4" && !a.Unmap().Is4() || network == "tcp6" && a.Unmap().Is4() {
			continue
		}
		tried++
		target := netip.AddrPortFrom(a.Unmap(), uint16(port))
		conn, err := d.DialContext(ctx, network, target.String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if tried == 0 {
		return nil, fmt.Errorf("dial %q: no %s address", host, network)
	}
	return nil, firstErr
}

// Transport returns a clone of http.DefaultTransport whose connections go
// through DialContext. The environment's proxy is not used: a proxy makes
// the connection on our behalf, out of the guard's sight. A Policy with a
// Proxy sends requests through it once their destination has passed the
// policy (see Proxy).
func (p *Policy) Transport() *http.Transport {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else {
		t = &http.Transport{ForceAttemptHTTP2: true, MaxIdleConns: 100}
	}
	t.Proxy = nil
	t.DialContext = p.DialContext
	if p != nil && p.Proxy != nil {
		t.Proxy = p.forRequest
		t.DialContext = p.dialProxied
	}
	t.DialTLSContext = nil
	t.MaxIdleConnsPerHost = 64
	t.TLSHandshakeTimeout = 10 * time.Second
	t.IdleConnTimeout = 90 * time.Second
	t.ExpectContinueTimeout = time.Second
	// No ResponseHeaderTimeout: MCP servers may answer a POST only when a
	// long tool call ends. Callers bound requests with ctx or Client's
	// timeout.
	return t
}

// maxRedirects bounds redirect chains.
const maxRedirects = 10

// Client returns an http.Client using Transport whose every redirect is
// re-checked with CheckURL. timeout 0 means none (use ctx).
func (p *Policy) Client(timeout time.Duration) *http.Client {
	return &http.Client{
		Transport: p.Transport(),
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if err := p.CheckParsedURL(req.Context(), req.URL); err != nil {
				return fmt.Errorf("redirect: %w", err)
			}
			return nil
		},
	}
}
