//go:build linux

package reliability

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

const faultKey = "fault-injection-key"

// faultConfig is one agent on a fake OpenAI-compatible model with file
// and memory tools, rate limits out of the way.
func faultConfig(modelURL string, extra string) string {
	return fmt.Sprintf(`api_key = %q

[providers.fake]
kind = "openai"
base_url = %q
max_retries = 1

[[agents]]
name = "chat"
provider = "fake"
model = "fault-model"
tools = ["file_*", "memory_*", "a2a_*"]
max_iterations = 8

[limits]
rate_per_sec = 100000
burst = 100000
%s`, faultKey, modelURL, extra)
}

// attempts counts model requests per run (a run is identified by its
// user message, unique per repetition).
type attempts struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *attempts) next(key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == nil {
		a.n = map[string]int{}
	}
	a.n[key]++
	return a.n[key]
}

func (a *attempts) get(key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[key]
}

// messageReply is the JSON reply of POST /api/agents/{name}/messages.
type messageReply struct {
	SessionID  string `json:"session_id"`
	Text       string `json:"text"`
	StopReason string `json:"stop_reason"`
	Iterations int    `json:"iterations"`
}

// TestFaultsModel injects model faults (5xx, 429 with Retry-After,
// malformed tool-call arguments, endless tool loops) under the real HTTP
// API and checks the caller's view, the daemon's health and resources.
func TestFaultsModel(t *testing.T) {
	track(t, areaFaults, false)
	before := baseline()
	var tries attempts
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		// The run's first user message names the scenario, whatever
		// the tool rounds since.
		first := ""
		for _, m := range r.Messages {
			if m.Role == llm.RoleUser {
				first = m.Text()
				break
			}
		}
		kind, _, _ := strings.Cut(first, " ")
		n := tries.next(first)
		last := r.Messages[len(r.Messages)-1]
		switch kind {
		case "flaky500":
			if n == 1 {
				return llmtest.Reply{Status: http.StatusInternalServerError, ErrorMessage: "upstream exploded"}
			}
			return llmtest.Reply{Text: "recovered"}
		case "down500":
			return llmtest.Reply{Status: http.StatusInternalServerError, ErrorMessage: "upstream exploded"}
		case "limited429":
			if n == 1 {
				return llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "1", ErrorMessage: "slow down"}
			}
			return llmtest.Reply{Text: "after the wait"}
		case "malformed":
			if last.Role == llm.RoleTool {
				return llmtest.Reply{Text: "tool said: " + last.ToolResults[0].Content}
			}
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_write", `{"path":"malformed.txt","content":"x"}`)}, MalformedToolArgs: true}
		case "loop":
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_read", `{"path":"same.txt"}`)}}
		case "loopvary":
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_read", fmt.Sprintf(`{"path":"f%d.txt"}`, n))}}
		}
		return llmtest.Reply{Text: "ok"}
	})
	modelURL, modelProxy := proxyURL(t, model.URL)
	p := startDaemon(t, daemonSpec{TOML: faultConfig(modelURL, ""), Key: faultKey})

	send := func(t *testing.T, msg string) (reply, time.Duration) {
		t.Helper()
		start := time.Now()
		r := p.call(t, "POST", "/api/agents/chat/messages", map[string]string{"message": msg})
		return r, time.Since(start)
	}
	healthy := func(t *testing.T) {
		t.Helper()
		if r := p.call(t, "GET", "/api/health", nil); r.Status != http.StatusOK {
			t.Fatalf("daemon unhealthy after the fault: %v", r)
		}
		if r, _ := send(t, fmt.Sprintf("plain %d", time.Now().UnixNano())); r.Status != http.StatusOK {
			t.Fatalf("a normal message fails after the fault: %v", r)
		}
	}
	// Warm up connections and lazily built providers, so the baseline
	// holds what any request leaves behind on purpose (pooled conns).
	for i := range 3 {
		if r, _ := send(t, fmt.Sprintf("plain warm %d", i)); r.Status != http.StatusOK {
			t.Fatalf("warm-up: %v", r)
		}
	}

	cases := []struct {
		name string
		kind string
		reps int
		// check asserts the caller's view of one repetition.
		check func(t *testing.T, msg string, r reply, took time.Duration)
		// figure summarises the last repetition.
		figure func(t *testing.T, msg string, r reply, took time.Duration)
	}{
		{
			name: "provider 500 then success", kind: "flaky500", reps: minReps,
			check: func(t *testing.T, msg string, r reply, _ time.Duration) {
				var m messageReply
				decodeJSON(t, r.Body, &m)
				if r.Status != http.StatusOK || m.Text != "recovered" {
					t.Fatalf("want 200 and the retried answer, got %v", r)
				}
				if n := tries.get(msg); n != 2 {
					t.Errorf("model requests: %d, want 2 (one 500, one retry)", n)
				}
			},
			figure: func(t *testing.T, msg string, r reply, took time.Duration) {
				fig(t, areaFaults, "LLM 500 then success: caller sees", "HTTP %d with the answer after %d model requests (%s)", r.Status, tries.get(msg), ms(took))
			},
		},
		{
			name: "provider 500 every time", kind: "down500", reps: minReps,
			check: func(t *testing.T, msg string, r reply, _ time.Duration) {
				var e apiError
				decodeJSON(t, r.Body, &e)
				if r.Status < 500 || !strings.Contains(e.Error.Message, "500") || !strings.Contains(e.Error.Message, "upstream exploded") || !strings.Contains(e.Error.Message, "fake") {
					t.Fatalf("want a 5xx naming the provider, the status and the upstream's message, got %v", r)
				}
				if n := tries.get(msg); n != 2 {
					t.Errorf("model requests: %d, want 2 (max_retries = 1)", n)
				}
			},
			figure: func(t *testing.T, msg string, r reply, took time.Duration) {
				var e apiError
				decodeJSON(t, r.Body, &e)
				fig(t, areaFaults, "LLM 500 on every attempt: caller sees", "HTTP %d `%s` %q after %d attempts (%s)", r.Status, e.Error.Code, e.Error.Message, tries.get(msg), ms(took))
			},
		},
		{
			name: "provider 429 with Retry-After", kind: "limited429", reps: minReps,
			check: func(t *testing.T, msg string, r reply, took time.Duration) {
				var m messageReply
				decodeJSON(t, r.Body, &m)
				if r.Status != http.StatusOK || m.Text != "after the wait" {
					t.Fatalf("want 200 after the retry, got %v", r)
				}
				if took < 900*time.Millisecond {
					t.Errorf("answered after %s: Retry-After: 1 was not honoured", took)
				}
				if n := tries.get(msg); n != 2 {
					t.Errorf("model requests: %d, want 2", n)
				}
			},
			figure: func(t *testing.T, msg string, r reply, took time.Duration) {
				fig(t, areaFaults, "LLM 429 + Retry-After: 1: caller sees", "HTTP %d with the answer after %s (Retry-After honoured), %d model requests", r.Status, ms(took), tries.get(msg))
			},
		},
		{
			name: "malformed tool-call arguments", kind: "malformed", reps: minReps,
			check: func(t *testing.T, msg string, r reply, _ time.Duration) {
				var m messageReply
				decodeJSON(t, r.Body, &m)
				if r.Status != http.StatusOK || !strings.HasPrefix(m.Text, "tool said: ") {
					t.Fatalf("want 200 with the model's answer to the refusal, got %v", r)
				}
				low := strings.ToLower(m.Text)
				if !strings.Contains(low, "json") && !strings.Contains(low, "malformed") && !strings.Contains(low, "invalid") {
					t.Errorf("the tool result does not explain the malformed arguments: %q", m.Text)
				}
				if _, err := os.Stat(filepath.Join(p.Home, "workspaces", "chat", "malformed.txt")); err == nil {
					t.Error("the tool ran with malformed arguments")
				}
			},
			figure: func(t *testing.T, msg string, r reply, took time.Duration) {
				var m messageReply
				decodeJSON(t, r.Body, &m)
				fig(t, areaFaults, "Malformed tool-call JSON: caller sees", "HTTP %d; the tool did not run; the model was told %q", r.Status, truncate(strings.TrimPrefix(m.Text, "tool said: "), 160))
			},
		},
		{
			name: "endless identical tool loop", kind: "loop", reps: minReps,
			check: func(t *testing.T, msg string, r reply, _ time.Duration) {
				var m messageReply
				decodeJSON(t, r.Body, &m)
				if r.Status != http.StatusOK || m.StopReason != "max_iterations" {
					t.Fatalf("want 200 with stop_reason max_iterations, got %v", r)
				}
				if n := tries.get(msg); n != 8 {
					t.Errorf("model requests: %d, want max_iterations = 8", n)
				}
				if last := lastToolResult(model, msg); !strings.Contains(last, "identical arguments") {
					t.Errorf("the loop guard did not refuse the repeats; the model last saw %q", last)
				}
			},
			figure: func(t *testing.T, msg string, r reply, took time.Duration) {
				fig(t, areaFaults, "Endless identical tool loop: caller sees", "HTTP %d, stop_reason max_iterations after %d model requests (%s); from the 3rd call on the model was told %q", r.Status, tries.get(msg), ms(took), truncate(lastToolResult(model, msg), 120))
			},
		},
		{
			name: "endless varying tool loop", kind: "loopvary", reps: minReps,
			check: func(t *testing.T, msg string, r reply, _ time.Duration) {
				var m messageReply
				decodeJSON(t, r.Body, &m)
				if r.Status != http.StatusOK || m.StopReason != "max_iterations" || m.Iterations != 8 {
					t.Fatalf("want 200 with stop_reason max_iterations after 8 iterations, got %v", r)
				}
			},
			figure: func(t *testing.T, msg string, r reply, took time.Duration) {
				fig(t, areaFaults, "Endless tool loop, new arguments each time: caller sees", "HTTP %d, stop_reason max_iterations after %d model requests (%s)", r.Status, tries.get(msg), ms(took))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := baseline(p.dropConns, modelProxy.DropConns)
			var last reply
			var lastMsg string
			var took time.Duration
			for i := range tc.reps {
				lastMsg = fmt.Sprintf("%s %s %d", tc.kind, t.Name(), i)
				last, took = send(t, lastMsg)
				tc.check(t, lastMsg, last, took)
			}
			tc.figure(t, lastMsg, last, took)
			healthy(t)
			after := settle(base, 3*time.Second, p.dropConns, modelProxy.DropConns)
			checkBaseline(t, tc.name, base, after)
			fig(t, areaFaults, tc.name+": resources after "+fmt.Sprint(tc.reps)+" faults", "%+d goroutines, %+d fds, %+d children vs baseline",
				after.Goroutines-base.Goroutines, after.FDs-base.FDs, after.Children-base.Children)
		})
	}

	t.Run("error event on a stream", func(t *testing.T) {
		r := p.callKey(t, "POST", "/api/agents/chat/messages", map[string]string{"message": "down500 stream"}, p.Key, http.Header{"Accept": {"text/event-stream"}})
		if r.Status != http.StatusOK {
			t.Fatalf("stream: %v", r)
		}
		events := sseEvents(r.Body)
		if len(events) < 2 || events[0].name != "session" || events[len(events)-1].name != "error" {
			t.Fatalf("want session ... error events, got %+v", events)
		}
		var ev struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal([]byte(events[len(events)-1].data), &ev)
		if !strings.Contains(ev.Error, "500") {
			t.Errorf("error event does not explain: %q", ev.Error)
		}
		fig(t, areaFaults, "LLM 500 on a streamed message: caller sees", "SSE `session` then `error` event %q", ev.Error)
	})

	// Back to the pre-daemon baseline, once the daemon and the model are
	// gone (in the parent test: a subtest's goroutine would count).
	p.Close()
	modelProxy.Close()
	model.Close()
	after := settle(before, 5*time.Second)
	checkBaseline(t, "daemon closed", before, after)
	fig(t, areaFaults, "After daemon.Close (model faults)", "%+d goroutines, %+d fds, %+d children vs before the daemon started",
		after.Goroutines-before.Goroutines, after.FDs-before.FDs, after.Children-before.Children)
}

// lastToolResult returns the content of the last tool result the model
// received in the run whose first user message is msg.
func lastToolResult(model *llmtest.Server, msg string) string {
	out := ""
	for _, r := range model.Requests() {
		if len(r.Messages) == 0 || r.Messages[0].Text() != msg {
			continue
		}
		last := r.Messages[len(r.Messages)-1]
		if last.Role == llm.RoleTool && len(last.ToolResults) > 0 {
			out = last.ToolResults[0].Content
		}
	}
	return out
}

// sseEvent is one server-sent event.
type sseEvent struct{ name, data string }

// sseEvents parses a complete SSE body.
func sseEvents(body []byte) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" || cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event:"):
			cur.name = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if cur.data != "" {
				cur.data += "\n"
			}
			cur.data += strings.TrimSpace(strings.TrimPrefix(line, "data:"))
		}
	}
	if cur.name != "" || cur.data != "" {
		out = append(out, cur)
	}
	return out
}
