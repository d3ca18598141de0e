//go:build linux

package reliability

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/oauthrs/oauthrstest"
)

// guarded are the patterns a principal without rights is refused (403):
// changing agents and servers, running agents (HTTP, A2A), calling tools,
// reading principals and minting or revoking their keys.
var guarded = []string{
	"GET /api/principals", "GET /api/principals/{name}",
	"POST /api/principals/{name}/keys", "DELETE /api/principals/{name}/keys/{id}",
	"POST /api/agents", "PUT /api/agents/{name}", "DELETE /api/agents/{name}",
	"POST /api/agents/{name}/messages", "POST /api/tools/{name}/call",
	"POST /api/mcp/servers", "DELETE /api/mcp/servers/{name}",
	"POST /a2a", "POST /a2a/agents/{name}", "/a2a/agents/{name}/{rest...}",
}

// TestAuthMatrixPrincipals runs every route of a daemon with principals
// and an OAuth issuer against every kind of credential: none, a wrong key,
// bad access tokens (expired, wrong audience, wrong issuer, forged
// signature), a principal without rights, an admin principal's key and a
// valid admin token. Each answer is checked: 401 with WWW-Authenticate
// naming the resource metadata, 403 where rights matter, else served.
func TestAuthMatrixPrincipals(t *testing.T) {
	track(t, areaAuth, false)
	is := oauthrstest.New(t)
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "authorised answer"}))
	const aud = "http://agentd.test"
	hash := func(k string) string { s := sha256.Sum256([]byte(k)); return hex.EncodeToString(s[:]) }
	toml := strings.Replace(authConfig(model.URL, true), fmt.Sprintf("api_key = %q\n", authKey), "", 1) + fmt.Sprintf(`
[[principals]]
name = "nobody"
key_sha256 = %q

[[principals]]
name = "ops"
key_sha256 = %q
admin = true
oauth_subjects = ["tok-admin"]

[auth.oauth]
issuer = %q
audience = %q
allow_private = true
`, hash("nobody-key"), hash("ops-key"), is.URL, aud)
	p := startDaemon(t, daemonSpec{Key: "ops-key", TOML: toml})
	p.waitTool(t, "mcp_fx_env", 20*time.Second)
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	good := oauthrstest.Claims{Subject: "tok-admin", Audience: []string{aud}, Scope: "agentd:admin"}
	bad := map[string]string{
		"no credential":    "",
		"wrong key":        "not-a-key",
		"expired token":    is.Token(t, oauthrstest.Claims{Subject: "x", Audience: []string{aud}, Scope: "agentd:admin", Expiry: time.Now().Add(-time.Hour)}),
		"wrong audience":   is.Token(t, oauthrstest.Claims{Subject: "x", Audience: []string{"http://elsewhere"}, Scope: "agentd:admin"}),
		"wrong issuer":     is.Token(t, oauthrstest.Claims{Issuer: "http://evil.test", Subject: "x", Audience: []string{aud}, Scope: "agentd:admin"}),
		"forged signature": is.Token(t, oauthrstest.Claims{Subject: "x", Audience: []string{aud}, Scope: "agentd:admin", SignWith: forger}),
	}
	okCreds := map[string]string{"admin key": "ops-key", "admin token": is.Token(t, good)}
	var n401, n403, served int
	for _, pattern := range p.D.Routes() {
		if slices.Contains(publicRoutes, pattern) || strings.HasPrefix(pattern, "GET /.well-known/oauth-protected-resource") {
			continue
		}
		for _, rr := range requestsFor(pattern) {
			for name, cred := range bad {
				r := p.guess(t, rr.method, rr.path, nilIfEmpty(rr.body), cred, nil)
				ch := r.Header.Get("WWW-Authenticate")
				if r.Status != http.StatusUnauthorized || !strings.Contains(ch, "resource_metadata=") {
					t.Errorf("%s %s with %s: %v (WWW-Authenticate %q), want 401 naming the resource metadata", rr.method, rr.path, name, r, ch)
					continue
				}
				if strings.Contains(name, "token") || strings.Contains(name, "wrong a") || strings.Contains(name, "wrong i") || strings.Contains(name, "forged") {
					if !strings.Contains(ch, `error="invalid_token"`) {
						t.Errorf("%s %s with %s: WWW-Authenticate %q lacks error=\"invalid_token\"", rr.method, rr.path, name, ch)
					}
				}
				n401++
			}
			r := p.callKey(t, rr.method, rr.path, nilIfEmpty(rr.body), "nobody-key", nil)
			switch {
			case r.Status == http.StatusUnauthorized:
				t.Errorf("%s %s with a valid key without rights: 401, want authenticated", rr.method, rr.path)
			case slices.Contains(guarded, pattern) && r.Status != http.StatusForbidden:
				t.Errorf("%s %s with a principal without rights: %v, want 403", rr.method, rr.path, r)
			case slices.Contains(guarded, pattern):
				n403++
			}
			for name, cred := range okCreds {
				if r := p.callKey(t, rr.method, rr.path, nilIfEmpty(rr.body), cred, nil); r.Status == http.StatusUnauthorized || r.Status == http.StatusForbidden {
					t.Errorf("%s %s with the %s: %v", rr.method, rr.path, name, r)
					continue
				}
				served++
			}
		}
	}
	fig(t, areaAuth, "Principals and access tokens", "every non-public route: %d requests with no, wrong or bad credentials (expired, wrong audience, wrong issuer, forged) answered 401 with resource_metadata; %d refused 403 to a principal without rights; %d served to an admin key or token",
		n401, n403, served)
}
