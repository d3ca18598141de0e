package a2aedge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/tool"
)

// TestInteropJSServerThroughProxy: with HTTP_PROXY set, agentd reaches an
// external agent (@a2a-js/sdk) by a public name through the proxy, card
// and messages alike, while the SSRF guard still judges the destination
// (issue 30, item 9).
func TestInteropJSServerThroughProxy(t *testing.T) {
	node, dir := nodePeer(t)
	base := startJSServer(t, node, dir, "v1", "", "A2A_PUBLIC_HOST=jsagent.example")
	u, _ := url.Parse(base) // the card's host: jsagent.example:port
	target := "127.0.0.1:" + u.Port()

	var mu sync.Mutex
	var seen []string
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.Out.URL.Scheme, pr.Out.URL.Host = "http", target
		pr.Out.Host = pr.In.URL.Host
	}, FlushInterval: -1}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Host)
		mu.Unlock()
		if r.URL.Host != u.Host {
			http.Error(w, "unknown host", http.StatusBadGateway)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	px, err := netguard.ProxyFromEnv(func(k string) (string, bool) {
		if k == "HTTP_PROXY" {
			return proxy.URL, true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	guard := func(allow bool) *netguard.Policy {
		return &netguard.Policy{AllowPrivate: allow, Proxy: px, LookupIP: func(_ context.Context, host string) ([]netip.Addr, error) {
			if host == "jsagent.example" {
				return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
			}
			return nil, errors.New("no such host")
		}}
	}
	f := newFixture(t, interopScript, fixtureOptions{guard: guard, external: []ExternalAgent{{Name: "js", URL: base}}})
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, ok := f.reg.Lookup("a2a_js"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("js agent never discovered through the proxy: %+v", f.client.Agents())
		}
		time.Sleep(10 * time.Millisecond)
	}
	tl, _ := f.reg.Lookup("a2a_js")
	res, err := tl.Call(context.Background(), &tool.Call{Args: json.RawMessage(`{"message":"via the proxy"}`)})
	if err != nil || res.IsError || !strings.Contains(res.Content, "js agent got: via the proxy") {
		t.Fatalf("call through the proxy: %+v, %v", res, err)
	}
	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if len(got) < 2 {
		t.Fatalf("the proxy saw %q, want the card and the message", got)
	}
	for _, h := range got {
		if h != u.Host {
			t.Errorf("the proxy was asked for %s", h)
		}
	}

	// A metadata address is refused before the proxy is asked.
	send, _ := f.reg.Lookup("a2a_send")
	res, err = send.Call(context.Background(), &tool.Call{Args: json.RawMessage(`{"agent":"http://169.254.169.254/","message":"x"}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Content, "cloud metadata") {
		t.Errorf("a2a_send to a metadata address: %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(got) {
		t.Errorf("the proxy was asked for %q", seen[len(got):])
	}
}
