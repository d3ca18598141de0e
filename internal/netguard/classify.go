package netguard

import (
	"net/netip"
)

// Class is the kind of destination an IP address is, as far as outbound
// requests are concerned. The zero value, Invalid, is never allowed, so a
// forgotten classification fails closed.
type Class int

// Classes, from the most to the least common in practice.
const (
	// Invalid is the zero netip.Addr.
	Invalid Class = iota
	// Public is a globally routable unicast address.
	Public
	// Loopback is 127.0.0.0/8 or ::1.
	Loopback
	// Private is RFC 1918 space, IPv6 unique-local (fc00::/7), deprecated
	// site-local (fec0::/10) and the local-use NAT64 prefix.
	Private
	// LinkLocal is 169.254.0.0/16 or fe80::/10 (but not a metadata address).
	LinkLocal
	// Metadata is a cloud instance-metadata or platform endpoint: reaching
	// it from a server usually means stealing its credentials.
	Metadata
	// CGNAT is carrier-grade NAT shared space, 100.64.0.0/10.
	CGNAT
	// Multicast is 224.0.0.0/4 or ff00::/8.
	Multicast
	// Unspecified is 0.0.0.0/8 ("this network", which Linux connects to
	// the local host) or ::.
	Unspecified
	// Reserved is space that is not routable on the internet: IETF
	// protocol assignments, 240.0.0.0/4, unallocated IPv6, discard-only.
	Reserved
	// Documentation is address space reserved for examples (RFC 5737,
	// RFC 3849, RFC 9637).
	Documentation
	// Benchmark is network-benchmark space, 198.18.0.0/15 and 2001:2::/48,
	// often used for internal networks.
	Benchmark
	// Broadcast is the limited broadcast address 255.255.255.255.
	Broadcast
)

var classNames = [...]string{
	Invalid:       "invalid",
	Public:        "public",
	Loopback:      "loopback",
	Private:       "private",
	LinkLocal:     "link-local",
	Metadata:      "cloud metadata",
	CGNAT:         "carrier-grade NAT",
	Multicast:     "multicast",
	Unspecified:   "unspecified",
	Reserved:      "reserved",
	Documentation: "documentation",
	Benchmark:     "benchmarking",
	Broadcast:     "broadcast",
}

// String names the class for error messages.
func (c Class) String() string {
	if c >= 0 && int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// metadataAddrs are cloud metadata and platform endpoints. Most sit in
// link-local space, but not all: Alibaba's is in CGNAT space and Azure's
// WireServer is a public address.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure IMDS, OpenStack, DigitalOcean, Oracle, ...
	netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task metadata and credentials
	netip.MustParseAddr("169.254.170.23"):  true, // AWS EKS Pod Identity agent
	netip.MustParseAddr("169.254.0.23"):    true, // Tencent Cloud
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
	netip.MustParseAddr("168.63.129.16"):   true, // Azure WireServer
	netip.MustParseAddr("192.0.0.192"):     true, // Oracle Cloud Classic
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS IMDS over IPv6
	netip.MustParseAddr("fd00:ec2::23"):    true, // AWS EKS Pod Identity over IPv6
	netip.MustParseAddr("fe80::a9fe:a9fe"): true, // OpenStack metadata over IPv6
}

type prefixClass struct {
	prefix netip.Prefix
	class  Class
}

func pc(s string, c Class) prefixClass { return prefixClass{netip.MustParsePrefix(s), c} }

// v4Table is checked in order; the first match wins, so more specific
// prefixes come first.
var v4Table = []prefixClass{
	pc("0.0.0.0/8", Unspecified),
	pc("10.0.0.0/8", Private),
	pc("100.64.0.0/10", CGNAT),
	pc("127.0.0.0/8", Loopback),
	pc("169.254.0.0/16", LinkLocal),
	pc("172.16.0.0/12", Private),
	pc("192.0.0.0/24", Reserved),
	pc("192.0.2.0/24", Documentation),
	pc("192.88.99.0/24", Reserved), // deprecated 6to4 relay anycast
	pc("192.168.0.0/16", Private),
	pc("198.18.0.0/15", Benchmark),
	pc("198.51.100.0/24", Documentation),
	pc("203.0.113.0/24", Documentation),
	pc("224.0.0.0/4", Multicast),
	pc("255.255.255.255/32", Broadcast),
	pc("240.0.0.0/4", Reserved),
}

// v6Table is checked after the special forms that embed an IPv4 address.
var v6Table = []prefixClass{
	pc("::/128", Unspecified),
	pc("::1/128", Loopback),
	pc("64:ff9b:1::/48", Private), // local-use NAT64 (RFC 8215)
	pc("100::/64", Reserved),      // discard-only
	pc("2001:2::/48", Benchmark),
	pc("2001:db8::/32", Documentation),
	pc("3fff::/20", Documentation),
	pc("5f00::/16", Reserved), // SRv6 SIDs
	pc("fc00::/7", Private),
	pc("fe80::/10", LinkLocal),
	pc("fec0::/10", Private), // deprecated site-local
	pc("ff00::/8", Multicast),
	pc("2000::/3", Public),
}

var (
	nat64WKP   = netip.MustParsePrefix("64:ff9b::/96")
	siitPrefix = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (RFC 2765)
	compatV4   = netip.MustParsePrefix("::/96")           // deprecated IPv4-compatible
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
)

// Classify says what kind of destination ip is. IPv6 forms that carry an
// IPv4 address a router or the kernel may translate to (IPv4-mapped and
// -compatible, IPv4-translated, NAT64, 6to4, Teredo, ISATAP) take the class
// of the embedded address when it is not public, since that is where the
// packets can end up. The zone of a scoped address is ignored.
func Classify(ip netip.Addr) Class {
	if !ip.IsValid() {
		return Invalid
	}
	ip = ip.WithZone("").Unmap()
	if ip.Is4() {
		return classify4(ip)
	}
	b := ip.As16()
	switch {
	case nat64WKP.Contains(ip):
		return embedded(v4At(b, 12), Public)
	case siitPrefix.Contains(ip):
		return embedded(v4At(b, 12), Reserved)
	case compatV4.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback():
		return embedded(v4At(b, 12), Reserved)
	case sixToFour.Contains(ip):
		return embedded(v4At(b, 2), Public)
	case teredo.Contains(ip):
		// The client's public address is stored inverted.
		client := v4At(b, 12).As4()
		for i := range client {
			client[i] ^= 0xff
		}
		if c := classify4(netip.AddrFrom4(client)); c != Public {
			return c
		}
		return embedded(v4At(b, 4), Public)
	}
	if isISATAP(b) {
		if c := classify4(v4At(b, 12)); c != Public {
			return c
		}
	}
	if metadataAddrs[ip] {
		return Metadata
	}
	for _, e := range v6Table {
		if e.prefix.Contains(ip) {
			return e.class
		}
	}
	return Reserved
}

func classify4(ip netip.Addr) Class {
	if metadataAddrs[ip] {
		return Metadata
	}
	for _, e := range v4Table {
		if e.prefix.Contains(ip) {
			return e.class
		}
	}
	return Public
}

// embedded returns the class of an embedded IPv4 address, or ifPublic
// when that address is public.
func embedded(v4 netip.Addr, ifPublic Class) Class {
	if c := classify4(v4); c != Public {
		return c
	}
	return ifPublic
}

func v4At(b [16]byte, i int) netip.Addr {
	return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]})
}

// isISATAP reports an ISATAP interface identifier (RFC 5214), whose low
// 32 bits are an IPv4 address the ISATAP router forwards to.
func isISATAP(b [16]byte) bool {
	return (b[8]|0x02) == 0x02 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe
}
