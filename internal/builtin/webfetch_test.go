package builtin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/netguard"
)

const testPage = `<!DOCTYPE html>
<html><head><title> Test   Page </title>
<style>body { color: red }</style>
<script>var stolen = "SCRIPT-NOISE";</script>
</head>
<body>
<nav><a href="/home">NAV-NOISE</a></nav>
<header><h1>Main Heading</h1></header>
<p>First   paragraph with
a <a href="/docs/intro">relative link</a> and <a href="https://example.org/x">an absolute one</a>.</p>
<div hidden>HIDDEN-NOISE</div>
<div aria-hidden="true">ARIA-NOISE</div>
<h2>Sub heading</h2>
<ul><li>item one</li><li>item <b>two</b></li></ul>
<table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
<pre>  keep
    indentation</pre>
<a href="javascript:alert(1)">js link</a>
<form><input value="INPUT-NOISE"><button>BUTTON-NOISE</button></form>
<footer>FOOTER-NOISE</footer>
<noscript>NOSCRIPT-NOISE</noscript>
</body></html>`

func TestHTMLToText(t *testing.T) {
	base, _ := url.Parse("http://site.test/page")
	title, text, err := htmlToText(strings.NewReader(testPage), base)
	if err != nil {
		t.Fatal(err)
	}
	if title != "Test Page" {
		t.Errorf("title %q", title)
	}
	for _, want := range []string{
		"# Main Heading",
		"First paragraph with a [relative link](http://site.test/docs/intro) and [an absolute one](https://example.org/x).",
		"## Sub heading",
		"- item one\n- item two",
		"Name | Value\na | 1",
		"  keep\n    indentation",
		"js link",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, noise := range []string{"NOISE", "stolen", "color: red", "javascript:"} {
		if strings.Contains(text, noise) {
			t.Errorf("text keeps %q:\n%s", noise, text)
		}
	}
	if strings.Contains(text, "\n\n\n") {
		t.Errorf("blank lines not collapsed:\n%q", text)
	}
}

func TestHTMLToTextCases(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"inline spacing", `<p>a<b>b</b> c <i> d </i>e</p>`, "ab c d e"},
		{"br", `<p>one<br>two</p>`, "one\ntwo"},
		{"anchor only link", `<p><a href="#top">top</a></p>`, "top"},
		{"empty link dropped", `<p>x<a href="/y"></a>z</p>`, "xz"},
		{"img alt", `<p>see<img src="a.png" alt="a chart">here</p>`, "see [image: a chart] here"},
		{"display none", `<p>shown</p><p style="display: none">gone</p>`, "shown"},
		{"no body text", `<html><head><title>t</title></head></html>`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, err := htmlToText(strings.NewReader(tt.in), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func FuzzHTMLToText(f *testing.F) {
	f.Add(testPage)
	f.Add(`<a href="%zz">x</a><pre><pre>y</pre>`)
	f.Fuzz(func(t *testing.T, in string) {
		base, _ := url.Parse("http://site.test/")
		_, text, err := htmlToText(strings.NewReader(in), base)
		if err != nil {
			return
		}
		if strings.Contains(text, "\n\n\n") {
			t.Fatalf("uncollapsed blank lines in %q", text)
		}
	})
}

func TestWebFetch(t *testing.T) {
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, testPage)
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"a": [1, 2, 3], "b": "<not html>"}`)
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "plain   text\n  stays")
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		w.Write([]byte("<p>caf\xe9</p>"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("x", 10000))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte{0, 1, 2, 3, 0xff})
	})
	mux.HandleFunc("/to-metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("/to-page", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/page", http.StatusFound)
	})
	mux.HandleFunc("/ua", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Header.Get("User-Agent"))
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	defer srv.Close()

	loopback := WebFetch(WebFetchOptions{Policy: &netguard.Policy{AllowPrivate: true}, MaxBytes: 5000, Timeout: 5 * time.Second})
	tests := []struct {
		name    string
		url     string
		contain []string
		lacks   []string
		isErr   bool
	}{
		{"html reduced", srv.URL + "/page", []string{"# Test Page", "# Main Heading", "[relative link](" + srv.URL + "/docs/intro)", "Status: 200 OK", "Content-Type: text/html"}, []string{"NOISE", "<p>"}, false},
		{"json passed through", srv.URL + "/json", []string{`{"a": [1, 2, 3], "b": "<not html>"}`}, nil, false},
		{"text passed through", srv.URL + "/text", []string{"plain   text\n  stays"}, nil, false},
		{"charset decoded", srv.URL + "/latin1", []string{"café"}, nil, false},
		{"size cap", srv.URL + "/big", []string{strings.Repeat("x", 5000) + "\n\n[content truncated: only the first 5000 bytes"}, []string{strings.Repeat("x", 5001)}, false},
		{"http error", srv.URL + "/missing", []string{"404 Not Found", "no such page"}, nil, true},
		{"binary", srv.URL + "/binary", []string{"not text"}, nil, false},
		{"redirect followed", srv.URL + "/to-page", []string{"URL: " + srv.URL + "/page", "# Main Heading"}, nil, false},
		{"redirect to metadata refused", srv.URL + "/to-metadata", []string{"refused", "cloud metadata"}, []string{"Status:"}, true},
		{"user agent", srv.URL + "/ua", []string{"agentd-web-fetch/1"}, nil, false},
		{"scheme refused", "file:///etc/passwd", []string{"refused", "scheme"}, nil, true},
		{"metadata refused", "http://169.254.169.254/", []string{"refused"}, nil, true},
		{"decimal loopback refused", "http://2130706433/", []string{"refused", "non-canonical"}, nil, true},
		{"garbage", "::not a url", []string{"parse url"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, loopback, "", map[string]any{"url": tt.url})
			if res.IsError != tt.isErr {
				t.Errorf("IsError = %v: %.300s", res.IsError, res.Content)
			}
			for _, s := range tt.contain {
				if !strings.Contains(res.Content, s) {
					t.Errorf("content lacks %q:\n%.1000s", s, res.Content)
				}
			}
			for _, s := range tt.lacks {
				if strings.Contains(res.Content, s) {
					t.Errorf("content has %q", s)
				}
			}
		})
	}

	t.Run("structured", func(t *testing.T) {
		res := call(t, loopback, "", map[string]any{"url": srv.URL + "/big"})
		var out fetchOutcome
		if err := json.Unmarshal(res.Structured, &out); err != nil {
			t.Fatal(err)
		}
		if out.Status != 200 || !out.Truncated || out.ContentType != "text/plain" || out.URL != srv.URL+"/big" {
			t.Errorf("structured %+v", out)
		}
	})

	t.Run("loopback refused without AllowPrivate", func(t *testing.T) {
		for _, p := range []*netguard.Policy{nil, {}} {
			strict := WebFetch(WebFetchOptions{Policy: p})
			before := hits.Load()
			res := call(t, strict, "", map[string]any{"url": srv.URL + "/page"})
			if !res.IsError || !strings.Contains(res.Content, "refused") || !strings.Contains(res.Content, "loopback") {
				t.Errorf("result %+v", res)
			}
			if hits.Load() != before {
				t.Error("the server was reached")
			}
		}
	})

	t.Run("credentials not echoed", func(t *testing.T) {
		u, _ := url.Parse(srv.URL + "/missing")
		u.User = url.UserPassword("user", "s3cr3t-pass")
		res := call(t, loopback, "", map[string]any{"url": u.String()})
		if strings.Contains(res.Content, "s3cr3t-pass") {
			t.Errorf("password in result: %s", res.Content)
		}
		// And in an error path.
		u.Host = "127.0.0.1:1"
		res = call(t, loopback, "", map[string]any{"url": u.String()})
		if !res.IsError || strings.Contains(res.Content, "s3cr3t-pass") {
			t.Errorf("result %+v", res)
		}
	})

	t.Run("spec", func(t *testing.T) {
		s := loopback.Spec()
		if !s.Untrusted || !s.ReadOnly || s.Name != "web_fetch" {
			t.Errorf("spec %+v", s)
		}
	})
}
