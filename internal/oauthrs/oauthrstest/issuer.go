// Package oauthrstest is a small authorization server for tests: a real
// HTTP server on loopback that publishes RFC 8414 metadata and a JWKS,
// signs access tokens with a key it can rotate, and runs the flow an MCP
// client's OAuth support expects: dynamic client registration, an
// authorization endpoint that approves at once (redirecting with a code),
// and a token endpoint that checks PKCE (S256) and issues a JWT for the
// requested resource.
package oauthrstest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is a running test authorization server.
type Issuer struct {
	URL string // the issuer identifier and base URL
	// Subject is the sub of tokens issued through the authorization flow;
	// default "ci-bot".
	Subject string

	mu    sync.Mutex
	keys  []jose.JSONWebKey // private keys, newest last
	codes map[string]grant  // authorization codes not yet exchanged
	// Fetches counts JWKS requests.
	fetches int
	tb      testing.TB
}

// grant is an authorization code's request.
type grant struct {
	clientID, redirect, challenge, resource, scope string
}

func (is *Issuer) register(w http.ResponseWriter, r *http.Request) {
	var meta map[string]any
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil {
		http.Error(w, "bad registration", http.StatusBadRequest)
		return
	}
	meta["client_id"] = "client-" + randomString(8)
	meta["client_id_issued_at"] = time.Now().Unix()
	meta["token_endpoint_auth_method"] = "none"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(meta)
}

// authorize approves every request at once: the user said yes.
func (is *Issuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("redirect_uri") == "" {
		http.Error(w, "want response_type=code with an S256 code_challenge and a redirect_uri", http.StatusBadRequest)
		return
	}
	code := randomString(16)
	is.mu.Lock()
	is.codes[code] = grant{clientID: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource"), scope: q.Get("scope")}
	is.mu.Unlock()
	u, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	rq := u.Query()
	rq.Set("code", code)
	if st := q.Get("state"); st != "" {
		rq.Set("state", st)
	}
	u.RawQuery = rq.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (is *Issuer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "authorization_code" {
		tokenError(w, "unsupported_grant_type")
		return
	}
	is.mu.Lock()
	g, ok := is.codes[r.PostForm.Get("code")]
	delete(is.codes, r.PostForm.Get("code")) // single use
	is.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge || r.PostForm.Get("redirect_uri") != g.redirect {
		tokenError(w, "invalid_grant")
		return
	}
	resource := r.PostForm.Get("resource")
	if resource == "" {
		resource = g.resource
	}
	tok := is.Token(is.tb, Claims{Subject: is.Subject, Audience: []string{resource}, Scope: g.scope})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
}

func tokenError(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// New starts an issuer with one signing key; it stops with the test.
func New(tb testing.TB) *Issuer {
	tb.Helper()
	is := &Issuer{Subject: "ci-bot", codes: map[string]grant{}}
	is.Rotate(tb)
	is.tb = tb
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer": is.URL, "jwks_uri": is.URL + "/jwks",
			"authorization_endpoint": is.URL + "/authorize", "token_endpoint": is.URL + "/token",
			"registration_endpoint":    is.URL + "/register",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"grant_types_supported":                 []string{"authorization_code"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("POST /register", is.register)
	mux.HandleFunc("GET /authorize", is.authorize)
	mux.HandleFunc("POST /token", is.token)
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
