// Package openai implements llm.Provider on the OpenAI Chat Completions API
// through the official SDK (github.com/openai/openai-go/v3). The same
// adapter talks to any OpenAI-compatible server (Ollama, vLLM, llama.cpp,
// LM Studio, OpenRouter, ...) given its base URL, usually ending in /v1.
//
// Answers are always streamed, with usage requested through
// stream_options. Reasoning that compatible servers expose in the
// non-standard delta fields reasoning_content or reasoning is reported as
// llm.DeltaThinking; llm.Request.Reasoning is sent as reasoning_effort.
// llm.Request.MaxTokens is sent as max_completion_tokens
// to api.openai.com (its reasoning models refuse max_tokens) and as
// max_tokens elsewhere (older compatible servers know nothing else).
//
// Tool-call arguments follow llm.ToolArguments and llm.ObjectArguments:
// llm.ToolCall.Arguments is always valid JSON. When the model produced
// valid JSON it is kept verbatim (an empty string becomes {}); when it did
// not, Arguments is a JSON string holding the raw text, so
// the agent loop sees a non-object, answers the model "arguments are not
// valid JSON", and the message can still be stored. A call whose Arguments
// is not a JSON object is sent back to the API with arguments "{}", because
// several compatible servers reject history they cannot parse.
//
// Retries on 408, 409, 429 and 5xx are the SDK's (default 3 retries,
// exponential backoff from 0.5 s, Retry-After and Retry-After-Ms honoured up
// to 2 minutes, cancelled with ctx). The SDK reads no environment variables
// here: the adapter builds its service from Options alone.
package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/vendorhttp"
)

// name is the provider name in errors.
const name = "openai"

// defaultMaxRetries applies when Options.MaxRetries is 0.
const defaultMaxRetries = 3

// Options configures a Provider. The zero value talks to api.openai.com
// and fails every call with an *llm.AuthError for want of a key.
type Options struct {
	// BaseURL of an OpenAI-compatible API, e.g. http://localhost:11434/v1;
	// empty means https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token. It may be empty for local servers;
	// api.openai.com requires one.
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

// Provider is an llm.Provider for OpenAI-compatible Chat Completions APIs.
// It is safe for concurrent use.
type Provider struct {
	chat   oai.ChatCompletionService
	key    string
	envVar string
	// official is set for api.openai.com, which needs a key and wants
	// max_completion_tokens rather than the max_tokens compatible servers
	// understand.
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
		option.WithMiddleware(p.logAttempts),
	}
	if opts.BaseURL == "" {
		p.official = true
		reqOpts = append(reqOpts, option.WithEnvironmentProduction())
	} else {
		u, err := vendorhttp.ParseBaseURL(opts.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("openai: %w", err)
		}
		p.official = u.Host == "api.openai.com"
		reqOpts = append(reqOpts, option.WithBaseURL(opts.BaseURL))
	}
	if opts.APIKey != "" {
		reqOpts = append(reqOpts, option.WithAPIKey(opts.APIKey))
	}
	p.chat = oai.NewChatCompletionService(reqOpts...)
	return p, nil
}

// logAttempts is SDK middleware that logs failed attempts, which the SDK
// may then retry. It never logs headers, so the key stays out of logs.
func (p *Provider) logAttempts(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	attempt := req.Header.Get("X-Stainless-Retry-Count")
	switch {
	case err != nil && req.Context().Err() == nil:
		p.logger.Warn("openai request failed", "attempt", attempt, "err", vendorhttp.Describe(err, p.key))
	case err == nil && res.StatusCode >= 400:
		p.logger.Warn("openai request failed", "attempt", attempt, "status", res.StatusCode, "retry_after", res.Header.Get("Retry-After"))
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
	body, err := p.body(req)
	if err != nil {
		return nil, fmt.Errorf("%s: generate: encode the request: %w", name, err)
	}
	// The SDK makes the request (auth, retries, errors) and hands back
	// the response, whose event stream its ssestream splits and decodes
	// into streamChunk rather than oai.ChatCompletionChunk.
	var raw *http.Response
	// rctx lets the body's drain give up on a server that holds the
	// response open after [DONE] (see drainingBody).
	rctx, abort := context.WithCancel(ctx)
	defer abort()
	sdk := p.chat.NewStreaming(rctx, oai.ChatCompletionNewParams{}, option.WithResponseBodyInto(&raw), option.WithRequestBody("application/json", body))
	if raw != nil && raw.Body != nil {
		raw.Body = &drainingBody{ReadCloser: raw.Body, abort: abort}
	}
	stream := ssestream.NewStream[streamChunk](ssestream.NewDecoder(raw), sdk.Err())
	defer stream.Close()
	var acc accumulator
	for stream.Next() {
		c := stream.Current()
		acc.add(&c, onDelta)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("openai: generate: %w", err)
	}
	if err := stream.Err(); err != nil {
		return nil, p.apiError(err)
	}
	resp, err := acc.response()
	if err != nil {
		return nil, fmt.Errorf("openai: generate: %w", err)
	}
	return resp, nil
}

// apiError turns an SDK error into the adapter's: an *llm.AuthError for 401
// and 403, otherwise an *llm.StatusError naming the status and the
// server's message, with the key redacted everywhere.
func (p *Provider) apiError(err error) error {
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = apiErr.RawJSON()
		}
		e := &llm.StatusError{Status: apiErr.StatusCode, Message: vendorhttp.Redact(msg, p.key)}
		if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
			return &llm.AuthError{Provider: name, EnvVar: p.envVar, Err: e}
		}
		return fmt.Errorf("%s: generate: %w", name, e)
	}
	return fmt.Errorf("%s: generate: %w", name, vendorhttp.TransportError(err, p.key))
}

// The SDK's event stream stops reading at "data: [DONE]" and closes the
// body there. Unless the end of the HTTP response (a chunked body's last,
// empty chunk) had arrived with that event, net/http then cannot tell
// that the response is over and closes the connection instead of keeping
// it for the next call, which pays a new one (a TLS handshake, against a
// remote API). A server that flushes each event, as the test suite's
// model does, ends its response in a later packet: BenchmarkA2ASendMessage
// dialled for 3 sends in 4. (A response written in one piece, with a
// Content-Length, as the bench's fake model sends it, was not affected.)
const (
	// drainMax bounds what Close reads past the last event: a server
	// that sends more is not worth keeping the connection for.
	drainMax = 64 << 10
	// drainWait bounds how long Close waits for the end of the
	// response: past it, the connection is dropped as before.
	drainWait = 20 * time.Millisecond
)

// drainingBody reads the rest of a response body, within drainMax and
// drainWait, before closing it, so that net/http keeps the connection.
type drainingBody struct {
	io.ReadCloser
	// abort cancels the request, which ends a read the server keeps
	// waiting.
	abort context.CancelFunc
}

// Close implements io.Closer.
func (b *drainingBody) Close() error {
	var once sync.Once
	var err error
	closeBody := func() { once.Do(func() { err = b.ReadCloser.Close() }) }
	t := time.AfterFunc(drainWait, func() {
		b.abort()
		// A body that does not end with the request's context (one
		// from a caller's RoundTripper) ends when it is closed.
		closeBody()
	})
	_, _ = io.CopyN(io.Discard, b.ReadCloser, drainMax)
	t.Stop()
	closeBody() // once the timer's, if it fired
	return err
}
