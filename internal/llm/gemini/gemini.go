// Package gemini implements llm.Provider on the Gemini API
// (generativelanguage.googleapis.com) through the official SDK
// (google.golang.org/genai).
//
// Answers are always streamed (streamGenerateContent, alt=sse). Thought
// parts are reported as llm.DeltaThinking. Tools are declared with
// parametersJsonSchema, so their JSON Schema reaches the API unchanged.
//
// Call IDs: Gemini usually sends function calls without IDs, so the adapter
// makes one up for each ("gcall_" and random characters); it keeps
// whatever ID the API sends instead. Made-up IDs are not sent back; the API
// pairs calls and responses by order and name.
//
// Thought signatures: Gemini attaches an opaque thoughtSignature to
// function calls and, for thinking models, requires it back with the call
// in the history. It is kept in llm.ToolCall.Signature, which is stored
// with the conversation, so a tool loop resumed after a restart (or on
// another Provider) still sends it. llm.Request.Reasoning sets a thinking
// budget of llm.ReasoningBudget tokens and asks for the thoughts.
//
// Tool-call arguments: Gemini sends arguments as a JSON object, which is
// kept as llm.ToolCall.Arguments. When the model writes a call the API
// cannot parse, the API ends the answer with MALFORMED_FUNCTION_CALL and no
// call; the adapter then returns one tool call (name recovered from the
// API's message when possible, else "malformed_function_call") whose
// Arguments is a JSON string holding the API's message, and stop reason
// tool_use, so the agent loop answers "arguments are not valid JSON" and
// the model can try again. A call whose Arguments is not a JSON object is
// replayed with empty args.
//
// Retries: the SDK's retries ignore Retry-After, so they are off and the
// adapter wraps the HTTP client's transport with its own: 408, 429, 5xx
// and connection errors are retried (default 3 times) with exponential
// backoff from 0.5 s, honouring Retry-After-Ms, Retry-After and Google's
// RetryInfo up to two minutes, and stopping when ctx is cancelled.
//
// The SDK would read GOOGLE_API_KEY, GEMINI_API_KEY and base-URL and
// backend variables from the environment; the adapter sets every one of
// those settings explicitly so none of them applies.
package gemini

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/vendorhttp"
)

// name is the provider name in errors.
const name = "gemini"

const (
	// defaultBaseURL is the Gemini API.
	defaultBaseURL = "https://generativelanguage.googleapis.com/"
	// defaultMaxRetries applies when Options.MaxRetries is 0.
	defaultMaxRetries = 3
)

// Options configures a Provider.
type Options struct {
	// BaseURL of the API root (the version is added); empty means
	// https://generativelanguage.googleapis.com/.
	BaseURL string
	// APIKey is sent as x-goog-api-key. The Gemini API requires one.
	APIKey string
	// APIKeyEnv names the variable the key came from, for error messages.
	APIKeyEnv string
	// MaxRetries on 408/429/5xx and connection errors; 0 means 3, negative
	// means none.
	MaxRetries int
	// HTTPClient to use; nil means a client on a copy of
	// http.DefaultTransport keeping more idle connections, with no timeout
	// (bound calls with ctx). Its transport is wrapped, not modified.
	HTTPClient *http.Client
	// Logger receives retry diagnostics; nil discards them.
	Logger *slog.Logger
}

// Provider is an llm.Provider for the Gemini API. It is safe for concurrent
// use.
type Provider struct {
	client *genai.Client // nil when no key is configured
	key    string
	envVar string
	logger *slog.Logger
	// retry is the transport installed in the client, kept so tests can
	// shorten its backoff.
	retry *retryTransport
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
	base := opts.BaseURL
	if base == "" {
		base = defaultBaseURL
	}
	if _, err := vendorhttp.ParseBaseURL(base); err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	p := &Provider{key: opts.APIKey, envVar: opts.APIKeyEnv, logger: logger}
	hc := *vendorhttp.NewClient()
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	}
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	p.retry = &retryTransport{
		next: next, maxRetries: retries,
		baseDelay: 500 * time.Millisecond, maxDelay: 8 * time.Second, maxRetryAfter: 2 * time.Minute,
		logger: logger,
	}
	hc.Transport = captureTransport{next: p.retry}
	if opts.APIKey == "" {
		return p, nil
	}
	// NewClient does no I/O when given an API key.
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      opts.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  &hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: base},
	})
	if err != nil {
		// The SDK's message may print its whole config, key included.
		return nil, errors.New("gemini: create client: invalid configuration")
	}
	p.client = client
	return p, nil
}

// Generate implements llm.Provider. onDelta may be nil.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	if p.client == nil {
		return nil, &llm.AuthError{Provider: name, EnvVar: p.envVar, Err: errors.New("no API key configured")}
	}
	if onDelta == nil {
		onDelta = func(llm.Delta) {}
	}
	contents, config := p.request(req)
	var acc accumulator
	capture := &finishCapture{}
	for chunk, err := range p.client.Models.GenerateContentStream(withCapture(ctx, capture), req.Model, contents, config) {
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, fmt.Errorf("gemini: generate: %w", ctxErr)
			}
			return nil, p.apiError(err)
		}
		acc.add(chunk, onDelta)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gemini: generate: %w", err)
	}
	if acc.finishMessage == "" {
		acc.finishMessage = capture.get()
	}
	resp, err := acc.response()
	if err != nil {
		return nil, fmt.Errorf("gemini: generate: %w", err)
	}
	return resp, nil
}

// apiError turns an SDK error into the adapter's: an *llm.AuthError for 401
// and 403 (and for the 400 the API answers an invalid key with), otherwise
// an *llm.StatusError naming the status and the server's message, with the
// key redacted everywhere.
func (p *Provider) apiError(err error) error {
	var apiErr genai.APIError
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if apiErr.Status != "" {
			msg = apiErr.Status + ": " + msg
		}
		e := &llm.StatusError{Status: apiErr.Code, Message: vendorhttp.Redact(msg, p.key)}
		if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || invalidKey(apiErr) {
			return &llm.AuthError{Provider: name, EnvVar: p.envVar, Err: e}
		}
		return fmt.Errorf("%s: generate: %w", name, e)
	}
	return fmt.Errorf("%s: generate: %w", name, vendorhttp.TransportError(err, p.key))
}

// invalidKey recognises the 400 INVALID_ARGUMENT the Gemini API returns for
// a bad key (reason API_KEY_INVALID).
func invalidKey(e genai.APIError) bool {
	if e.Code != http.StatusBadRequest {
		return false
	}
	for _, d := range e.Details {
		if d["reason"] == "API_KEY_INVALID" {
			return true
		}
	}
	return strings.Contains(e.Message, "API key not valid")
}
