// Package vendorhttp is what the vendor adapters (openai, anthropic,
// gemini) share for talking HTTP: removing the API key and URL credentials
// from text bound for errors and logs, checking base URLs, turning a transport failure into an
// *llm.StatusError without secrets, and a client that pools connections.
//
// It knows no vendor: each adapter still decides what its API's errors
// mean and which of them are authentication failures.
package vendorhttp

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentd/agentd/internal/llm"
)

// idleConnsPerHost replaces Go's default of 2 idle connections per host, so
// concurrent agent runs reuse connections to the same API.
const idleConnsPerHost = 32

// NewClient returns a client on a copy of http.DefaultTransport keeping
// more idle connections per host, with no timeout: calls are bounded by
// their ctx, and a timeout would cut long streamed answers. When
// http.DefaultTransport has been wrapped (e.g. for tracing) the wrapper is
// kept and left as it is.
func NewClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{}
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = idleConnsPerHost
	return &http.Client{Transport: t}
}

// Redact removes apiKey from s. Keys shorter than 4 characters are left:
// replacing them would mangle the message and hide nothing worth hiding.
func Redact(s, apiKey string) string {
	if len(apiKey) >= 4 {
		s = strings.ReplaceAll(s, apiKey, "[redacted]")
	}
	return s
}

// RedactURL hides the credentials embedded in a URL; a URL that does not
// parse is not shown at all.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable)"
	}
	return u.Redacted()
}

// ParseBaseURL parses an API base URL from configuration, which must be an
// absolute http(s) URL. Its error shows the URL with credentials hidden.
func ParseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base url %q: want an absolute http(s) url", RedactURL(s))
	}
	return u, nil
}

// Describe is err's message without apiKey or a URL's credentials.
func Describe(err error, apiKey string) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		// url.Error's text includes the URL, which may embed credentials.
		return Redact(fmt.Sprintf("%s %s: %v", urlErr.Op, RedactURL(urlErr.URL), urlErr.Err), apiKey)
	}
	return Redact(err.Error(), apiKey)
}

// TransportError reports a call that failed without an HTTP status (a
// connection or stream error) as an *llm.StatusError described without
// secrets. The cause stays reachable with errors.Is/As; of a *url.Error
// only the inner error is kept, since the url.Error holds the URL.
func TransportError(err error, apiKey string) *llm.StatusError {
	cause := err
	if urlErr := (*url.Error)(nil); errors.As(err, &urlErr) {
		cause = urlErr.Err
	}
	return &llm.StatusError{Message: Describe(err, apiKey), Err: cause}
}
