package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// pushConfig is a config with one agent exposed over A2A; push adds keys
// to [a2a].
func pushConfig(modelURL, push string) string {
	return fmt.Sprintf(`
[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "worker"
provider = "fake"
model = "m"
tools = []
[agents.expose]
a2a = true

[a2a]
enabled = true
%s
`, modelURL, push)
}

// hook is one POST the webhook received.
type hook struct {
	token string
	body  string
}

// TestA2AJSPushToLoopbackWebhook: with [a2a] push_allow_private = true the
// @a2a-js/sdk client registers a webhook on 127.0.0.1 (a developer's own
// receiver) and the task's completion is pushed to it; without the key
// the registration is refused with an invalid-params error that names
// the key to set.
func TestA2AJSPushToLoopbackWebhook(t *testing.T) {
	nodeBin := node(t)
	for _, tc := range []struct {
		name, push string
		allowed    bool
	}{
		{"push_allow_private on", "push_allow_private = true", true},
		{"push_allow_private off", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The run waits for the webhook to be registered, so no event
			// can come before it.
			release := make(chan struct{})
			fake := llmtest.NewOpenAIServer(t, func(*llmtest.Request) llmtest.Reply {
				<-release
				return llmtest.Reply{Text: "work done"}
			})
			released := false
			releaseRun := func() {
				if !released {
					released = true
					close(release)
				}
			}
			t.Cleanup(releaseRun)
			hooks := make(chan hook, 16)
			receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				select {
				case hooks <- hook{token: r.Header.Get("X-A2A-Notification-Token"), body: string(body)}:
				default: // the test has what it needs
				}
			}))
			t.Cleanup(receiver.Close)
			_, base := startDaemon(t, writeConfig(t, pushConfig(fake.URL, tc.push)), false)

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, nodeBin, "a2a-push-client.mjs", base+"/a2a/agents/worker", receiver.URL+"/hook", "hook-token")
			cmd.Dir = repoRoot(t) + "/interop"
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("a2a-push-client.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
			}
			steps := map[string]map[string]any{}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				var m map[string]any
				if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
					t.Fatalf("bad line %q: %v", sc.Text(), err)
				}
				steps[fmt.Sprint(m["step"])] = m
			}
			taskID, _ := steps["sent"]["taskId"].(string)
			if taskID == "" || steps["sent"]["state"] != "TASK_STATE_WORKING" {
				t.Fatalf("send: %v", steps["sent"])
			}
			push := steps["push"]
			if !tc.allowed {
				msg := fmt.Sprint(push["error"])
				if push["ok"] != false || push["code"] != float64(-32602) || !strings.Contains(msg, "set push_allow_private = true in [a2a]") {
					t.Fatalf("loopback webhook without the key: %v; want an invalid-params error naming [a2a] push_allow_private", push)
				}
				return
			}
			if push["ok"] != true || push["taskId"] != taskID || push["url"] != receiver.URL+"/hook" {
				t.Fatalf("loopback webhook with the key: %v", push)
			}
			releaseRun()
			deadline := time.After(30 * time.Second)
			for {
				select {
				case h := <-hooks:
					if h.token != "hook-token" || !strings.Contains(h.body, taskID) {
						t.Fatalf("webhook got token %q, body %s", h.token, h.body)
					}
					if strings.Contains(h.body, `"TASK_STATE_COMPLETED"`) {
						if !strings.Contains(h.body, "work done") {
							t.Errorf("completion without the answer: %s", h.body)
						}
						return
					}
				case <-deadline:
					t.Fatal("the webhook never received the task's completion")
				}
			}
		})
	}
}
