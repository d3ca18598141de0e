package vendorhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/llm"
)

const key = "sk-secret-1234"

func TestRedact(t *testing.T) {
	for _, tc := range []struct {
		name, s, key, want string
	}{
		{"key replaced everywhere", "bad key sk-secret-1234 (sk-secret-1234)", key, "bad key [redacted] ([redacted])"},
		{"no key", "plain message", "", "plain message"},
		{"short key left alone", "abc ab", "ab", "abc ab"},
		{"key absent", "nothing here", key, "nothing here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Redact(tc.s, tc.key); got != tc.want {
				t.Errorf("Redact(%q, %q) = %q, want %q", tc.s, tc.key, got, tc.want)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"password hidden", "https://user:hunter22@proxy.example/v1", "https://user:xxxxx@proxy.example/v1"},
		{"no credentials", "http://localhost:11434/v1", "http://localhost:11434/v1"},
		{"unparseable", "http://[::1", "(unparseable)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RedactURL(tc.in); got != tc.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"url error", &url.Error{Op: "Post", URL: "https://u:hunter22@h.example/v1?key=" + key, Err: io.EOF},
			"Post https://u:xxxxx@h.example/v1?key=[redacted]: EOF"},
		{"wrapped url error", fmt.Errorf("stream: %w", &url.Error{Op: "Get", URL: "http://h/", Err: errors.New("refused " + key)}),
			"Get http://h/: refused [redacted]"},
		{"plain error", errors.New("header x-api-key: " + key), "header x-api-key: [redacted]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Describe(tc.err, key); got != tc.want {
				t.Errorf("Describe = %q, want %q", got, tc.want)
			}
		})
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("error sk-abcd sk-abcd", "sk-abcd")
	f.Add("aaaaaaa", "aaaa")
	f.Fuzz(func(t *testing.T, s, k string) {
		// Keys are tokens; a key containing brackets could reappear across
		// the "[redacted]" marker, which no real key does.
		if len(k) < 4 || strings.ContainsAny(k, "[]") {
			return
		}
		if got := Redact(s, k); strings.Contains(got, k) {
			t.Fatalf("Redact(%q, %q) = %q still holds the key", s, k, got)
		}
	})
}

// TestTransportErrorFromRealDial makes a real call to a closed loopback
// port through a URL carrying credentials and the key, as a misconfigured
// base URL would.
func TestTransportErrorFromRealDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	target := "http://user:hunter22@" + addr + "/v1?key=" + key
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, callErr := NewClient().Do(req)
	if callErr == nil {
		res.Body.Close()
		t.Fatal("call to a closed port succeeded")
	}
	wrapped := fmt.Errorf("vendor: generate: %w", TransportError(callErr, key))
	var se *llm.StatusError
	if !errors.As(wrapped, &se) || se.Status != 0 {
		t.Fatalf("errors.As(%v) = %+v, want a StatusError with status 0", wrapped, se)
	}
	for _, secret := range []string{key, "hunter22"} {
		if strings.Contains(wrapped.Error(), secret) {
			t.Errorf("error %q holds %q", wrapped, secret)
		}
	}
	var opErr *net.OpError
	if !errors.As(wrapped, &opErr) {
		t.Errorf("transport cause not reachable from %v", wrapped)
	}
	var urlErr *url.Error
	if errors.As(wrapped, &urlErr) {
		t.Errorf("url.Error, which holds the URL, is reachable from %v", wrapped)
	}
}

func TestTransportErrorKeepsPlainCause(t *testing.T) {
	se := TransportError(io.ErrUnexpectedEOF, key)
	if !errors.Is(se, io.ErrUnexpectedEOF) || se.Message != io.ErrUnexpectedEOF.Error() || se.Status != 0 {
		t.Errorf("TransportError(io.ErrUnexpectedEOF) = %+v", se)
	}
}

func TestNewClient(t *testing.T) {
	c := NewClient()
	if c.Timeout != 0 {
		t.Errorf("Timeout = %v, want none (calls are bounded by ctx)", c.Timeout)
	}
	tr, ok := c.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("Transport = %T, want *http.Transport", c.Transport)
	}
	if tr == http.DefaultTransport {
		t.Error("NewClient modified http.DefaultTransport instead of a copy")
	}
	if tr.MaxIdleConnsPerHost != idleConnsPerHost {
		t.Errorf("MaxIdleConnsPerHost = %d, want %d", tr.MaxIdleConnsPerHost, idleConnsPerHost)
	}
	if def := http.DefaultTransport.(*http.Transport); def.MaxIdleConnsPerHost == idleConnsPerHost {
		t.Error("http.DefaultTransport changed")
	}
	if NewClient().Transport == c.Transport {
		t.Error("clients share one transport")
	}
}

func TestParseBaseURL(t *testing.T) {
	for _, tc := range []struct {
		name, in, wantHost, wantErr string
	}{
		{"https", "https://api.example/v1", "api.example", ""},
		{"http loopback", "http://127.0.0.1:11434/v1", "127.0.0.1:11434", ""},
		{"relative", "/v1", "", `base url "/v1": want an absolute http(s) url`},
		{"other scheme", "ftp://h/", "", `base url "ftp://h/": want an absolute http(s) url`},
		{"no host", "http:///v1", "", `base url "http:///v1": want an absolute http(s) url`},
		{"credentials hidden", "ws://u:hunter22@h/", "", `base url "ws://u:xxxxx@h/": want an absolute http(s) url`},
		{"unparseable", "http://[::1", "", `base url "(unparseable)": want an absolute http(s) url`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, err := ParseBaseURL(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParseBaseURL(%q) = %v, %v; want error %q", tc.in, u, err, tc.wantErr)
				}
				return
			}
			if err != nil || u.Host != tc.wantHost {
				t.Fatalf("ParseBaseURL(%q) = %v, %v; want host %q", tc.in, u, err, tc.wantHost)
			}
		})
	}
}
