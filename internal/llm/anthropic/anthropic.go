// Package anthropic implements llm.Provider on the Anthropic Messages API
// through the official SDK (github.com/anthropics/anthropic-sdk-go).
//
// Answers are always streamed. Thinking blocks (thinking_delta) are
// reported as llm.DeltaThinking and kept, with their signatures and any
// redacted_thinking blocks, in llm.Message.Thoughts, which are replayed
// first in the assistant turn: with extended thinking on, the API rejects
// a tool loop whose earlier turns lost them. llm.Request.Reasoning turns
// extended thinking on with budget llm.ReasoningBudget. Requests carry
// max_tokens, which the API requires: 4096 when llm.Request.MaxTokens is 0,
// raised above the thinking budget when thinking is on.
//
// Tool-call arguments follow llm.ToolArguments and llm.ObjectArguments:
// llm.ToolCall.Arguments is always valid JSON. The input_json_delta
// fragments are joined and kept verbatim when they form JSON ({} when there
// were none); otherwise Arguments is a JSON string
// holding the raw text, so the agent loop sees a non-object and answers the
// model "arguments are not valid JSON". A call whose Arguments is not a
// JSON object is replayed with input {}, the only shape the API accepts.
//
// Retries on 408, 409, 429, 5xx and connection errors are the SDK's
// (default 3 retries, exponential backoff from 0.5 s, Retry-After and
// Retry-After-Ms honoured, cancelled with ctx); a Retry-After longer than
// two minutes is not waited for. The SDK reads no environment variables or
// profile files here: the adapter builds its service from Options alone.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/vendorhttp"
)

// name is the provider name in errors.
const name = "anthropic"

const (
	// defaultMaxRetries applies when Options.MaxRetries is 0.
	defaultMaxRetries = 3
	// defaultMaxTokens applies when llm.Request.MaxTokens is 0.
	defaultMaxTokens = 4096
	// maxRetryAfter is the longest Retry-After the adapter waits for; the
	// SDK itself has no bound.
	maxRetryAfter = 2 * time.Minute
)

// Options configures a Provider.
type Options struct {
	// BaseURL of the API; empty means https://api.anthropic.com.
	BaseURL string
	// APIKey is sent as x-api-key. api.anthropic.com requires one; a proxy
	// given as BaseURL may not.
	APIKey string
	// APIKeyEnv names the variable the key came from, for error messages.
	APIKeyEnv string
	// MaxRetries on 408/409/429/5xx and connection errors; 0 means 3,
	// negative means none.
	MaxRetries int
	// HTTPClient to use; nil means a client on a copy of
	// http.DefaultTransport keeping more idle connections, with no timeout
	// (bound calls with ctx).
	HTTPClient *http.Client
	// Logger receives retry diagnostics; nil discards them.
	Logger *slog.Logger
}

// Provider is an llm.Provider for the Anthropic Messages API. It is safe
// for concurrent use.
type Provider struct {
	messages sdk.MessageService
	key      string
	envVar   string
	official bool
	logger   *slog.Logger
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider. It fails only on invalid options; a missing key
// is reported by Generate, so a daemon can start with a vendor unconfigured.
func New(opts Options) (*Provider, error) {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	retries := opts.MaxRetries
	switch {
	case retries == 0:
		retries = defaultMaxRetries
	case retries < 0:
		retries = 0
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = vendorhttp.NewClient()
	}
	p := &Provider{key: opts.APIKey, envVar: opts.APIKeyEnv, logger: logger}
	reqOpts := []option.RequestOption{
		option.WithHTTPClient(hc),
		option.WithMaxRetries(retries),
		option.WithMiddleware(p.watchAttempts),
	}
	if opts.BaseURL == "" {
		p.official = true
		reqOpts = append(reqOpts, option.WithEnvironmentProduction())
	} else {
		u, err := vendorhttp.ParseBaseURL(opts.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("anthropic: %w", err)
		}
		p.official = u.Host == "api.anthropic.com"
		reqOpts = append(reqOpts, option.WithBaseURL(opts.BaseURL))
	}
	if opts.APIKey != "" {
		reqOpts = append(reqOpts, option.WithAPIKey(opts.APIKey))
	}
	p.messages = sdk.NewMessageService(reqOpts...)
	return p, nil
}

// watchAttempts is SDK middleware that logs failed attempts (never
// headers, so never the key) and stops the SDK from waiting out a
// Retry-After longer than maxRetryAfter, by answering its x-should-retry
// question for it.
func (p *Provider) watchAttempts(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	attempt := req.Header.Get("X-Stainless-Retry-Count")
	switch {
	case err != nil && req.Context().Err() == nil:
		p.logger.Warn("anthropic request failed", "attempt", attempt, "err", vendorhttp.Describe(err, p.key))
	case err == nil && res.StatusCode >= 400:
		ra := res.Header.Get("Retry-After")
		p.logger.Warn("anthropic request failed", "attempt", attempt, "status", res.StatusCode, "retry_after", ra)
		// The SDK prefers Retry-After-Ms; only a long Retry-After alone
		// is refused.
		if secs, perr := strconv.ParseFloat(ra, 64); perr == nil && secs > maxRetryAfter.Seconds() && res.Header.Get("Retry-After-Ms") == "" {
			res.Header.Set("x-should-retry", "false")
		}
	}
	return res, err
}

// Generate implements llm.Provider. onDelta may be nil.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	if p.official && p.key == "" {
		return nil, &llm.AuthError{Provider: name, EnvVar: p.envVar, Err: errors.New("no API key configured")}
	}
	if onDelta == nil {
		onDelta = func(llm.Delta) {}
	}
	stream := p.messages.NewStreaming(ctx, params(req))
	defer stream.Close()
	var acc accumulator
	for stream.Next() {
		acc.add(stream.Current(), onDelta)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("anthropic: generate: %w", err)
	}
	if err := stream.Err(); err != nil {
		return nil, p.apiError(err)
	}
	resp, err := acc.response()
	if err != nil {
		return nil, fmt.Errorf("anthropic: generate: %w", err)
	}
	return resp, nil
}

// apiError turns an SDK error into the adapter's: an *llm.AuthError for 401
// and 403, otherwise an *llm.StatusError naming the status and the
// server's message, with the key redacted everywhere. Error events inside
// a stream arrive as *sdk.Error too.
func (p *Provider) apiError(err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		msg := apiErr.RawJSON()
		if json.Unmarshal([]byte(msg), &body) == nil && body.Error.Message != "" {
			msg = body.Error.Type + ": " + body.Error.Message
		}
		e := &llm.StatusError{Status: apiErr.StatusCode, Message: vendorhttp.Redact(msg, p.key)}
		if e.Status < 400 {
			// An error event in an accepted stream, e.g. overloaded_error.
			e.Status, e.Message = 0, "error event: "+e.Message
		}
		if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || body.Error.Type == "authentication_error" {
			return &llm.AuthError{Provider: name, EnvVar: p.envVar, Err: e}
		}
		return fmt.Errorf("%s: generate: %w", name, e)
	}
	return fmt.Errorf("%s: generate: %w", name, vendorhttp.TransportError(err, p.key))
}
