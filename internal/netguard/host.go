package netguard

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// hostKind says how a host string is to be treated.
type hostKind int

const (
	hostName hostKind = iota // a DNS name, to be resolved
	hostIP                   // a canonical IP literal
)

// parsedHost is a host after normalisation.
type parsedHost struct {
	kind hostKind
	name string     // lower-case ASCII name without trailing dot (hostName)
	ip   netip.Addr // the literal (hostIP), zone kept for dialling
}

// errAmbiguous marks a host that some resolver would read as an IPv4
// address in a legacy spelling (decimal, octal, hex, short forms).
var errAmbiguous = errors.New("non-canonical IPv4 address spelling")

// parseHost normalises host the way net/http does before dialling (IDNA
// mapping of non-ASCII names) and then decides whether it is an IP literal
// or a name. Names that end in a number are refused: getaddrinfo and
// browsers read "0177.1", "0x7f.1" or "2130706433" as 127.0.0.1 while Go's
// own parser does not, and such a disagreement is exactly what an SSRF
// payload exploits. On errAmbiguous, legacy holds the address the spelling
// stands for (when it parses as one).
func parseHost(host string) (ph parsedHost, legacy netip.Addr, err error) {
	if host == "" {
		return ph, legacy, errors.New("empty host")
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return parsedHost{kind: hostIP, ip: ip}, legacy, nil
	}
	if !isASCII(host) {
		a, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return ph, legacy, errors.New("invalid internationalised host name")
		}
		host = a
		if ip, err := netip.ParseAddr(host); err == nil {
			// A name that maps to an IP literal (full-width digits) is
			// an evasion attempt, not a name.
			return ph, ip, errAmbiguous
		}
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "" {
		return ph, legacy, errors.New("empty host")
	}
	if endsInNumber(name) {
		if ip, ok := parseLegacyIPv4(name); ok {
			return ph, ip, errAmbiguous
		}
		return ph, legacy, errAmbiguous
	}
	if err := validName(name); err != nil {
		return ph, legacy, err
	}
	return parsedHost{kind: hostName, name: name}, legacy, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// endsInNumber reports whether the last label of name is numeric in any
// base a legacy IPv4 parser accepts (the WHATWG URL standard's test).
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" {
		return false
	}
	if isDigits(last) {
		return true
	}
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		for i := 2; i < len(last); i++ {
			if !isHex(last[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// parseLegacyIPv4 parses the inet_aton spellings: one to four parts, each
// decimal, octal (leading 0) or hex (0x), the last part filling the
// remaining bytes. A single trailing dot is tolerated.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(s, ".")
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		v, ok := parseLegacyPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var out uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, false
		}
		out |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	out |= last
	return netip.AddrFrom4([4]byte{byte(out >> 24), byte(out >> 16), byte(out >> 8), byte(out)}), true
}

func parseLegacyPart(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true // "0x" alone is zero to inet_aton and WHATWG
		}
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	// Long runs of leading zeros are legal and must not overflow.
	p = strings.TrimLeft(p, "0")
	if p == "" {
		return 0, true
	}
	if len(p) > 16 {
		return 0, false
	}
	v, err := strconv.ParseUint(p, base, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// validName accepts DNS host names: letters, digits, '-' and '_' in
// non-empty labels of at most 63 bytes, at most 253 bytes in all.
func validName(name string) error {
	if len(name) > 253 {
		return errors.New("host name too long")
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 {
			return errors.New("invalid host name")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return errors.New("invalid character in host name")
			}
		}
	}
	return nil
}

// metadataNames are host names of cloud metadata services. They are
// refused without a lookup because inside the cloud they resolve to a
// metadata address and outside it they may resolve to anything.
var metadataNames = map[string]bool{
	"metadata":                     true,
	"metadata.google.internal":     true,
	"metadata.goog":                true,
	"metadata.azure.internal":      true,
	"instance-data":                true,
	"instance-data.ec2.internal":   true,
	"metadata.tencentyun.com":      true,
	"metadata.packet.net":          true,
	"metadata.platformequinix.com": true,
}

// isLocalhostName reports names that RFC 6761 reserves for loopback.
func isLocalhostName(name string) bool {
	return name == "localhost" || strings.HasSuffix(name, ".localhost") ||
		name == "localhost.localdomain" || name == "ip6-localhost" || name == "ip6-loopback"
}
