package llmtest_test

import (
	"context"
	"fmt"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// An agent-loop test scripts the model: first a tool call, then an answer.
// With a vendor fake instead, the same script runs over HTTP:
//
//	srv := llmtest.NewOpenAIServer(t, script)
//	p, _ := openai.New(openai.Options{BaseURL: srv.URL})
func ExampleScript() {
	p := llmtest.NewProvider(nil, llmtest.Script( // in a test: NewProvider(t, ...)
		llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("read_file", `{"path":"a.txt"}`)}},
		llmtest.Reply{Text: "a.txt says hello", Chunks: 2},
	))
	req := &llm.Request{Model: "any", Messages: []llm.Message{llm.TextMessage(llm.RoleUser, "what is in a.txt?")}}

	resp, _ := p.Generate(context.Background(), req, nil)
	call := resp.Message.ToolCalls[0]
	fmt.Println(resp.StopReason, call.Name, string(call.Arguments))

	req.Messages = append(req.Messages, resp.Message, llm.Message{Role: llm.RoleTool,
		ToolResults: []llm.ToolResult{{CallID: call.ID, Name: call.Name, Content: "hello"}}})
	resp, _ = p.Generate(context.Background(), req, func(d llm.Delta) { fmt.Printf("delta %q\n", d.Text) })
	fmt.Println(resp.StopReason, resp.Message.Text())
	fmt.Println("requests:", p.Count(), "last tool result:", p.Last().Messages[2].ToolResults[0].Content)
	// Output:
	// tool_use read_file {"path":"a.txt"}
	// delta "a.txt sa"
	// delta "ys hello"
	// end_turn a.txt says hello
	// requests: 2 last tool result: hello
}
