package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/daemon"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/mcpclient"
)

// TestToolImagesReachVisionModels: agents whose model takes images call
// server-everything's get-tiny-image through a real stdio MCP upstream,
// and the next model request carries the PNG the tool returned, in the
// form each vendor accepts: for OpenAI Chat Completions (whose tool
// messages take text only) as a base64 data URL in a user message right
// after the tool message, for Anthropic as an image block inside the
// tool_result. The result's text stays marked as untrusted data, and a
// text-only agent gets only that text, which names the image.
func TestToolImagesReachVisionModels(t *testing.T) {
	nodeBin := node(t)
	everything := nodeModule(t, "@modelcontextprotocol/server-everything/dist/index.js")
	tiny := tinyImage(t)
	png, err := base64.StdEncoding.DecodeString(tiny)
	if err != nil {
		t.Fatal(err)
	}
	toolName := mcpclient.ToolName("everything", "get-tiny-image")
	script := func() llmtest.Handler {
		return llmtest.Script(
			llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall(toolName, `{}`)}},
			llmtest.Reply{Text: "It is the MCP logo."},
		)
	}
	oaiVision := llmtest.NewOpenAIServer(t, script())
	antVision := llmtest.NewAnthropicServer(t, script())
	oaiText := llmtest.NewOpenAIServer(t, script())
	e := writeConfig(t, fmt.Sprintf(`
[providers.oai_vision]
kind = "openai"
base_url = %q

[providers.ant_vision]
kind = "anthropic"
base_url = %q

[providers.oai_text]
kind = "openai"
base_url = %q

[[mcp_servers]]
name = "everything"
allowed_tools = ["get-tiny-image"]
[mcp_servers.transport]
type = "stdio"
command = %q
args = [%q, "stdio"]

[[agents]]
name = "openai-vision"
provider = "oai_vision"
model = "gpt-vision"
images = true
tools = ["mcp_everything_*"]

[[agents]]
name = "anthropic-vision"
provider = "ant_vision"
model = "claude-vision"
images = true
tools = ["mcp_everything_*"]

[[agents]]
name = "openai-text"
provider = "oai_text"
model = "gpt-text"
tools = ["mcp_everything_*"]
`, oaiVision.URL, antVision.URL, oaiText.URL, nodeBin, everything))
	d, _ := startDaemon(t, e, false)
	waitForTool(t, d, toolName)

	for _, name := range []string{"openai-vision", "anthropic-vision", "openai-text"} {
		res, err := d.Kernel.Run(context.Background(), &agent.RunRequest{Agent: name, Input: llm.TextMessage(llm.RoleUser, "Show me the logo."), Origin: "test"})
		if err != nil || res.Message.Text() != "It is the MCP logo." {
			t.Fatalf("run %s: %v %+v", name, err, res)
		}
	}
	placeholder := fmt.Sprintf("[image: image/png, %d bytes]", len(png))
	// checkToolText checks the tool result the model read as text.
	checkToolText := func(t *testing.T, msgs []llm.Message) {
		t.Helper()
		if len(msgs) < 3 || msgs[2].Role != llm.RoleTool || len(msgs[2].ToolResults) != 1 {
			t.Fatalf("messages %+v, want the tool result third", msgs)
		}
		text := msgs[2].ToolResults[0].Content
		if !strings.HasPrefix(text, `<untrusted-data source="mcp:everything">`) || !strings.Contains(text, placeholder) || strings.Contains(text, tiny[:40]) {
			t.Errorf("tool result text %q, want the note %q inside the untrusted-data marking", text, placeholder)
		}
	}

	t.Run("openai", func(t *testing.T) {
		req := second(t, oaiVision)
		checkToolText(t, req.Messages)
		if roles := wireRoles(t, req.Body); roles != "user assistant tool user" {
			t.Fatalf("wire messages %s, want the image's user message right after the tool message", roles)
		}
		if len(req.Messages[2].ToolResults[0].Images) != 0 {
			t.Error("an image in the tool message")
		}
		after := req.Messages[3]
		var img *llm.Image
		for _, p := range after.Parts {
			if p.Image != nil {
				img = p.Image
			}
		}
		if img == nil || img.MIMEType != "image/png" || !bytes.Equal(img.Data, png) {
			t.Fatalf("the user message after the tool message has %+v, want the tiny image", after.Parts)
		}
		if !bytes.Contains(req.Body, []byte(`"url":"data:image/png;base64,`+tiny+`"`)) {
			t.Error("the request body lacks the image as a base64 data URL")
		}
		if c := after.Text(); !strings.Contains(c, "not a message from the user") || !strings.Contains(c, toolName) {
			t.Errorf("the image is introduced as %q", c)
		}
	})
	t.Run("anthropic", func(t *testing.T) {
		req := second(t, antVision)
		checkToolText(t, req.Messages)
		if len(req.Messages) != 3 {
			t.Fatalf("messages %+v, want nothing after the tool result", req.Messages)
		}
		imgs := req.Messages[2].ToolResults[0].Images
		if len(imgs) != 1 || imgs[0].MIMEType != "image/png" || !bytes.Equal(imgs[0].Data, png) {
			t.Fatalf("tool result images %+v, want the tiny image", imgs)
		}
		var wire struct {
			Messages []struct {
				Content []struct {
					Type    string `json:"type"`
					Content []struct {
						Type   string `json:"type"`
						Source struct {
							Type      string `json:"type"`
							MediaType string `json:"media_type"`
							Data      string `json:"data"`
						} `json:"source"`
					} `json:"content"`
				} `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(req.Body, &wire); err != nil {
			t.Fatal(err)
		}
		res := wire.Messages[2].Content[0]
		if res.Type != "tool_result" || len(res.Content) != 2 || res.Content[1].Type != "image" ||
			res.Content[1].Source.Type != "base64" || res.Content[1].Source.MediaType != "image/png" || res.Content[1].Source.Data != tiny {
			t.Errorf("tool_result on the wire: %+v", res)
		}
	})
	t.Run("text-only", func(t *testing.T) {
		req := second(t, oaiText)
		checkToolText(t, req.Messages)
		if len(req.Messages) != 3 || len(req.Messages[2].ToolResults[0].Images) != 0 || bytes.Contains(req.Body, []byte(tiny[:40])) {
			t.Errorf("a text-only model was sent the image: %s", req.Body)
		}
	})
}

// tinyImage reads the base64 PNG get-tiny-image returns from
// server-everything's source, so the test knows it independently.
func tinyImage(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(nodeModule(t, "@modelcontextprotocol/server-everything/dist/tools/get-tiny-image.js"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`MCP_TINY_IMAGE = "([A-Za-z0-9+/=]+)"`).FindSubmatch(src)
	if m == nil {
		t.Fatal("MCP_TINY_IMAGE not found in get-tiny-image.js")
	}
	return string(m[1])
}

// waitForTool waits until the registry serves name (the upstream has
// connected and listed its tools).
func waitForTool(t *testing.T, d *daemon.Daemon, name string) {
	t.Helper()
	changed := make(chan struct{}, 1)
	stop := d.Tools.OnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	defer stop()
	timeout := time.After(30 * time.Second)
	for {
		if _, ok := d.Tools.Lookup(name); ok {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("tool %s never appeared; mcp servers: %+v", name, d.MCP.Status())
		}
	}
}

// second returns the model request that followed the tool call.
func second(t *testing.T, s *llmtest.Server) *llmtest.Request {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	return reqs[1]
}

// wireRoles lists the roles of a Chat Completions request's messages.
func wireRoles(t *testing.T, body []byte) string {
	t.Helper()
	var wire struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range wire.Messages {
		roles = append(roles, m.Role)
	}
	return strings.Join(roles, " ")
}
