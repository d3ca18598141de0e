package daemon

import (
	"net"
	"testing"
)

func TestDashboardURL(t *testing.T) {
	for _, tc := range []struct {
		name, public, addr, want string
	}{
		{"loopback", "", "127.0.0.1:4200", "http://127.0.0.1:4200/"},
		{"ipv6 loopback", "", "[::1]:4200", "http://[::1]:4200/"},
		{"wildcard shown as loopback", "", "0.0.0.0:4300", "http://127.0.0.1:4300/"},
		{"ipv6 wildcard", "", "[::]:4300", "http://127.0.0.1:4300/"},
		{"public_url wins", "https://agents.example.com/", "0.0.0.0:4200", "https://agents.example.com/"},
		{"public_url gets its slash", "https://agents.example.com/agentd", "10.0.0.5:4200", "https://agents.example.com/agentd/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, err := net.ResolveTCPAddr("tcp", tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			if got := DashboardURL(tc.public, addr); got != tc.want {
				t.Errorf("DashboardURL(%q, %s) = %q, want %q", tc.public, tc.addr, got, tc.want)
			}
		})
	}
}
