package daemon

import (
	"context"

	"encoding/json"
	"fmt"
	"github.com/agentd/agentd/internal/a2aedge"
	"net/http"
	"strings"
	"time"

	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/oauthrs"
	"github.com/agentd/agentd/internal/principal"
)

// mountOAuth builds the access-token verifier of [auth.oauth] and serves
// the Protected Resource Metadata that points clients to its issuer.
func (d *Daemon) mountOAuth() error {
	o := d.Config().Auth.OAuth
	if o == nil {
		return nil
	}
	v, err := oauthrs.New(oauthrs.Options{
		Issuer: o.Issuer, Audience: d.Config().OAuthAudience(), JWKSURL: o.JWKSURL,
		PrincipalClaim: o.PrincipalClaim, Leeway: time.Duration(o.LeewaySecs) * time.Second,
		Principals: func(claim string) (*principal.Principal, bool) { return d.Config().TokenPrincipal(claim) }, ScopeRights: o.ScopeRights,
		HTTPClient: (&netguard.Policy{AllowPrivate: o.AllowPrivate, Proxy: d.proxy, Hint: "set allow_private = true in [auth.oauth] to allow it"}).Client(15 * time.Second),
		Logger:     d.log.With("component", "oauth"),
	})
	if err != nil {
		return fmt.Errorf("auth.oauth: %w", err)
	}
	d.tokens = v
	serve := func(w http.ResponseWriter, r *http.Request) {
		md := v.MetadataFor(d.Config().OAuthAudience(), "")
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		_ = json.NewEncoder(w).Encode(md)
	}
	// One resource for every path: the audience names the daemon, and a
	// client checks that the resource is a prefix of the URL it calls.
	d.mux.HandleFunc("GET "+oauthrs.WellKnown, serve)
	d.mux.HandleFunc("GET "+oauthrs.WellKnown+"/{path...}", serve)
	return nil
}

// tokenVerifier is the verifier as the middleware takes it: a nil
// interface, not a typed nil, when OAuth is off.
func (d *Daemon) tokenVerifier() httpapi.TokenVerifier {
	if d.tokens == nil {
		return nil
	}
	return d.tokens
}

// baseURL is the daemon's URL as clients see it: public_url, else the
// request's Host, which the admission layer has already checked names
// this daemon (a loopback name, the listen host, [server]
// allowed_hosts), so a request cannot make it point elsewhere.
func (d *Daemon) baseURL(r *http.Request) string {
	if d.Config().PublicURL != "" {
		return strings.TrimRight(d.Config().PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// resourcePath is the path under the metadata's well-known prefix that
// describes p: its first segment (/mcp, /a2a, /api).
func resourcePath(p string) string {
	seg, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if seg == "" {
		return ""
	}
	return "/" + seg
}

// a2aOAuth tells the A2A edge where tokens come from, for Agent Cards.
func (d *Daemon) a2aOAuth() func(context.Context) (a2aedge.OAuthServer, error) {
	if d.tokens == nil {
		return nil
	}
	return func(ctx context.Context) (a2aedge.OAuthServer, error) {
		sm, err := d.tokens.Server(ctx)
		if err != nil {
			return a2aedge.OAuthServer{}, err
		}
		return a2aedge.OAuthServer{MetadataURL: sm.URL, AuthorizationURL: sm.AuthorizationEndpoint, TokenURL: sm.TokenEndpoint}, nil
	}
}
