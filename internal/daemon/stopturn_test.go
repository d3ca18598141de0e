package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestStoppedStreamFreesTheSession is a person stopping an answer while
// the model is still thinking (nothing streamed yet) and sending the next
// message at once: the daemon notices the stream's client went away
// although it has nothing to write to it, stops the turn, and the next
// turn of the session runs instead of being refused as busy.
func TestStoppedStreamFreesTheSession(t *testing.T) {
	thinking := make(chan struct{}, 1)
	release := make(chan struct{})
	h := newHarnessModel(t, "", nil, nil, func(req *llmtest.Request) llmtest.Reply {
		if req.Messages[len(req.Messages)-1].Text() == "think long" {
			thinking <- struct{}{}
			<-release // until the test ends: only a stop ends this turn
		}
		return llmtest.Reply{Text: "done"}
	})
	// Before the fake model closes (cleanups run last first).
	t.Cleanup(func() { close(release) })

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	req, err := http.NewRequestWithContext(ctx, "POST", h.url+"/api/agents/worker/messages", strings.NewReader(`{"message":"think long","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+h.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var session string
	lines := bufio.NewScanner(resp.Body)
	for session == "" && lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok {
			continue
		}
		var ev agent.Event
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %s: %v", data, err)
		}
		session = ev.SessionID
	}
	if session == "" {
		t.Fatalf("the stream ended without its session: %v", lines.Err())
	}
	<-thinking
	stop() // the client goes away: Ctrl-C in agentd chat

	resp2, body := h.do("POST", "/api/agents/worker/messages", "", map[string]any{"message": "again", "session_id": session}, nil)
	if resp2.StatusCode != http.StatusOK {
		t.Fatalf("the turn after the stopped one: %d %s", resp2.StatusCode, body)
	}
	var got struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(body, &got); err != nil || got.Text != "done" {
		t.Fatalf("the turn after the stopped one answered %s (%v)", body, err)
	}
}
