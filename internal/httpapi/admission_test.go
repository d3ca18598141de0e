package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

// TestAdmission: the checks every request passes before any route, on a
// daemon without keys (the default) and with one. Each row is one
// request; the status and the refusal's code are the contract.
func TestAdmission(t *testing.T) {
	public := func(r *http.Request) bool { return r.URL.Path == "/api/health" || r.URL.Path == "/api/ui/login" }
	trusted := func(r *http.Request, o string) bool { return o == "https://tools.example" }
	rpc := func(r *http.Request) bool { return r.URL.Path == "/a2a" }
	type req struct {
		method, path, host string
		hdr                map[string]string
		body               string
	}
	json := map[string]string{"Content-Type": "application/json"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"Content-Type": "application/json"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name     string
		req      req
		want     int
		wantCode string
	}{
		{"local client", req{"POST", "/api/x", "127.0.0.1:4200", json, `{}`}, 200, ""},
		{"localhost name", req{"GET", "/api/x", "localhost:4200", nil, ""}, 200, ""},
		{"ipv6 loopback", req{"GET", "/api/x", "[::1]:4200", nil, ""}, 200, ""},
		{"a configured name", req{"GET", "/api/x", "agentd.internal", nil, ""}, 200, ""},
		{"a configured wildcard", req{"GET", "/api/x", "a.b.agentd.example", nil, ""}, 200, ""},
		{"the wildcard's apex is not its subdomain", req{"GET", "/api/x", "agentd.example", nil, ""}, 421, codeBadHost},
		{"rebinding: a foreign name", req{"GET", "/api/x", "attacker.example:4200", nil, ""}, 421, codeBadHost},
		{"rebinding on a public route too", req{"GET", "/api/health", "attacker.example", nil, ""}, 421, codeBadHost},
		{"a foreign address", req{"GET", "/api/x", "192.0.2.7:4200", nil, ""}, 421, codeBadHost},
		{"rebinding on a JSON-RPC route gets a JSON-RPC error", req{"POST", "/a2a", "attacker.example", json, `{"jsonrpc":"2.0","id":7,"method":"message/send"}`}, 421, codeBadHost},
		{"cross-site simple POST (text/plain, no preflight)", req{"POST", "/a2a", "127.0.0.1:4200", map[string]string{"Content-Type": "text/plain;charset=UTF-8", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, `{}`}, 403, codeCrossSite},
		{"cross-site by Origin alone (no Sec-Fetch-Site)", req{"POST", "/api/x", "127.0.0.1:4200", with("Origin", "https://evil.example"), `{}`}, 403, codeCrossSite},
		{"same-site is another origin too", req{"POST", "/api/x", "127.0.0.1:4200", with("Origin", "http://127.0.0.1:9999", "Sec-Fetch-Site", "same-site"), `{}`}, 403, codeCrossSite},
		{"null origin", req{"POST", "/api/x", "127.0.0.1:4200", with("Origin", "null"), `{}`}, 403, codeCrossSite},
		{"cross-site GET of a protected route", req{"GET", "/api/x", "127.0.0.1:4200", map[string]string{"Sec-Fetch-Site": "cross-site"}, ""}, 403, codeCrossSite},
		{"cross-site GET of a public route", req{"GET", "/api/health", "127.0.0.1:4200", map[string]string{"Sec-Fetch-Site": "cross-site"}, ""}, 200, ""},
		{"cross-site POST to a public route (login CSRF)", req{"POST", "/api/ui/login", "127.0.0.1:4200", with("Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"), `{}`}, 403, codeCrossSite},
		{"a trusted origin", req{"POST", "/api/x", "127.0.0.1:4200", with("Origin", "https://tools.example", "Sec-Fetch-Site", "cross-site"), `{}`}, 200, ""},
		{"same origin by Sec-Fetch-Site", req{"POST", "/api/x", "127.0.0.1:4200", with("Origin", "http://127.0.0.1:4200", "Sec-Fetch-Site", "same-origin"), `{}`}, 200, ""},
		{"same origin by Origin", req{"POST", "/api/x", "127.0.0.1:4200", with("Origin", "http://127.0.0.1:4200"), `{}`}, 200, ""},
		{"typed by the user", req{"GET", "/api/x", "127.0.0.1:4200", map[string]string{"Sec-Fetch-Site": "none"}, ""}, 200, ""},
		{"text/plain body from no browser", req{"POST", "/api/x", "127.0.0.1:4200", map[string]string{"Content-Type": "text/plain"}, `{}`}, 415, codeMediaType},
		{"form body", req{"POST", "/api/x", "127.0.0.1:4200", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, `a=b`}, 415, codeMediaType},
		{"multipart body", req{"POST", "/api/x", "127.0.0.1:4200", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, `--x--`}, 415, codeMediaType},
		{"body without a type", req{"POST", "/api/x", "127.0.0.1:4200", nil, `{}`}, 415, codeMediaType},
		{"a +json type", req{"POST", "/api/x", "127.0.0.1:4200", map[string]string{"Content-Type": "application/a2a+json"}, `{}`}, 200, ""},
		{"json with parameters", req{"POST", "/api/x", "127.0.0.1:4200", map[string]string{"Content-Type": "application/json; charset=utf-8"}, `{}`}, 200, ""},
		{"no body needs no type", req{"POST", "/api/x/cancel", "127.0.0.1:4200", nil, ""}, 200, ""},
		{"over the body limit, by its length", req{"POST", "/api/x", "127.0.0.1:4200", json, `{"x":"` + strings.Repeat("a", 100) + `"}`}, 413, codeTooLarge},
	}
	h := Protect(okHandler(), ProtectOptions{
		Public: public, TrustedOrigins: trusted, JSONRPC: rpc, MaxBodyBytes: 64,
		Hosts: HostPolicy{Names: []string{"agentd.internal", "*.agentd.example"}},
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.req.method, tt.req.path, strings.NewReader(tt.req.body))
			r.Host = tt.req.host
			for k, v := range tt.req.hdr {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.want, w.Body)
			}
			if tt.wantCode == "" {
				return
			}
			if got := refusalCode(t, w.Body.Bytes()); got != tt.wantCode {
				t.Fatalf("refusal code %q, want %q: %s", got, tt.wantCode, w.Body)
			}
		})
	}
}

// refusalCode reads the code of an admission refusal in either shape:
// the API's error, or a JSON-RPC error carrying it in its data.
func refusalCode(t *testing.T, body []byte) string {
	t.Helper()
	var v struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code json.RawMessage `json:"code"`
			Data struct {
				Code string `json:"code"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("refusal is not JSON: %s", body)
	}
	if v.JSONRPC == "2.0" {
		return v.Error.Data.Code
	}
	var code string
	_ = json.Unmarshal(v.Error.Code, &code)
	return code
}

// FuzzHostAllowed: no Host value panics the check, and whatever it
// admits is a loopback literal, localhost or a configured name.
func FuzzHostAllowed(f *testing.F) {
	for _, s := range []string{"localhost:1", "127.0.0.1", "[::1]:80", "agentd.internal", "x.agentd.example", "evil.example", "", "[", "LOCALHOST.", "a.localhost", "::ffff:127.0.0.1"} {
		f.Add(s)
	}
	p := HostPolicy{Names: []string{"agentd.internal", "*.agentd.example", "192.0.2.1"}}
	f.Fuzz(func(t *testing.T, host string) {
		if !p.hostAllowed(host) {
			return
		}
		// An independent reading: whatever the port and brackets, the
		// admitted host must be one of these.
		h := strings.ToLower(host)
		if strings.HasPrefix(h, "[") && strings.Contains(h, "]") {
			h = h[1:strings.Index(h, "]")]
		} else if strings.Count(h, ":") == 1 {
			h = h[:strings.Index(h, ":")]
		}
		h = strings.TrimSuffix(h, ".")
		ip, ipErr := netip.ParseAddr(h)
		ok := h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "agentd.internal" ||
			strings.HasSuffix(h, ".agentd.example") || (ipErr == nil && (ip.IsLoopback() || ip.Unmap() == netip.MustParseAddr("192.0.2.1")))
		if !ok {
			t.Fatalf("admitted %q", host)
		}
	})
}
