package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentd/agentd/internal/tool"
)

// TestOutboundProxyFromEnvironment: the daemon reads HTTP_PROXY from its
// environment and web_fetch goes through it to a public destination,
// while a private one is refused without the proxy being asked (issue 30,
// item 9). The proxy answers itself: nothing leaves the machine.
func TestOutboundProxyFromEnvironment(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.String())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("answered by the proxy"))
	}))
	defer proxy.Close()
	d, _ := testDaemon(t, "", map[string]string{"HTTP_PROXY": proxy.URL})
	wf, ok := d.Tools.Lookup("web_fetch")
	if !ok {
		t.Fatal("no web_fetch")
	}
	fetch := func(url string) tool.Result {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"url": url})
		res, err := wf.Call(context.Background(), &tool.Call{Args: args})
		if err != nil {
			t.Fatalf("web_fetch %s: %v", url, err)
		}
		return res
	}
	if res := fetch("http://93.184.215.14/page"); res.IsError || !strings.Contains(res.Content, "answered by the proxy") {
		t.Fatalf("web_fetch through the proxy: %+v", res)
	}
	if res := fetch("http://10.0.0.7/admin"); !res.IsError || !strings.Contains(res.Content, "private address") {
		t.Errorf("web_fetch of a private address: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "http://93.184.215.14/page" {
		t.Errorf("the proxy saw %q, want only the public fetch", seen)
	}
}
