// Package oauthrstest is a small authorization server for tests: a real
// HTTP server on loopback that publishes RFC 8414 metadata and a JWKS, and
// signs access tokens with a key it can rotate.
package oauthrstest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is a running test authorization server.
type Issuer struct {
	URL string // the issuer identifier and base URL

	mu   sync.Mutex
	keys []jose.JSONWebKey // private keys, newest last
	// Fetches counts JWKS requests.
	fetches int
}

// New starts an issuer with one signing key; it stops with the test.
func New(tb testing.TB) *Issuer {
	tb.Helper()
	is := &Issuer{}
	is.Rotate(tb)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": is.URL, "jwks_uri": is.URL + "/jwks",
			"authorization_endpoint": is.URL + "/authorize", "token_endpoint": is.URL + "/token",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		is.fetches++
		set := jose.JSONWebKeySet{}
		for _, k := range is.keys {
			set.Keys = append(set.Keys, k.Public())
		}
		is.mu.Unlock()
		writeJSON(w, set)
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	is.URL = srv.URL
	return is
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Rotate adds a new signing key; tokens are signed with it from now on.
func (is *Issuer) Rotate(tb testing.TB) {
	tb.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		tb.Fatal(err)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	kid := "k" + string(rune('0'+len(is.keys)))
	is.keys = append(is.keys, jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: string(jose.RS256), Use: "sig"})
}

// Fetches is how many times the JWKS was fetched.
func (is *Issuer) Fetches() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.fetches
}

// Claims of a token to mint; zero fields get working defaults.
type Claims struct {
	Issuer    string
	Subject   string
	Audience  []string
	Scope     string
	Expiry    time.Time
	NotBefore time.Time
	// SignWith signs with this key instead of the issuer's (a forgery
	// that names the issuer's current kid).
	SignWith *rsa.PrivateKey
}

// Token signs c with the newest key.
func (is *Issuer) Token(tb testing.TB, c Claims) string {
	tb.Helper()
	is.mu.Lock()
	key := is.keys[len(is.keys)-1]
	is.mu.Unlock()
	if c.Issuer == "" {
		c.Issuer = is.URL
	}
	if c.Expiry.IsZero() {
		c.Expiry = time.Now().Add(time.Hour)
	}
	signKey := any(key.Key)
	if c.SignWith != nil {
		signKey = c.SignWith
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: signKey, KeyID: key.KeyID}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	if err != nil {
		tb.Fatal(err)
	}
	std := jwt.Claims{Issuer: c.Issuer, Subject: c.Subject, Audience: jwt.Audience(c.Audience),
		Expiry: jwt.NewNumericDate(c.Expiry), IssuedAt: jwt.NewNumericDate(time.Now().Add(-time.Minute))}
	if !c.NotBefore.IsZero() {
		std.NotBefore = jwt.NewNumericDate(c.NotBefore)
	}
	extra := map[string]any{}
	if c.Scope != "" {
		extra["scope"] = c.Scope
	}
	tok, err := jwt.Signed(sig).Claims(std).Claims(extra).Serialize()
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}
