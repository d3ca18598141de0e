package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"testing"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestProxyFromEnv: which requests go through the proxy the standard
// variables name, and that a proxied destination is still judged by the
// policy before the proxy is asked.
func TestProxyFromEnv(t *testing.T) {
	public := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "api.example.com", "internal.corp":
			return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
		case "sneaky.example.com":
			return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
		}
		return nil, errors.New("no such host")
	}
	tests := []struct {
		name      string
		env       map[string]string
		url       string
		wantProxy string // "" direct
		wantErr   string
	}{
		{"https via HTTPS_PROXY", map[string]string{"HTTPS_PROXY": "http://proxy.corp:3128"}, "https://api.example.com/v1", "http://proxy.corp:3128", ""},
		{"lower-case form", map[string]string{"https_proxy": "proxy.corp:3128"}, "https://api.example.com/v1", "http://proxy.corp:3128", ""},
		{"http via HTTP_PROXY", map[string]string{"HTTP_PROXY": "http://proxy.corp:3128"}, "http://api.example.com/", "http://proxy.corp:3128", ""},
		{"NO_PROXY exempts", map[string]string{"HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": ".corp"}, "https://internal.corp/", "", ""},
		{"private destination refused before the proxy", map[string]string{"HTTPS_PROXY": "http://proxy.corp:3128"}, "https://sneaky.example.com/", "", "resolves to a private address"},
		{"metadata refused before the proxy", map[string]string{"HTTP_PROXY": "http://proxy.corp:3128"}, "http://169.254.169.254/latest", "", "cloud metadata address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			px, err := ProxyFromEnv(envOf(tt.env))
			if err != nil || px == nil {
				t.Fatalf("ProxyFromEnv = %v, %v", px, err)
			}
			p := &Policy{Proxy: px, LookupIP: public}
			req, _ := http.NewRequest(http.MethodGet, tt.url, nil)
			got, err := p.Transport().Proxy(req)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrBlocked) || !contains(err.Error(), tt.wantErr) {
					t.Fatalf("proxy for %s = %v, %v; want refusal %q", tt.url, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s := ""; got != nil {
				s = got.String()
				if s != tt.wantProxy {
					t.Fatalf("proxy for %s = %s, want %q", tt.url, s, tt.wantProxy)
				}
			} else if tt.wantProxy != "" {
				t.Fatalf("no proxy for %s, want %s", tt.url, tt.wantProxy)
			}
		})
	}
	if px, err := ProxyFromEnv(envOf(map[string]string{"NO_PROXY": "*"})); px != nil || err != nil {
		t.Errorf("without a proxy variable: %v, %v", px, err)
	}
	if _, err := ProxyFromEnv(envOf(map[string]string{"HTTPS_PROXY": "http://user:secret@%zz"})); err == nil || contains(err.Error(), "secret") {
		t.Errorf("a bad proxy variable: %v (must be refused without its credentials)", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
