package netguard

import (
	"net/netip"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		ip   string
		want Class
	}{
		{"8.8.8.8", Public},
		{"1.1.1.1", Public},
		{"93.184.216.34", Public},
		{"127.0.0.1", Loopback},
		{"127.255.255.254", Loopback},
		{"10.0.0.1", Private},
		{"172.16.0.1", Private},
		{"172.31.255.255", Private},
		{"172.32.0.1", Public},
		{"192.168.1.1", Private},
		{"169.254.1.1", LinkLocal},
		{"169.254.169.254", Metadata},
		{"169.254.170.2", Metadata},
		{"100.100.100.200", Metadata},
		{"168.63.129.16", Metadata},
		{"100.64.0.1", CGNAT},
		{"100.127.255.255", CGNAT},
		{"100.128.0.1", Public},
		{"224.0.0.1", Multicast},
		{"239.255.255.250", Multicast},
		{"0.0.0.0", Unspecified},
		{"0.1.2.3", Unspecified},
		{"240.0.0.1", Reserved},
		{"255.255.255.255", Broadcast},
		{"192.0.0.8", Reserved},
		{"192.0.2.1", Documentation},
		{"198.51.100.7", Documentation},
		{"203.0.113.9", Documentation},
		{"198.18.0.1", Benchmark},
		{"::1", Loopback},
		{"::", Unspecified},
		{"2606:4700:4700::1111", Public},
		{"fc00::1", Private},
		{"fd12:3456::1", Private},
		{"fd00:ec2::254", Metadata},
		{"fe80::1", LinkLocal},
		{"fe80::1%eth0", LinkLocal},
		{"fe80::a9fe:a9fe", Metadata},
		{"fec0::1", Private},
		{"ff02::1", Multicast},
		{"2001:db8::1", Documentation},
		{"3fff::1", Documentation},
		{"100::1", Reserved},
		{"4000::1", Reserved},
		// IPv4-mapped and -compatible.
		{"::ffff:127.0.0.1", Loopback},
		{"::ffff:169.254.169.254", Metadata},
		{"::ffff:8.8.8.8", Public},
		{"::ffff:7f00:1", Loopback},
		{"::127.0.0.1", Loopback},
		{"::8.8.8.8", Reserved},
		{"::ffff:0:10.0.0.1", Private},
		// NAT64 well-known prefix.
		{"64:ff9b::7f00:1", Loopback},
		{"64:ff9b::169.254.169.254", Metadata},
		{"64:ff9b::8.8.8.8", Public},
		{"64:ff9b:1::1", Private},
		// 6to4.
		{"2002:7f00:1::1", Loopback},
		{"2002:a9fe:a9fe::", Metadata},
		{"2002:808:808::1", Public},
		// Teredo: client 10.0.0.1 stored inverted.
		{"2001:0:4136:e378:8000:63bf:f5ff:fffe", Private},
		{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", Public},
		// ISATAP with a private IPv4.
		{"2001:4860::5efe:a00:1", Private},
		{"2001:4860::200:5efe:c0a8:101", Private},
		{"2001:4860::5efe:808:808", Public},
	}
	for _, tt := range tests {
		t.Run(tt.ip, func(t *testing.T) {
			ip := netip.MustParseAddr(tt.ip)
			if got := Classify(ip); got != tt.want {
				t.Errorf("Classify(%s) = %v, want %v", tt.ip, got, tt.want)
			}
		})
	}
	t.Run("zero", func(t *testing.T) {
		if got := Classify(netip.Addr{}); got != Invalid {
			t.Errorf("Classify(zero) = %v, want invalid", got)
		}
	})
}

func TestClassString(t *testing.T) {
	seen := map[string]Class{}
	for c := Invalid; c <= Broadcast; c++ {
		s := c.String()
		if s == "" || s == "unknown" {
			t.Errorf("Class(%d) has no name", c)
		}
		if prev, dup := seen[s]; dup {
			t.Errorf("Class(%d) and Class(%d) share the name %q", c, prev, s)
		}
		seen[s] = c
	}
	if got := Class(99).String(); got != "unknown" {
		t.Errorf("Class(99).String() = %q", got)
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "2002:c0a8::", "fe80::1", "8.8.8.8", "2001::1"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ip, ok := netip.AddrFromSlice(b)
		c := Classify(ip)
		if !ok {
			if c != Invalid {
				t.Fatalf("invalid address classified %v", c)
			}
			return
		}
		if c == Invalid || c.String() == "unknown" {
			t.Fatalf("Classify(%s) = %d", ip, c)
		}
		if ip.Is4() {
			// The mapped form must not be more permissive.
			if m := Classify(netip.AddrFrom16(ip.As16())); m != c {
				t.Fatalf("Classify(%s) = %v but mapped form = %v", ip, c, m)
			}
			for _, wrap := range []string{"64:ff9b::", "2002::"} {
				b16 := netip.MustParseAddr(wrap).As16()
				a4 := ip.As4()
				if wrap == "2002::" {
					copy(b16[2:6], a4[:])
				} else {
					copy(b16[12:], a4[:])
				}
				if w := Classify(netip.AddrFrom16(b16)); c != Public && w == Public {
					t.Fatalf("%s is %v but embedded in %s it is public", ip, c, wrap)
				}
			}
		}
		var p Policy
		if err := p.CheckIP(ip); (err == nil) != (c == Public) {
			t.Fatalf("zero policy CheckIP(%s) = %v for class %v", ip, err, c)
		}
	})
}
