package netguard

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

// anySpellingNonPublic is the fuzz oracle, written independently of the
// guard: it reads host every way some parser might (IDNA mapping,
// brackets, zones, trailing dots, inet_aton bases and short forms, names
// reserved for loopback or metadata) and reports whether any reading is a
// non-public destination.
func anySpellingNonPublic(host string) bool {
	cands := []string{host}
	if a, err := idna.Lookup.ToASCII(host); err == nil {
		cands = append(cands, a)
	}
	if a, err := idna.Punycode.ToUnicode(host); err == nil {
		cands = append(cands, a)
	}
	for _, c := range cands {
		c = strings.ToLower(strings.Trim(c, "[]"))
		c = strings.TrimRight(c, ".")
		if i := strings.IndexByte(c, '%'); i >= 0 {
			if ip, err := netip.ParseAddr(c[:i]); err == nil && Classify(ip) != Public {
				return true
			}
		}
		if ip, err := netip.ParseAddr(c); err == nil && Classify(ip) != Public {
			return true
		}
		if ip, ok := atonOracle(c); ok && Classify(ip) != Public {
			return true
		}
		switch c {
		case "localhost", "metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal":
			return true
		}
		if strings.HasSuffix(c, ".localhost") {
			return true
		}
	}
	return false
}

// atonOracle is inet_aton written the plain way: parts in base 16 (0x),
// 8 (leading 0) or 10, the last part filling the remaining bytes.
// Out-of-range parts are masked rather than rejected, which only makes
// the oracle stricter than any resolver.
func atonOracle(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		base := 10
		switch {
		case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
			base, p = 16, p[2:]
			if p == "" {
				p = "0"
			}
		case len(p) > 1 && p[0] == '0':
			base = 8
		}
		v, err := strconv.ParseUint(p, base, 64)
		if err != nil {
			return netip.Addr{}, false
		}
		vals = append(vals, v)
	}
	var out uint64
	for i, v := range vals {
		if i < len(vals)-1 {
			out |= (v & 0xff) << (8 * (3 - i))
		} else {
			out |= v & 0xffffffff
		}
	}
	return netip.AddrFrom4([4]byte{byte(out >> 24), byte(out >> 16), byte(out >> 8), byte(out)}), true
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1/", "http://2130706433/", "http://0x7f.1/", "http://0177.0.0.1/",
		"http://[::ffff:127.0.0.1]/", "http://[fe80::1%25eth0]/", "https://example.com/a?b=c",
		"http://169.254.169.254/", "http://metadata.google.internal/", "http://a.localhost/",
		"http://１２７.０.０.１/", "http://bücher.de/", "http://127.1/", "http://0/", "http://[64:ff9b::7f00:1]/",
		"http://user:pass@host.test:8080/x", "http://xn--80ak6aa92e.com/",
	} {
		f.Add(s)
	}
	// Every name resolves to a public address, so only the host's own
	// spelling can make it non-public.
	p := &Policy{LookupIP: func(context.Context, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	}}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := p.CheckURL(context.Background(), raw)
		if err != nil {
			return
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("accepted scheme %q", u.Scheme)
		}
		if host := u.Hostname(); host == "" || anySpellingNonPublic(host) {
			t.Fatalf("accepted %q with host %q", raw, host)
		}
	})
}
