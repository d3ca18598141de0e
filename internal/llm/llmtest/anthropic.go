package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/llm"
)

// NewAnthropicServer starts a fake Anthropic Messages API serving
// POST {URL}/v1/messages, streamed or not. Like the real API it rejects
// requests without an anthropic-version header or max_tokens. Thinking is
// streamed as a thinking content block (thinking_delta, then
// signature_delta with AnthropicSignature). With extended thinking on, it
// enforces what the real API does: a budget of at least 1024 tokens below
// max_tokens, no temperature other than 1, and signed thinking first in the
// assistant turn that made the tool calls being answered.
//
// AnthropicSignature is the signature the fake puts on thinking blocks;
// thinking sent back with another signature is rejected.
func NewAnthropicServer(tb testing.TB, h Handler) *Server {
	tb.Helper()
	return newServer(tb, VendorAnthropic, "", anthropicAPI{}, h)
}

// AnthropicSignature signs the fake's thinking blocks.
const AnthropicSignature = "llmtest-signature"

type anthropicAPI struct{}

type antRequest struct {
	Model       string          `json:"model"`
	MaxTokens   int             `json:"max_tokens"`
	System      json.RawMessage `json:"system"`
	Messages    []antMessage    `json:"messages"`
	Tools       []antTool       `json:"tools"`
	Temperature *float64        `json:"temperature"`
	Stream      bool            `json:"stream"`
	Thinking    *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
}

type antMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type antTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type antBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Thinking  string          `json:"thinking"`
	Signature *string         `json:"signature"`
	Data      string          `json:"data"`
}

func (anthropicAPI) decode(r *http.Request, body []byte) (*Request, int, error) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		return nil, http.StatusNotFound, fmt.Errorf("llmtest: no route %s %s", r.Method, r.URL.Path)
	}
	if r.Header.Get("anthropic-version") == "" {
		return nil, http.StatusBadRequest, errors.New("anthropic-version: header is required")
	}
	req, err := decodeAnthropicRequest(body)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	req.APIKey = r.Header.Get("X-Api-Key")
	if req.APIKey == "" {
		req.APIKey, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	return req, 0, nil
}

// decodeAnthropicRequest turns a Messages request body into the neutral
// view. A user message carrying tool_result blocks becomes a RoleTool
// message, followed by a user message for any other blocks it has.
func decodeAnthropicRequest(body []byte) (*Request, error) {
	var in antRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("decode messages request: %w", err)
	}
	if in.Model == "" {
		return nil, errors.New("model: field required")
	}
	if in.MaxTokens <= 0 {
		return nil, errors.New("max_tokens: field required")
	}
	if len(in.Messages) == 0 {
		return nil, errors.New("messages: at least one message is required")
	}
	req := &Request{Model: in.Model, MaxTokens: in.MaxTokens, Temperature: in.Temperature, Stream: in.Stream}
	if th := in.Thinking; th != nil && th.Type == "enabled" {
		switch {
		case th.BudgetTokens < 1024:
			return nil, errors.New("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		case in.MaxTokens <= th.BudgetTokens:
			return nil, errors.New("`max_tokens` must be greater than `thinking.budget_tokens`")
		case in.Temperature != nil && *in.Temperature != 1:
			return nil, errors.New("`temperature` may only be set to 1 when thinking is enabled")
		}
		req.ThinkingBudget = th.BudgetTokens
	}
	sys, err := antBlocks(in.System)
	if err != nil {
		return nil, fmt.Errorf("system: %w", err)
	}
	for _, b := range sys {
		if b.Type != "text" {
			return nil, fmt.Errorf("system: unsupported block type %q", b.Type)
		}
		req.System += b.Text
	}
	for _, t := range in.Tools {
		if t.Name == "" || len(t.InputSchema) == 0 {
			return nil, errors.New("tools: name and input_schema are required")
		}
		req.Tools = append(req.Tools, llm.ToolDef{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	names := map[string]string{}
	for i, m := range in.Messages {
		blocks, err := antBlocks(m.Content)
		if err != nil {
			return nil, fmt.Errorf("messages.%d: %w", i, err)
		}
		if len(blocks) == 0 {
			return nil, fmt.Errorf("messages.%d: all messages must have non-empty content", i)
		}
		switch m.Role {
		case "user":
			var results []llm.ToolResult
			user := llm.Message{Role: llm.RoleUser}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					if b.Text == "" {
						return nil, fmt.Errorf("messages.%d: text content blocks must be non-empty", i)
					}
					user.Parts = append(user.Parts, llm.Part{Text: b.Text})
				case "image":
					img, err := antImage(b)
					if err != nil {
						return nil, fmt.Errorf("messages.%d: %w", i, err)
					}
					user.Parts = append(user.Parts, llm.Part{Image: img})
				case "tool_result":
					if b.ToolUseID == "" {
						return nil, fmt.Errorf("messages.%d: tool_result without tool_use_id", i)
					}
					content, err := antBlocks(b.Content)
					if err != nil {
						return nil, fmt.Errorf("messages.%d: tool_result: %w", i, err)
					}
					res := llm.ToolResult{CallID: b.ToolUseID, Name: names[b.ToolUseID], IsError: b.IsError}
					for _, c := range content {
						switch c.Type {
						case "text":
							res.Content += c.Text
						case "image":
							img, err := antImage(c)
							if err != nil {
								return nil, fmt.Errorf("messages.%d: tool_result: %w", i, err)
							}
							res.Images = append(res.Images, *img)
						default:
							return nil, fmt.Errorf("messages.%d: tool_result: unsupported content block type %q", i, c.Type)
						}
					}
					results = append(results, res)
				default:
					return nil, fmt.Errorf("messages.%d: unsupported user block type %q", i, b.Type)
				}
			}
			if len(results) > 0 {
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolResults: results})
			}
			if len(user.Parts) > 0 {
				req.Messages = append(req.Messages, user)
			}
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant}
			if req.ThinkingBudget > 0 && i == len(in.Messages)-2 && hasToolUse(blocks) &&
				blocks[0].Type != "thinking" && blocks[0].Type != "redacted_thinking" {
				return nil, fmt.Errorf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. "+
					"When `thinking` is enabled, a final `assistant` message must start with a thinking block", i, blocks[0].Type)
			}
			for j, b := range blocks {
				switch b.Type {
				case "text":
					msg.Parts = append(msg.Parts, llm.Part{Text: b.Text})
				case "thinking":
					if b.Signature == nil {
						return nil, fmt.Errorf("messages.%d.content.%d.thinking.signature: Field required", i, j)
					}
					if *b.Signature != AnthropicSignature {
						return nil, fmt.Errorf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
					}
					msg.Thinking += b.Thinking
					msg.Thoughts = append(msg.Thoughts, llm.Thought{Text: b.Thinking, Signature: *b.Signature})
				case "redacted_thinking":
					if b.Data == "" {
						return nil, fmt.Errorf("messages.%d.content.%d.redacted_thinking.data: Field required", i, j)
					}
					msg.Thoughts = append(msg.Thoughts, llm.Thought{Redacted: b.Data})
				case "tool_use":
					if b.ID == "" || b.Name == "" {
						return nil, fmt.Errorf("messages.%d: tool_use without id or name", i)
					}
					if in := bytes.TrimSpace(b.Input); len(in) == 0 || in[0] != '{' {
						return nil, fmt.Errorf("messages.%d: tool_use.input: input should be a valid dictionary", i)
					}
					names[b.ID] = b.Name
					msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Input})
				default:
					return nil, fmt.Errorf("messages.%d: unsupported assistant block type %q", i, b.Type)
				}
			}
			req.Messages = append(req.Messages, msg)
		default:
			return nil, fmt.Errorf("messages.%d: unexpected role %q", i, m.Role)
		}
	}
	return req, nil
}

// antImage decodes an image block; only base64 sources are served.
func antImage(b antBlock) (*llm.Image, error) {
	if b.Source == nil || b.Source.Type != "base64" {
		return nil, errors.New("image source must be base64")
	}
	data, err := decodeBase64(b.Source.Data)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	return &llm.Image{MIMEType: b.Source.MediaType, Data: data}, nil
}

func hasToolUse(blocks []antBlock) bool {
	for _, b := range blocks {
		if b.Type == "tool_use" {
			return true
		}
	}
	return false
}

// antBlocks decodes content that is either a string or an array of blocks.
func antBlocks(raw json.RawMessage) ([]antBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("decode content: %w", err)
		}
		if s == "" {
			return nil, nil
		}
		return []antBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []antBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("decode content blocks: %w", err)
	}
	return blocks, nil
}

func (anthropicAPI) writeError(w http.ResponseWriter, status int, msg string) {
	typ := "api_error"
	switch status {
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusForbidden:
		typ = "permission_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	w.Header().Set("request-id", "req_llmtest")
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}, "request_id": "req_llmtest"})
}

var anthropicStops = map[string]string{
	string(llm.StopEndTurn):   "end_turn",
	string(llm.StopToolUse):   "tool_use",
	string(llm.StopMaxTokens): "max_tokens",
	string(llm.StopRefusal):   "refusal",
}

func (anthropicAPI) writeReply(s *stream, req *Request, rep Reply) error {
	id := fmt.Sprintf("msg_llmtest%d", req.Seq)
	calls := rep.calls(newIDs("toolu_llmtest", req.Seq))
	stop := wireStop(anthropicStops, string(rep.stopReason()))
	if !req.Stream {
		var content []any
		if rep.Thinking != "" {
			content = append(content, map[string]any{"type": "thinking", "thinking": rep.Thinking, "signature": AnthropicSignature})
		}
		if rep.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": rep.Text})
		}
		for _, c := range calls {
			// The real API always returns parsed input; a malformed one
			// cannot be expressed unstreamed.
			input := json.RawMessage(c.args)
			if !json.Valid(input) {
				input = json.RawMessage("{}")
			}
			content = append(content, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": input})
		}
		return s.json(map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": rep.Usage.InputTokens, "output_tokens": rep.Usage.OutputTokens},
		})
	}
	ev := func(typ string, fields map[string]any) error {
		fields["type"] = typ
		return s.event(typ, fields)
	}
	if err := ev("message_start", map[string]any{"message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": rep.Usage.InputTokens, "output_tokens": 1},
	}}); err != nil {
		return err
	}
	if err := ev("ping", map[string]any{}); err != nil {
		return err
	}
	index := 0
	block := func(start map[string]any, deltas []map[string]any) error {
		if err := ev("content_block_start", map[string]any{"index": index, "content_block": start}); err != nil {
			return err
		}
		for _, d := range deltas {
			if d["type"] != "signature_delta" {
				if err := s.content(); err != nil {
					return err
				}
			}
			if err := ev("content_block_delta", map[string]any{"index": index, "delta": d}); err != nil {
				return err
			}
		}
		if err := ev("content_block_stop", map[string]any{"index": index}); err != nil {
			return err
		}
		index++
		return nil
	}
	if rep.Thinking != "" {
		var deltas []map[string]any
		for _, p := range split(rep.Thinking, rep.Chunks) {
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": p})
		}
		deltas = append(deltas, map[string]any{"type": "signature_delta", "signature": AnthropicSignature})
		if err := block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, deltas); err != nil {
			return err
		}
	}
	if rep.Text != "" {
		var deltas []map[string]any
		for _, p := range split(rep.Text, rep.Chunks) {
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": p})
		}
		if err := block(map[string]any{"type": "text", "text": ""}, deltas); err != nil {
			return err
		}
	}
	for _, c := range calls {
		deltas := []map[string]any{{"type": "input_json_delta", "partial_json": ""}}
		for _, f := range fragments(c.args) {
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": f})
		}
		if err := block(map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": map[string]any{}}, deltas); err != nil {
			return err
		}
	}
	if rep.Disconnect {
		return nil
	}
	if err := ev("message_delta", map[string]any{
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": rep.Usage.OutputTokens},
	}); err != nil {
		return err
	}
	return ev("message_stop", map[string]any{})
}
