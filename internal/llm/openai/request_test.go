package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm"
)

func TestBodyMoreCases(t *testing.T) {
	img := llm.Image{MIMEType: "image/png", Data: []byte{1, 2, 3}}
	cases := map[string]*llm.Request{
		"assistant calls only": {Model: "m", Messages: []llm.Message{
			{Role: llm.RoleUser, Parts: []llm.Part{{Text: "x"}}},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c1", Name: "t", Arguments: json.RawMessage(`{}`)}}},
			{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{CallID: "c1", Name: "t", Content: "r"}}},
		}},
		"image only":    {Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Image: &img}}}}},
		"max tokens 1":  {Model: "m", MaxTokens: 1, Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Text: "x"}}}}},
		"invalid utf8":  {Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Text: "a\xffb"}}}}},
		"empty tool id": {Model: "m", Messages: []llm.Message{{Role: llm.RoleTool, ToolResults: []llm.ToolResult{{Content: "r"}}}}},
		"empty call id": {Model: "m", Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{}}}}},
	}
	for _, official := range []bool{false, true} {
		p := &Provider{official: official}
		for name, req := range cases {
			sdk, err := p.params(req).MarshalJSON()
			if err != nil {
				t.Fatalf("%s: SDK: %v", name, err)
			}
			ours, err := p.body(req)
			if err != nil {
				t.Fatalf("%s: body: %v", name, err)
			}
			var want, got any
			json.Unmarshal(sdk, &want)
			json.Unmarshal(ours, &got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s (official %v):\nbody %s\nSDK  %s", name, official, ours, sdk)
			}
		}
	}
}

func TestRetryResendsBody(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	var ctypes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		ctypes = append(ctypes, r.Header.Get("Content-Type"))
		n := len(bodies)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After-Ms", "1")
			http.Error(w, `{"error":{"message":"busy"}}`, 500)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
	}))
	defer srv.Close()
	p, err := New(Options{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	temp := 0.0
	req := &llm.Request{Model: "m", System: "s", Temperature: &temp, MaxTokens: 5, Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Text: "hi"}}}},
		Tools: []llm.ToolDef{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	if _, err := p.Generate(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	if len(bodies) != 2 {
		t.Fatalf("%d attempts", len(bodies))
	}
	sdk, _ := p.params(req).MarshalJSON()
	var want map[string]any
	json.Unmarshal(sdk, &want)
	want["stream"] = true
	for i, b := range bodies {
		var got map[string]any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("attempt %d: %v %s", i, err, b)
		}
		if !reflect.DeepEqual(got, want) || ctypes[i] != "application/json" {
			t.Errorf("attempt %d: %s (%s)\nwant %s", i, b, ctypes[i], sdk)
		}
	}
}

// A transport whose response body does not end with the request's
// context (a recording or caching RoundTripper, a test double): a server
// holding the response open after [DONE] holds the call for good.
func TestDrainBodyIgnoringContext(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		go func() {
			for _, ev := range []string{
				`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`,
				`[DONE]`,
			} {
				fmt.Fprintf(pw, "data: %s\n\n", ev)
			}
		}()
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr, Request: r}, nil
	})}
	p, err := New(Options{BaseURL: "http://model.invalid/v1", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := p.Generate(t.Context(), hello, nil); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Generate blocked past [DONE] on a body that ignores the request's context")
	}
}
