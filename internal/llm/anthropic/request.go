package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/agentd/agentd/internal/llm"
)

// params converts a neutral request into Messages parameters.
func params(req *llm.Request) sdk.MessageNewParams {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: int64(maxTokens),
		Messages:  messages(req.Messages),
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	if budget := llm.ReasoningBudget(req.Reasoning); budget > 0 {
		// The API wants max_tokens above the thinking budget (the budget
		// is part of the output) and refuses a temperature with thinking
		// on, so the answer keeps its own room and the temperature goes.
		params.Thinking = sdk.ThinkingConfigParamOfEnabled(int64(budget))
		if maxTokens <= budget {
			params.MaxTokens = int64(budget + maxTokens)
		}
	} else if req.Temperature != nil {
		params.Temperature = param.NewOpt(*req.Temperature)
	}
	for _, t := range req.Tools {
		params.Tools = append(params.Tools, tool(t))
	}
	return params
}

// tool passes the tool's JSON Schema through unchanged: the definition is
// sent as raw JSON rather than rebuilt from SDK types.
func tool(t llm.ToolDef) sdk.ToolUnionParam {
	schema := t.InputSchema
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	def := struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}{t.Name, t.Description, schema}
	raw, err := json.Marshal(def)
	if err != nil {
		// Invalid schema JSON: send an empty one and let the model cope
		// rather than fail the whole call.
		def.InputSchema = json.RawMessage(`{"type":"object"}`)
		raw, _ = json.Marshal(def)
	}
	return sdk.ToolUnionParam{OfTool: ptr(param.Override[sdk.ToolParam](json.RawMessage(raw)))}
}

func ptr[T any](v T) *T { return &v }

func imageBlock(img llm.Image) sdk.ContentBlockParamUnion {
	return sdk.NewImageBlockBase64(img.MIMEType, base64.StdEncoding.EncodeToString(img.Data))
}

// messages converts the history. Tool results become tool_result blocks of
// a user message, their images inside them; consecutive messages that map to the same role are
// merged, since the API wants user and assistant turns to alternate.
// Empty turns (an assistant message with only unsigned thinking) are
// dropped: the API rejects empty content.
func messages(msgs []llm.Message) []sdk.MessageParam {
	var out []sdk.MessageParam
	add := func(role sdk.MessageParamRole, blocks []sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			return
		}
		out = append(out, sdk.MessageParam{Role: role, Content: blocks})
	}
	for _, m := range msgs {
		var blocks []sdk.ContentBlockParamUnion
		switch m.Role {
		case llm.RoleUser:
			for _, part := range m.Parts {
				if part.Text != "" {
					blocks = append(blocks, sdk.NewTextBlock(part.Text))
				}
				if img := part.Image; img != nil {
					blocks = append(blocks, imageBlock(*img))
				}
			}
			add(sdk.MessageParamRoleUser, blocks)
		case llm.RoleAssistant:
			// Signed thinking goes first and verbatim: with extended
			// thinking on, the API rejects a tool-calling turn without it.
			for _, th := range m.Thoughts {
				switch {
				case th.Redacted != "":
					blocks = append(blocks, sdk.NewRedactedThinkingBlock(th.Redacted))
				case th.Signature != "":
					blocks = append(blocks, sdk.NewThinkingBlock(th.Signature, th.Text))
				}
			}
			if text := m.Text(); text != "" {
				blocks = append(blocks, sdk.NewTextBlock(text))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, llm.ObjectArguments(c.Arguments), c.Name))
			}
			add(sdk.MessageParamRoleAssistant, blocks)
		case llm.RoleTool:
			for _, r := range m.ToolResults {
				res := sdk.ToolResultBlockParam{ToolUseID: r.CallID}
				if r.IsError {
					res.IsError = param.NewOpt(true)
				}
				// An empty text block is rejected; an absent content is not.
				if r.Content != "" {
					res.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: r.Content}}}
				}
				// Images go inside the result, after its text (which
				// describes them and marks the result as data).
				for _, img := range r.Images {
					res.Content = append(res.Content, sdk.ToolResultBlockParamContentUnion{OfImage: imageBlock(img).OfImage})
				}
				blocks = append(blocks, sdk.ContentBlockParamUnion{OfToolResult: &res})
			}
			add(sdk.MessageParamRoleUser, blocks)
		}
	}
	return out
}
