package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
	"github.com/agentd/agentd/internal/telemetry/otlptest"
)

// quietEditor is an ACP client that asks for nothing: it takes the
// session updates and offers no file system or terminal.
type quietEditor struct{ acp.Client }

func (quietEditor) SessionUpdate(context.Context, acp.SessionNotification) error { return nil }

// TestACPTraceContext runs `agentd acp` in-process, driven by the Go ACP
// SDK's client: a session/new and a session/prompt whose _meta carry
// traceparents of two traces (an editor that traces each request). With
// tracing on, the OTLP receiver gets session/new as a child of the
// editor's span, and session/prompt → invoke_agent → chat in the prompt's
// trace; the model API sees the chat span's context. With tracing off,
// the editor's context still reaches the model API unchanged.
func TestACPTraceContext(t *testing.T) {
	const (
		newTrace    = "1bf92f3577b34da6a3ce929d0e0e4731"
		newParent   = "10f067aa0ba902b1"
		promptTrace = "2bf92f3577b34da6a3ce929d0e0e4732"
		promptSpan  = "20f067aa0ba902b2"
	)
	for _, tracing := range []bool{true, false} {
		t.Run(fmt.Sprintf("tracing=%v", tracing), func(t *testing.T) {
			rcv := otlptest.New(t)
			model := llmtest.NewOpenAIServer(t, func(*llmtest.Request) llmtest.Reply {
				return llmtest.Reply{Text: "hello from the agent", Usage: llm.Usage{InputTokens: 10, OutputTokens: 4}}
			})
			home := t.TempDir()
			t.Setenv("AGENTD_HOME", home)
			t.Setenv("FAKE_LLM_KEY", "sk-test")
			telemetry := ""
			if tracing {
				telemetry = fmt.Sprintf("[telemetry]\nendpoint = %q\nservice_name = \"agentd-acp\"\n", rcv.URL)
			}
			cfg := fmt.Sprintf(`listen = "127.0.0.1:0"

[providers.fake]
kind = "openai"
base_url = %q
api_key_env = "FAKE_LLM_KEY"

[[agents]]
name = "coder"
provider = "fake"
model = "m"

%s`, model.URL, telemetry)
			file := filepath.Join(home, "config.toml")
			if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}

			toAgentR, toAgentW := io.Pipe()
			toEditorR, toEditorW := io.Pipe()
			logs := &syncBuffer{}
			done := make(chan int, 1)
			go func() {
				code := Main(context.Background(), []string{"--config", file, "acp"}, toAgentR, toEditorW, logs)
				toEditorW.Close()
				done <- code
			}()
			client := acp.NewClientSideConnection(quietEditor{}, toAgentW, toEditorR)
			client.SetLogger(slog.New(slog.DiscardHandler))

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if _, err := client.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
				t.Fatalf("initialize: %v\n%s", err, logs)
			}
			sess, err := client.NewSession(ctx, acp.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acp.McpServer{},
				Meta: map[string]any{"traceparent": "00-" + newTrace + "-" + newParent + "-01"}})
			if err != nil {
				t.Fatalf("session/new: %v", err)
			}
			resp, err := client.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("hi")},
				Meta: map[string]any{"traceparent": "00-" + promptTrace + "-" + promptSpan + "-01", "tracestate": "editor=zed"}})
			if err != nil || resp.StopReason != acp.StopReasonEndTurn {
				t.Fatalf("session/prompt: %v %v", resp.StopReason, err)
			}
			// The editor goes away: agentd acp returns, having flushed
			// its spans on the way out.
			toAgentW.Close()
			select {
			case code := <-done:
				if code != 0 {
					t.Fatalf("agentd acp exited %d\n%s", code, logs)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("agentd acp did not return after the editor left\n%s", logs)
			}

			reqs := model.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d model requests, want 1", len(reqs))
			}
			got := reqs[0].Header.Get("Traceparent")
			if !tracing {
				// Nothing recorded, the editor's context passed on as is.
				if want := "00-" + promptTrace + "-" + promptSpan + "-01"; got != want {
					t.Errorf("model request traceparent %q, want the editor's %q", got, want)
				}
				if reqs[0].Header.Get("Tracestate") != "editor=zed" {
					t.Errorf("model request tracestate %q, want the editor's", reqs[0].Header.Get("Tracestate"))
				}
				if n := len(rcv.Spans()); n != 0 {
					t.Errorf("%d spans exported with tracing off", n)
				}
				return
			}

			spans := rcv.Spans()
			t.Logf("trace %s:\n%s", promptTrace, otlptest.Tree(spans, promptTrace))
			find := func(trace, name string) otlptest.Span {
				t.Helper()
				var out []otlptest.Span
				for _, s := range spans {
					if s.TraceID == trace && s.Name == name {
						out = append(out, s)
					}
				}
				if len(out) != 1 {
					for _, s := range spans {
						t.Logf("span %s %s parent %s %q %v", s.TraceID, s.SpanID, s.ParentID, s.Name, s.Attrs)
					}
					t.Fatalf("%d spans %q in trace %s, want 1", len(out), name, trace)
				}
				return out[0]
			}
			newSpan := find(newTrace, "session/new")
			prompt := find(promptTrace, "session/prompt")
			run := find(promptTrace, "invoke_agent coder")
			chat := find(promptTrace, "chat m")
			for _, c := range []struct{ what, parent, want string }{
				{"session/new ← editor", newSpan.ParentID, newParent},
				{"session/prompt ← editor", prompt.ParentID, promptSpan},
				{"invoke_agent ← session/prompt", run.ParentID, prompt.SpanID},
				{"chat ← invoke_agent", chat.ParentID, run.SpanID},
			} {
				if c.parent != c.want {
					t.Errorf("%s: parent %s, want %s", c.what, c.parent, c.want)
				}
			}
			if prompt.Kind != tracepb.Span_SPAN_KIND_SERVER || prompt.Attrs["acp.method.name"] != "session/prompt" ||
				prompt.Attrs["acp.session.id"] != string(sess.SessionId) || prompt.Attrs["acp.stop_reason"] != "end_turn" ||
				prompt.Attrs["gen_ai.agent.name"] != "coder" {
				t.Errorf("session/prompt span: %v %v", prompt.Kind, prompt.Attrs)
			}
			if newSpan.Attrs["acp.session.id"] != string(sess.SessionId) {
				t.Errorf("session/new span: %v", newSpan.Attrs)
			}
			if want := "00-" + promptTrace + "-" + chat.SpanID + "-01"; got != want {
				t.Errorf("model request traceparent %q, want the chat span's %q", got, want)
			}
			if rcv.Resource()["service.name"] != "agentd-acp" {
				t.Errorf("resource: %v", rcv.Resource())
			}
			if strings.Contains(logs.String(), "sk-test") {
				t.Error("the provider key is in the log")
			}
		})
	}
}
