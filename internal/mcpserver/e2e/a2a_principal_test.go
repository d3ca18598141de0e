package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/oauthrs/oauthrstest"
	"github.com/agentd/agentd/internal/store"
)

// TestA2AJSClientWithCredentials: the official @a2a-js/sdk client reaches
// an agent with an OAuth access token or a principal's key as its bearer
// credential, is refused an agent outside its principal's rights, and the
// run is recorded under the principal.
func TestA2AJSClientWithCredentials(t *testing.T) {
	nodeBin := node(t)
	is := oauthrstest.New(t)
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "hi from A2A"}))
	e := writeConfig(t, fmt.Sprintf(`
[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "reviewer"
provider = "fake"
model = "m"
tools = []
[agents.expose]
a2a = true

[[agents]]
name = "deployer"
provider = "fake"
model = "m"
tools = []
[agents.expose]
a2a = true

[a2a]
enabled = true

[[principals]]
name = "partner"
key_sha256 = "%s"
agents = ["reviewer"]

[auth.oauth]
issuer = %q
allow_private = true
scope_rights = true
`, fake.URL, sha256Hex("partner-key"), is.URL))
	d, base := startDaemon(t, e, true)
	send := func(agentName, token string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, nodeBin, "a2a-bearer-client.mjs", base+"/a2a/agents/"+agentName, token)
		cmd.Dir = repoRoot(t) + "/interop"
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("a2a-bearer-client.mjs: %v\n%s", err, out)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("output %s: %v", out, err)
		}
		return m
	}
	jwt := is.Token(t, oauthrstest.Claims{Subject: "zoe", Audience: []string{base}, Scope: "agentd:agent:deployer"})
	if r := send("deployer", jwt); r["ok"] != true || r["state"] != "TASK_STATE_COMPLETED" || r["text"] != "hi from A2A" {
		t.Fatalf("token for deployer: %v", r)
	}
	if r := send("reviewer", jwt); r["ok"] != false || !strings.Contains(fmt.Sprint(r["error"]), "403") {
		t.Fatalf("token for reviewer (not in its scopes): %v", r)
	}
	if r := send("reviewer", "partner-key"); r["ok"] != true || r["state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("partner's key for reviewer: %v", r)
	}
	if r := send("reviewer", "wrong-key"); r["ok"] != false || !strings.Contains(fmt.Sprint(r["error"]), "401") {
		t.Fatalf("a wrong key: %v", r)
	}
	ctx := context.Background()
	for who, agentName := range map[string]string{"oauth:zoe": "deployer", "partner": "reviewer"} {
		ss, err := d.Store.ListSessions(ctx, store.SessionFilter{Principal: who})
		if err != nil || len(ss) != 1 || ss[0].Agent != agentName || ss[0].Origin != "a2a" {
			t.Errorf("sessions of %s: %+v, %v", who, ss, err)
		}
	}
}
