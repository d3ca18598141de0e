package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/llm/llmtest"
)

// TestRawModernRequestHeaders checks what docs/mcp-clients.md says of raw
// 2026-07-28 requests over HTTP: they carry MCP-Protocol-Version, and
// Mcp-Method (and for tools/call, resources/read and prompts/get Mcp-Name)
// matching the body; without them the answer is 400 naming the header.
func TestRawModernRequestHeaders(t *testing.T) {
	fake := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "Hi from the raw call."}))
	e := writeConfig(t, agentConfig(fake.URL))
	_, base := startDaemon(t, e, false)
	post := func(body string, headers map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// The docs' examples, as written there.
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"curl","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agentd_agent_helper_bot","arguments":{"message":"hello"},` + meta + `}}`
	if code, body := post(list, map[string]string{"Mcp-Method": "tools/list"}); code != 200 || !strings.Contains(body, "agentd_agent_helper_bot") {
		t.Errorf("tools/list with its headers: %d %s", code, body)
	}
	if code, body := post(call, map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "agentd_agent_helper_bot"}); code != 200 || !strings.Contains(body, "Hi from the raw call.") {
		t.Errorf("tools/call with its headers: %d %s", code, body)
	}
	if code, body := post(list, nil); code != 400 || !strings.Contains(body, "missing required Mcp-Method header") || !strings.Contains(body, "-32020") {
		t.Errorf("tools/list without Mcp-Method: %d %s", code, body)
	}
	if code, body := post(call, map[string]string{"Mcp-Method": "tools/call"}); code != 400 || !strings.Contains(body, `missing required Mcp-Name header for method \"tools/call\"`) {
		t.Errorf("tools/call without Mcp-Name: %d %s", code, body)
	}
}
