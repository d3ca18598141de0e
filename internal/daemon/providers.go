package daemon

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"sync"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/anthropic"
	"github.com/agentd/agentd/internal/llm/gemini"
	"github.com/agentd/agentd/internal/llm/openai"
)

// providers builds LLM providers from the config on first use, so a
// provider whose key is missing only fails the agents that use it, with an
// error naming the variable to set. The config is the running one (cfg):
// after a reload a new provider is built on first use, and a changed one
// is built again; runs already holding the old one finish with it.
type providers struct {
	cfg func() *config.Config
	log *slog.Logger
	// wrap wraps each provider's HTTP transport (trace propagation).
	wrap func(http.RoundTripper) http.RoundTripper

	mu    sync.Mutex
	built map[string]builtProvider
}

type builtProvider struct {
	pr   llm.Provider
	from config.Provider
}

func newProviders(cfg func() *config.Config, log *slog.Logger, wrap func(http.RoundTripper) http.RoundTripper) *providers {
	return &providers{cfg: cfg, log: log, wrap: wrap, built: map[string]builtProvider{}}
}

// GenAIProvider implements agent.GenAIProviders: the semantic-convention
// name of the vendor behind provider name.
func (p *providers) GenAIProvider(name string) string {
	switch p.cfg().Providers[name].Kind {
	case config.KindOpenAI:
		return "openai"
	case config.KindAnthropic:
		return "anthropic"
	case config.KindGemini:
		return "gcp.gemini"
	}
	return ""
}

// Provider implements agent.Providers.
func (p *providers) Provider(name string) (llm.Provider, error) {
	cfg := p.cfg()
	pc, ok := cfg.Providers[name]
	if !ok {
		return nil, fmt.Errorf("provider %q is not configured (add [providers.%s] to %s)", name, name, cfg.File)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.built[name]; ok && reflect.DeepEqual(b.from, pc) {
		return b.pr, nil
	}
	pr, err := buildProvider(name, pc, cfg, p.log, p.wrap)
	if err != nil {
		return nil, err
	}
	p.built[name] = builtProvider{pr, pc}
	return pr, nil
}

func buildProvider(name string, pc config.Provider, cfg *config.Config, log *slog.Logger, wrap func(http.RoundTripper) http.RoundTripper) (llm.Provider, error) {
	// base_url, else the vendor's variable (OPENAI_BASE_URL, ...), else
	// "" for the vendor's public endpoint.
	ep, _ := cfg.ProviderEndpoint(name)
	base := ep.URL
	key := ""
	if pc.APIKeyEnv != "" {
		v, ok := cfg.LookupSecret(pc.APIKeyEnv)
		// A local OpenAI-compatible server (Ollama, llama.cpp) needs no
		// key; hosted APIs do, and saying which variable is missing beats
		// a 401 later.
		if !ok || v == "" {
			if base == "" || pc.Kind != "openai" {
				return nil, &llm.AuthError{Provider: name, EnvVar: pc.APIKeyEnv}
			}
		}
		key = v
	}
	timeout := time.Duration(pc.TimeoutSecs) * time.Second
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	hc := modelClient(timeout, wrap)
	log = log.With("provider", name)
	// The host only: a query string may carry a key.
	if u, err := url.Parse(ep.Shown); err == nil {
		log.Debug("provider endpoint", "host", u.Host, "from", ep.Source())
	}
	switch pc.Kind {
	case "openai":
		return openai.New(openai.Options{BaseURL: base, APIKey: key, APIKeyEnv: pc.APIKeyEnv, MaxRetries: pc.MaxRetries, HTTPClient: hc, Logger: log})
	case "anthropic":
		return anthropic.New(anthropic.Options{BaseURL: base, APIKey: key, APIKeyEnv: pc.APIKeyEnv, MaxRetries: pc.MaxRetries, HTTPClient: hc, Logger: log})
	case "gemini":
		return gemini.New(gemini.Options{BaseURL: base, APIKey: key, APIKeyEnv: pc.APIKeyEnv, MaxRetries: pc.MaxRetries, HTTPClient: hc, Logger: log})
	}
	return nil, fmt.Errorf("provider %q: unknown kind %q", name, pc.Kind)
}

// modelClient is the HTTP client of a provider: each request, its answer
// included, is bounded by timeout.
func modelClient(timeout time.Duration, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	// Concurrent runs share one provider: keep more than Go's default two
	// idle connections per host, or every extra run pays a new handshake.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 32
	var rt http.RoundTripper = tr
	if wrap != nil {
		rt = wrap(tr)
	}
	return &http.Client{Transport: deadlineTransport{next: rt, timeout: timeout}}
}

// deadlineTransport bounds each request, its body included, by a
// deadline on its context. http.Client.Timeout does the same, but for a
// transport it does not know (the telemetry wrapper, the SDK's own) it
// starts a goroutine and a timer per request to enforce it: two more
// goroutine wake-ups on every model call.
type deadlineTransport struct {
	next    http.RoundTripper
	timeout time.Duration
}

// RoundTrip implements http.RoundTripper.
func (t deadlineTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(r.Context(), t.timeout)
	res, err := t.next.RoundTrip(r.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	res.Body = &cancelOnClose{ReadCloser: res.Body, cancel: cancel}
	return res, nil
}

// cancelOnClose ends a request's deadline with its body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

// Close implements io.Closer.
func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
