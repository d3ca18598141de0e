// Package oauthrs makes agentd an OAuth 2.1 resource server, as the MCP
// authorization spec asks of a protected MCP server, for every edge at
// once: /mcp, the gateways, A2A and the API.
//
// An access token is a JWT from the configured issuer. It is accepted when
// its signature verifies against the issuer's JWKS (discovered from the
// issuer's metadata when not configured, cached, refetched when a token
// names an unknown key, so the issuer can rotate keys), its iss and aud
// are the configured ones, and exp/nbf/iat hold within the clock leeway.
// Its principal claim (default "sub") names the principal, only through
// configuration: the [[principals]] entry that lists the claim's value
// (or bears it as its name) is the token's principal. With ScopeRights, a
// value no entry names is the principal "oauth:<value>" (a name no entry
// can have) with the rights the token's scopes grant; without, the token
// is refused with ErrNoPrincipal. The reserved names "admin" and "local"
// are never a token's. Clients learn where to get a token from RFC 9728 Protected
// Resource Metadata, which the 401 answer points to.
package oauthrs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/agentd/agentd/internal/principal"
)

// Scopes a token can carry to grant rights when no principal of its name
// is configured.
const (
	ScopeAdmin  = "agentd:admin"  // every right
	ScopeAgents = "agentd:agents" // run every agent
	ScopeTools  = "agentd:tools"  // call every tool directly
	// ScopeAgentPrefix + NAME runs the one agent NAME.
	ScopeAgentPrefix = "agentd:agent:"
)

// ErrInvalidToken is wrapped by every refusal of a token: a 401 with
// error="invalid_token".
var ErrInvalidToken = errors.New("invalid access token")

// ErrNoPrincipal is wrapped by the refusal of a valid token that names no
// principal the configuration knows (or a reserved one): the caller is
// who the issuer says, but has no identity here, a 403 rather than a 401
// (another token of the same subject would not help).
var ErrNoPrincipal = errors.New("the access token names no principal of this daemon")

// ScopePrefix starts the name of a principal whose rights come from its
// token's scopes (Options.ScopeRights): configured names cannot contain
// ':', so such a name never equals a configured or reserved one.
const ScopePrefix = "oauth:"

// Options configure a Verifier.
type Options struct {
	Issuer   string // required: the iss every token must carry
	Audience string // required: one of the token's aud values
	// JWKSURL is where the issuer's keys are; "" = discovered from the
	// issuer's RFC 8414 (or OpenID) metadata.
	JWKSURL string
	// PrincipalClaim names the claim that names the principal; default "sub".
	PrincipalClaim string
	// Leeway is the clock skew allowed on exp, nbf and iat; default 60 s.
	Leeway time.Duration
	// Principals returns the configured principal a principal claim's
	// value maps to (config.Config.TokenPrincipal).
	Principals func(claim string) (*principal.Principal, bool)
	// ScopeRights lets a claim no configured principal takes be the
	// principal ScopePrefix+claim, with the rights of the token's scopes;
	// false refuses such tokens with ErrNoPrincipal.
	ScopeRights bool
	// HTTPClient fetches metadata and keys; it must carry the SSRF guard.
	HTTPClient *http.Client
	Logger     *slog.Logger
	Now        func() time.Time
}

// Verifier checks access tokens.
type Verifier struct {
	opts Options
	log  *slog.Logger

	mu      sync.Mutex
	keys    jose.JSONWebKeySet
	jwksURL string
	fetched time.Time // when keys were last fetched
	meta    ServerMetadata
}

// ServerMetadata is what the issuer's metadata says about getting a token.
type ServerMetadata struct {
	URL                   string // where the metadata was read
	AuthorizationEndpoint string
	TokenEndpoint         string
}

// keyTTL is how long fetched keys are trusted before a refresh; refetchGap
// bounds how often an unknown kid can trigger a fetch (a flood of forged
// kids must not become a flood of requests to the issuer).
const (
	keyTTL     = time.Hour
	refetchGap = 10 * time.Second
	maxDoc     = 1 << 20
)

// New returns a Verifier. It fetches nothing until the first token.
func New(opts Options) (*Verifier, error) {
	if opts.Issuer == "" || opts.Audience == "" {
		return nil, errors.New("oauth resource server: issuer and audience are required")
	}
	if opts.PrincipalClaim == "" {
		opts.PrincipalClaim = "sub"
	}
	if opts.Leeway == 0 {
		opts.Leeway = 60 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HTTPClient == nil {
		return nil, errors.New("oauth resource server: an HTTP client with the SSRF guard is required")
	}
	if opts.Principals == nil {
		opts.Principals = func(string) (*principal.Principal, bool) { return nil, false }
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Verifier{opts: opts, log: log, jwksURL: opts.JWKSURL}, nil
}

// Issuer is the authorization server tokens come from.
func (v *Verifier) Issuer() string { return v.opts.Issuer }

// algorithms are the signature algorithms accepted: asymmetric only, so a
// public key can never double as an HMAC secret.
var algorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512, jose.ES256, jose.ES384, jose.ES512, jose.EdDSA}

// claims are the token's claims agentd reads beyond the registered ones.
type claims struct {
	jwt.Claims
	Scope string   `json:"scope"`
	SCP   []string `json:"scp"`
}

// Verify checks token and returns its principal and scopes.
func (v *Verifier) Verify(ctx context.Context, token string) (*principal.Principal, []string, error) {
	tok, err := jwt.ParseSigned(token, algorithms)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: not a signed JWT", ErrInvalidToken)
	}
	if len(tok.Headers) != 1 {
		return nil, nil, fmt.Errorf("%w: one signature expected", ErrInvalidToken)
	}
	key, err := v.key(ctx, tok.Headers[0].KeyID)
	if err != nil {
		return nil, nil, err
	}
	var c claims
	var raw map[string]any
	if err := tok.Claims(key, &c, &raw); err != nil {
		return nil, nil, fmt.Errorf("%w: signature does not verify", ErrInvalidToken)
	}
	exp := jwt.Expected{Issuer: v.opts.Issuer, AnyAudience: jwt.Audience{v.opts.Audience}, Time: v.opts.Now()}
	if err := c.ValidateWithLeeway(exp, v.opts.Leeway); err != nil {
		return nil, nil, fmt.Errorf("%w: %s", ErrInvalidToken, claimError(err))
	}
	if c.Expiry == nil {
		return nil, nil, fmt.Errorf("%w: no exp claim", ErrInvalidToken)
	}
	name, _ := raw[v.opts.PrincipalClaim].(string)
	if name == "" {
		return nil, nil, fmt.Errorf("%w: no %q claim to name the principal", ErrInvalidToken, v.opts.PrincipalClaim)
	}
	scopes := strings.Fields(c.Scope)
	if len(scopes) == 0 {
		scopes = c.SCP
	}
	if principal.Reserved(name) {
		return nil, nil, fmt.Errorf("%w: its %q claim is %q, a name reserved for the daemon's own credentials", ErrNoPrincipal, v.opts.PrincipalClaim, name)
	}
	if p, ok := v.opts.Principals(name); ok && p != nil && !principal.Reserved(p.Name) {
		return p, scopes, nil
	}
	if v.opts.ScopeRights {
		return fromScopes(ScopePrefix+name, scopes), scopes, nil
	}
	return nil, nil, fmt.Errorf("%w: no [[principals]] entry lists its %q claim in oauth_subjects or as its name (ask the operator to map it)", ErrNoPrincipal, v.opts.PrincipalClaim)
}

// claimError words a claims validation failure without echoing values.
func claimError(err error) string {
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return "expired"
	case errors.Is(err, jwt.ErrNotValidYet):
		return "not valid yet (nbf)"
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "issued in the future (iat)"
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return "wrong issuer"
	case errors.Is(err, jwt.ErrInvalidAudience):
		return "wrong audience"
	}
	return "invalid claims"
}

// fromScopes builds the rights a token's scopes grant.
func fromScopes(name string, scopes []string) *principal.Principal {
	p := &principal.Principal{Name: name}
	for _, s := range scopes {
		switch {
		case s == ScopeAdmin:
			p.Admin, p.Agents, p.Tools = true, []string{"*"}, []string{"*"}
		case s == ScopeAgents:
			p.Agents = append(p.Agents, "*")
		case s == ScopeTools:
			p.Tools = append(p.Tools, "*")
		case strings.HasPrefix(s, ScopeAgentPrefix):
			p.Agents = append(p.Agents, strings.TrimPrefix(s, ScopeAgentPrefix))
		}
	}
	return p
}

// key returns the verification key kid names, fetching the key set when it
// is stale or does not know kid.
func (v *Verifier) key(ctx context.Context, kid string) (*jose.JSONWebKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.opts.Now()
	if k := pick(v.keys, kid); k != nil && now.Sub(v.fetched) < keyTTL {
		return k, nil
	}
	if now.Sub(v.fetched) >= refetchGap || v.fetched.IsZero() {
		if err := v.fetch(ctx); err != nil {
			v.log.Warn("fetching the issuer's keys failed", "issuer", v.opts.Issuer, "err", err)
			if k := pick(v.keys, kid); k != nil {
				return k, nil // the issuer is down: the cached key still holds
			}
			return nil, fmt.Errorf("%w: cannot fetch the issuer's keys", ErrInvalidToken)
		}
		v.fetched = now
	}
	if k := pick(v.keys, kid); k != nil {
		return k, nil
	}
	return nil, fmt.Errorf("%w: unknown signing key", ErrInvalidToken)
}

// pick returns the signing key named kid (any signing key when the token
// names none and the set has exactly one).
func pick(set jose.JSONWebKeySet, kid string) *jose.JSONWebKey {
	var sig []jose.JSONWebKey
	for _, k := range set.Keys {
		if k.Use == "" || k.Use == "sig" {
			sig = append(sig, k)
		}
	}
	if kid == "" {
		if len(sig) == 1 {
			return &sig[0]
		}
		return nil
	}
	for i := range sig {
		if sig[i].KeyID == kid {
			return &sig[i]
		}
	}
	return nil
}

// fetch (re)loads the key set, discovering its URL first if needed.
// Called with mu held.
func (v *Verifier) fetch(ctx context.Context) error {
	if v.jwksURL == "" {
		u, err := v.discover(ctx)
		if err != nil {
			return err
		}
		v.jwksURL = u
	}
	var set jose.JSONWebKeySet
	if err := v.getJSON(ctx, v.jwksURL, &set); err != nil {
		return fmt.Errorf("fetch jwks %s: %w", v.jwksURL, err)
	}
	if slices.ContainsFunc(set.Keys, func(k jose.JSONWebKey) bool { return !k.IsPublic() }) {
		return fmt.Errorf("jwks %s holds a private key: refusing it", v.jwksURL)
	}
	v.keys = set
	return nil
}

// discover reads jwks_uri from the issuer's metadata: RFC 8414 first
// (with the path inserted after the well-known prefix), then OpenID.
func (v *Verifier) discover(ctx context.Context) (string, error) {
	iss := strings.TrimRight(v.opts.Issuer, "/")
	scheme, rest, ok := strings.Cut(iss, "://")
	if !ok {
		return "", fmt.Errorf("issuer %q is not a URL", v.opts.Issuer)
	}
	host, path, _ := strings.Cut(rest, "/")
	if path != "" {
		path = "/" + path
	}
	var errs []error
	for _, u := range []string{
		scheme + "://" + host + "/.well-known/oauth-authorization-server" + path,
		scheme + "://" + host + "/.well-known/openid-configuration" + path,
		iss + "/.well-known/openid-configuration",
	} {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
			Authz   string `json:"authorization_endpoint"`
			Token   string `json:"token_endpoint"`
		}
		if err := v.getJSON(ctx, u, &meta); err != nil {
			errs = append(errs, err)
			continue
		}
		if strings.TrimRight(meta.Issuer, "/") != iss {
			return "", fmt.Errorf("metadata at %s is for issuer %q, not %q", u, meta.Issuer, v.opts.Issuer)
		}
		if meta.JWKSURI == "" {
			return "", fmt.Errorf("metadata at %s has no jwks_uri", u)
		}
		v.meta = ServerMetadata{URL: u, AuthorizationEndpoint: meta.Authz, TokenEndpoint: meta.Token}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("discover the keys of issuer %s: %w", v.opts.Issuer, errors.Join(errs...))
}

func (v *Verifier) getJSON(ctx context.Context, url string, dst any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.opts.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDoc+1))
	if err != nil {
		return err
	}
	if len(body) > maxDoc {
		return fmt.Errorf("GET %s: document over %d bytes", url, maxDoc)
	}
	return json.Unmarshal(body, dst)
}

// Server returns the issuer's endpoints, discovering them on first use
// (A2A Agent Cards name them in their oauth2 security scheme).
func (v *Verifier) Server(ctx context.Context) (ServerMetadata, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.meta.URL == "" {
		if _, err := v.discover(ctx); err != nil {
			return ServerMetadata{}, err
		}
	}
	return v.meta, nil
}

// Metadata is RFC 9728 Protected Resource Metadata.
type Metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// WellKnown is the path prefix of Protected Resource Metadata.
const WellKnown = "/.well-known/oauth-protected-resource"

// MetadataFor returns the metadata of the resource at base+path.
func (v *Verifier) MetadataFor(base, path string) Metadata {
	return Metadata{
		Resource:               strings.TrimRight(base, "/") + path,
		AuthorizationServers:   []string{v.opts.Issuer},
		ScopesSupported:        []string{ScopeAgents, ScopeTools, ScopeAdmin},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "agentd",
	}
}
