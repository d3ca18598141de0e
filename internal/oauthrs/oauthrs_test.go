package oauthrs_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/oauthrs"
	"github.com/agentd/agentd/internal/oauthrs/oauthrstest"
	"github.com/agentd/agentd/internal/principal"
)

const audience = "http://agents.test"

// newVerifier is a verifier whose configuration knows one principal,
// ci-bot, and lets other subjects take rights from their scopes.
func newVerifier(t *testing.T, is *oauthrstest.Issuer, now ...func() time.Time) *oauthrs.Verifier {
	t.Helper()
	return newVerifierWith(t, is, true, now...)
}

func newVerifierWith(t *testing.T, is *oauthrstest.Issuer, scopeRights bool, now ...func() time.Time) *oauthrs.Verifier {
	t.Helper()
	clock := time.Now
	if len(now) > 0 {
		clock = now[0]
	}
	v, err := oauthrs.New(oauthrs.Options{
		Issuer: is.URL, Audience: audience, Now: clock, ScopeRights: scopeRights,
		HTTPClient: (&netguard.Policy{AllowPrivate: true}).Client(5 * time.Second),
		Principals: func(claim string) (*principal.Principal, bool) {
			switch claim {
			case "ci-bot", "4f1c-opaque-id":
				return &principal.Principal{Name: "ci-bot", Agents: []string{"reviewer"}}, true
			case "rogue":
				// A mapping that hands out a reserved name is refused too.
				return &principal.Principal{Name: "admin", Admin: true}, true
			}
			return nil, false
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestVerify: every way a token can be wrong is refused with
// ErrInvalidToken and a reason; good tokens map to principals.
func TestVerify(t *testing.T) {
	is := oauthrstest.New(t)
	v := newVerifier(t, is)
	ctx := context.Background()
	forger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		claims oauthrstest.Claims
		raw    string // instead of claims
		reason string // "" = accepted
	}{
		{"valid", oauthrstest.Claims{Subject: "alice", Audience: []string{audience}, Scope: "agentd:agents"}, "", ""},
		{"expired", oauthrstest.Claims{Subject: "alice", Audience: []string{audience}, Expiry: time.Now().Add(-5 * time.Minute)}, "", "expired"},
		{"expired within leeway", oauthrstest.Claims{Subject: "alice", Audience: []string{audience}, Expiry: time.Now().Add(-30 * time.Second)}, "", ""},
		{"not yet valid", oauthrstest.Claims{Subject: "alice", Audience: []string{audience}, NotBefore: time.Now().Add(10 * time.Minute)}, "", "not valid yet"},
		{"wrong audience", oauthrstest.Claims{Subject: "alice", Audience: []string{"http://elsewhere"}}, "", "wrong audience"},
		{"no audience", oauthrstest.Claims{Subject: "alice"}, "", "wrong audience"},
		{"wrong issuer", oauthrstest.Claims{Issuer: "http://evil.test", Subject: "alice", Audience: []string{audience}}, "", "wrong issuer"},
		{"badly signed", oauthrstest.Claims{Subject: "alice", Audience: []string{audience}, SignWith: forger}, "", "signature does not verify"},
		{"no subject", oauthrstest.Claims{Audience: []string{audience}}, "", `no "sub" claim`},
		{"not a JWT", oauthrstest.Claims{}, "not-a-token", "not a signed JWT"},
		{"HMAC with the public key", oauthrstest.Claims{}, hmacToken(t, is.URL), "not a signed JWT"},
		{"alg none", oauthrstest.Claims{}, "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.", "not a signed JWT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tok := tt.raw
			if tok == "" {
				tok = is.Token(t, tt.claims)
			}
			p, _, err := v.Verify(ctx, tok)
			if tt.reason == "" {
				if err != nil || p.Name != oauthrs.ScopePrefix+"alice" {
					t.Fatalf("refused a good token: %v", err)
				}
				return
			}
			if !errors.Is(err, oauthrs.ErrInvalidToken) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("err = %v, want ErrInvalidToken with %q", err, tt.reason)
			}
			if strings.Contains(err.Error(), tok) {
				t.Fatal("the error echoes the token")
			}
		})
	}
}

func hmacToken(t *testing.T, iss string) string {
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("public-key-as-secret-000000000000")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(jwt.Claims{Issuer: iss, Subject: "alice", Audience: jwt.Audience{audience}, Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestRights: a configured principal's name lends its rights; otherwise
// (with ScopeRights) scopes grant them, to a principal whose name cannot
// be a configured one.
func TestRights(t *testing.T) {
	is := oauthrstest.New(t)
	v := newVerifier(t, is)
	ctx := context.Background()
	for _, tt := range []struct {
		sub, scope         string
		admin, agent, tool bool
	}{
		{"ci-bot", "agentd:admin", false, true, false}, // the configured entry wins over scopes
		{"alice", "agentd:agents", false, true, false},
		{"bob", "agentd:agent:reviewer other", false, true, false},
		{"carol", "agentd:tools", false, false, true},
		{"dave", "agentd:admin", true, true, true},
		{"eve", "", false, false, false},
	} {
		p, _, err := v.Verify(ctx, is.Token(t, oauthrstest.Claims{Subject: tt.sub, Audience: []string{audience}, Scope: tt.scope}))
		if err != nil {
			t.Fatal(err)
		}
		want := oauthrs.ScopePrefix + tt.sub
		if tt.sub == "ci-bot" {
			want = "ci-bot"
		}
		if p.Name != want || p.Admin != tt.admin || p.MayRunAgent("reviewer") != tt.agent || p.MayCallTool("file_read") != tt.tool {
			t.Errorf("%s with %q: %+v", tt.sub, tt.scope, p)
		}
	}
}

// TestTokenPrincipal: a token is a principal only through configuration.
// A subject the configuration maps is that principal; an unknown subject
// is refused with ErrNoPrincipal (a 403, not a 401) unless scope rights
// are on; the reserved names admin and local are refused always, even
// with an admin scope, so no token reads what the operator's key owns.
func TestTokenPrincipal(t *testing.T) {
	is := oauthrstest.New(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name        string
		scopeRights bool
		sub, scope  string
		want        string // principal name; "" = refused with ErrNoPrincipal
	}{
		{"configured name", false, "ci-bot", "", "ci-bot"},
		{"listed subject", false, "4f1c-opaque-id", "", "ci-bot"},
		{"unknown subject", false, "alice", "agentd:admin", ""},
		{"reserved admin", false, "admin", "agentd:admin", ""},
		{"reserved local", false, "local", "agentd:admin", ""},
		{"mapping to a reserved name", false, "rogue", "", ""},
		{"unknown subject, scope rights", true, "alice", "agentd:agents", "oauth:alice"},
		{"reserved admin, scope rights", true, "admin", "agentd:admin", ""},
		{"reserved local, scope rights", true, "local", "agentd:admin", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := newVerifierWith(t, is, tt.scopeRights)
			p, _, err := v.Verify(ctx, is.Token(t, oauthrstest.Claims{Subject: tt.sub, Audience: []string{audience}, Scope: tt.scope}))
			if tt.want == "" {
				if !errors.Is(err, oauthrs.ErrNoPrincipal) || errors.Is(err, oauthrs.ErrInvalidToken) || p != nil {
					t.Fatalf("Verify = %+v, %v; want ErrNoPrincipal alone", p, err)
				}
				if !strings.Contains(err.Error(), `"sub" claim`) {
					t.Errorf("error %q does not name the claim", err)
				}
				return
			}
			if err != nil || p.Name != tt.want {
				t.Fatalf("Verify = %+v, %v; want principal %q", p, err, tt.want)
			}
			if p.Admin || p.MaySee("admin") || p.MaySee("local") {
				t.Errorf("principal %+v sees what admin or local own", p)
			}
		})
	}
}

// TestKeyRotation: a token signed with a key the verifier has not seen
// makes it refetch the key set once; a flood of unknown kids does not
// become a flood of fetches.
func TestKeyRotation(t *testing.T) {
	is := oauthrstest.New(t)
	now := time.Now()
	v := newVerifier(t, is, func() time.Time { return now })
	ctx := context.Background()
	good := oauthrstest.Claims{Subject: "alice", Audience: []string{audience}}
	if _, _, err := v.Verify(ctx, is.Token(t, good)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := v.Verify(ctx, is.Token(t, good)); err != nil {
		t.Fatal(err)
	}
	if n := is.Fetches(); n != 1 {
		t.Fatalf("%d JWKS fetches for two tokens of one key, want 1", n)
	}
	is.Rotate(t)
	rotated := is.Token(t, good)
	// Right after a fetch an unknown kid is refused without asking the
	// issuer again (forged kids cannot make the daemon hammer it)...
	for range 5 {
		if _, _, err := v.Verify(ctx, rotated); !errors.Is(err, oauthrs.ErrInvalidToken) {
			t.Fatalf("unknown kid within the refetch gap: %v", err)
		}
	}
	if n := is.Fetches(); n != 1 {
		t.Fatalf("%d JWKS fetches for unknown kids within the gap, want 1", n)
	}
	// ...and once the gap has passed, the new key is fetched and used.
	now = now.Add(11 * time.Second)
	if _, _, err := v.Verify(ctx, rotated); err != nil {
		t.Fatalf("token of the rotated key: %v", err)
	}
	if n := is.Fetches(); n != 2 {
		t.Fatalf("%d JWKS fetches after a rotation, want 2", n)
	}
}

// TestDiscoveryRefusesPrivateIssuer: the keys are fetched through the
// SSRF guard; a loopback issuer needs allow_private.
func TestDiscoveryRefusesPrivateIssuer(t *testing.T) {
	is := oauthrstest.New(t)
	v, err := oauthrs.New(oauthrs.Options{Issuer: is.URL, Audience: audience, HTTPClient: (&netguard.Policy{}).Client(5 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = v.Verify(context.Background(), is.Token(t, oauthrstest.Claims{Subject: "alice", Audience: []string{audience}}))
	if !errors.Is(err, oauthrs.ErrInvalidToken) || is.Fetches() != 0 {
		t.Fatalf("loopback issuer reached without allow_private: %v, %d fetches", err, is.Fetches())
	}
}
