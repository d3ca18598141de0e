package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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

// TestTypeScriptClientOAuth: the official TypeScript MCP SDK client, with
// its own OAuth support, completes the MCP authorization flow against a
// daemon that accepts access tokens from a (real, in-test) authorization
// server: it is refused with a 401 naming the protected resource
// metadata, discovers the server, registers, gets a code, exchanges it
// with PKCE for a JWT whose audience is the daemon, and then lists and
// calls the agent tool as the principal the token names.
func TestTypeScriptClientOAuth(t *testing.T) {
	nodeBin := node(t)
	is := oauthrstest.New(t)
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "Reviewed with a token."}))
	e := writeConfig(t, agentConfig(fake.URL)+fmt.Sprintf(`
[[principals]]
name = "ci-bot"
agents = ["helper-bot"]

[auth.oauth]
issuer = %q
allow_private = true
`, is.URL))
	d, base := startDaemon(t, e, true)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nodeBin, "mcp-oauth-client.mjs", base+"/mcp", "agentd_agent_helper_bot")
	cmd.Dir = repoRoot(t) + "/interop"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("mcp-oauth-client.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			steps[fmt.Sprint(m["step"])] = m
		}
	}
	if u := steps["unauthorized"]; u == nil || u["registered"] != true || u["authorize"] != is.URL+"/authorize" || u["resource"] != base {
		t.Fatalf("authorization step: %v\n%s", u, out)
	}
	if tk := steps["token"]; tk == nil || tk["has"] != true {
		t.Fatalf("token step: %v\n%s", tk, out)
	}
	if l := steps["list"]; l == nil || !strings.Contains(fmt.Sprint(l["tools"]), "agentd_agent_helper_bot") {
		t.Fatalf("list step: %v\n%s", l, out)
	}
	if c := steps["call"]; c == nil || c["isError"] != false || c["text"] != "Reviewed with a token." {
		t.Fatalf("call step: %v\n%s", c, out)
	}
	// The run is recorded under the token's principal.
	ss, err := d.Store.ListSessions(context.Background(), storeFilterPrincipal("ci-bot"))
	if err != nil || len(ss) != 1 || ss[0].Origin != "mcp" {
		t.Fatalf("sessions of ci-bot: %+v, %v", ss, err)
	}
}

func storeFilterPrincipal(name string) store.SessionFilter {
	return store.SessionFilter{Principal: name}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
