package config

import (
	"net/url"
	"strconv"
)

// baseURLEnv names, per provider kind, the variable the vendor's own SDKs
// and CLIs read the API's base URL from: openai-go and the openai CLI
// read OPENAI_BASE_URL, anthropic-sdk-go and Claude Code
// ANTHROPIC_BASE_URL, google.golang.org/genai GOOGLE_GEMINI_BASE_URL. A
// user who points their tools at a local server or a proxy this way
// expects agentd to follow. The adapters never let the SDKs read the
// environment themselves (only this package does), so this is where the
// variables are honoured.
var baseURLEnv = map[string]string{
	KindOpenAI:    "OPENAI_BASE_URL",
	KindAnthropic: "ANTHROPIC_BASE_URL",
	KindGemini:    "GOOGLE_GEMINI_BASE_URL",
}

// vendorURL is each vendor's public endpoint: what the adapters use when
// given no base URL. It is only shown (agentd doctor), never used to
// connect, so the adapters stay the one place that decides it.
var vendorURL = map[string]string{
	KindOpenAI:    "https://api.openai.com/v1",
	KindAnthropic: "https://api.anthropic.com",
	KindGemini:    "https://generativelanguage.googleapis.com/",
}

// Endpoint sources.
const (
	// FromConfig: base_url in the configuration.
	FromConfig = "config"
	// FromEnv: the vendor's environment variable (OPENAI_BASE_URL, ...).
	FromEnv = "env"
	// FromVendor: neither; the vendor's public endpoint.
	FromVendor = "vendor"
)

// Endpoint is the API a provider talks to and where that was decided.
type Endpoint struct {
	// URL is the base URL to hand the provider's adapter; "" means the
	// vendor's public endpoint, which the adapter knows.
	URL string
	// From is FromConfig, FromEnv or FromVendor.
	From string
	// Where details From: the file:line of base_url ("built-in default"
	// for the provider list used when the file defines none, "base_url"
	// for a Config built in code), or the variable's name.
	Where string
	// Shown is the URL for people: URL, or the vendor's endpoint.
	Shown string
}

// Source says where the endpoint came from, for people:
// "/home/me/.agentd/config.toml:12", "env OPENAI_BASE_URL" or "vendor
// default".
func (e Endpoint) Source() string {
	switch e.From {
	case FromEnv:
		return "env " + e.Where
	case FromVendor:
		return "vendor default"
	}
	return e.Where
}

// ProviderEndpoint returns the endpoint of the named provider: its
// base_url, else the vendor's base-URL variable (OPENAI_BASE_URL,
// ANTHROPIC_BASE_URL or GOOGLE_GEMINI_BASE_URL, by kind) when set and
// not empty, else the vendor's public endpoint. ok is false when no such
// provider is configured.
//
// An endpoint from the environment is treated as a base_url would be:
// validated by Load, and not subject to the SSRF guard (the operator
// chose it, and local model servers live on loopback).
func (c *Config) ProviderEndpoint(name string) (ep Endpoint, ok bool) {
	p, ok := c.Providers[name]
	if !ok {
		return Endpoint{}, false
	}
	return c.endpoint(name, p), true
}

func (c *Config) endpoint(name string, p Provider) Endpoint {
	kind := p.Kind
	if kind == "" && isProviderKind(name) {
		kind = name
	}
	if p.BaseURL != "" {
		where := c.baseURLAt[name]
		if where == "" {
			where = "base_url"
		}
		return Endpoint{URL: p.BaseURL, From: FromConfig, Where: where, Shown: p.BaseURL}
	}
	if env := baseURLEnv[kind]; env != "" {
		if v, ok := c.lookup(env); ok && v != "" {
			return Endpoint{URL: v, From: FromEnv, Where: env, Shown: v}
		}
	}
	return Endpoint{From: FromVendor, Shown: vendorURL[kind]}
}

// recordBaseURLs remembers where each provider's base_url was written,
// for ProviderEndpoint. fromFile says whether the providers come from the
// file or are the built-in list.
func (c *Config) recordBaseURLs(src *source, fromFile bool) {
	c.baseURLAt = make(map[string]string)
	for name, p := range c.Providers {
		if p.BaseURL == "" {
			continue
		}
		if !fromFile {
			c.baseURLAt[name] = "built-in default"
			continue
		}
		path := fieldPath{}.key("providers").key(name).key("base_url")
		where := src.file
		if l := src.lineOf(path); l > 0 {
			where += ":" + strconv.Itoa(l)
		}
		c.baseURLAt[name] = where
	}
}

// checkEndpoints validates the base URLs providers take from the
// environment, as checkProvider validates base_url. The value is never
// quoted back: a URL may carry credentials.
func checkEndpoints(r *report, src *source, c *Config) {
	for _, name := range sortedStringKeys(c.Providers) {
		ep := c.endpoint(name, c.Providers[name])
		if ep.From != FromEnv {
			continue
		}
		var problem string
		u, err := url.Parse(ep.URL)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			problem = "is not an http:// or https:// URL with a host"
		case u.User != nil:
			problem = "contains credentials (user:password@); keep the key in the provider's api_key_env variable"
		default:
			continue
		}
		r.add(src, fieldPath{}.key("providers").key(name).key("base_url"),
			"unset, so the environment variable %s applies, but %s %s: fix or unset %s, or set base_url", ep.Where, ep.Where, problem, ep.Where)
	}
}
