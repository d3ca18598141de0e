package daemon

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestModelClientTimeout checks that a provider's client bounds the whole
// request, its answer's body included, by the provider's timeout, behind
// a transport wrapper like the telemetry one, as http.Client.Timeout did.
func TestModelClientTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/headers" {
			<-release
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: {}\n\n")
		w.(http.Flusher).Flush()
		<-release // the body never ends
	}))
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	wrapped := false
	hc := modelClient(200*time.Millisecond, func(rt http.RoundTripper) http.RoundTripper {
		wrapped = true
		return roundTripper(rt.RoundTrip)
	})
	if !wrapped {
		t.Fatal("the wrapper was not applied")
	}
	// Each call runs aside, so that a client without the bound fails the
	// test instead of hanging it; release lets such a call end.
	call := func(path string) (time.Duration, error) {
		start := time.Now()
		res, err := hc.Get(srv.URL + path)
		if err == nil {
			_, err = io.ReadAll(res.Body)
			res.Body.Close()
		}
		return time.Since(start), err
	}
	for _, path := range []string{"/body", "/headers"} {
		type result struct {
			d   time.Duration
			err error
		}
		done := make(chan result, 1)
		go func() {
			d, err := call(path)
			done <- result{d, err}
		}()
		select {
		case r := <-done:
			if r.err == nil || r.d > 5*time.Second {
				t.Errorf("%s: err %v after %v, want a timeout after about 200ms", path, r.err, r.d)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s: no timeout after 5s, want one after about 200ms", path)
			close(release)
			<-done
			return
		}
	}
	// A request that ends in time keeps working after its body is closed.
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer ok.Close()
	for range 3 {
		res, err := hc.Get(ok.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || string(b) != "ok" {
			t.Fatalf("body %q, err %v", b, err)
		}
	}
}
