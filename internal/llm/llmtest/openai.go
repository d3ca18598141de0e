package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/llm"
)

// NewOpenAIServer starts a fake OpenAI Chat Completions API. It serves
// POST {URL}/chat/completions, streamed (with stream_options.include_usage
// honoured) or not. Reasoning is streamed as delta.reasoning_content, the
// way OpenAI-compatible servers (vLLM, llama.cpp, DeepSeek) do.
func NewOpenAIServer(tb testing.TB, h Handler) *Server {
	tb.Helper()
	return newServer(tb, VendorOpenAI, "/v1", openaiAPI{}, h)
}

type openaiAPI struct{}

type oaiRequest struct {
	Model               string       `json:"model"`
	Messages            []oaiMessage `json:"messages"`
	Tools               []oaiTool    `json:"tools"`
	MaxTokens           *int         `json:"max_tokens"`
	MaxCompletionTokens *int         `json:"max_completion_tokens"`
	Temperature         *float64     `json:"temperature"`
	Stream              bool         `json:"stream"`
	ReasoningEffort     string       `json:"reasoning_effort"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type oaiTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaiMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []oaiToolCall   `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type oaiToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaiPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

func (openaiAPI) decode(r *http.Request, body []byte) (*Request, int, error) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		return nil, http.StatusNotFound, fmt.Errorf("llmtest: no route %s %s", r.Method, r.URL.Path)
	}
	req, err := decodeOpenAIRequest(body)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	req.APIKey, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return req, 0, nil
}

// decodeOpenAIRequest turns a Chat Completions request body into the
// neutral view.
func decodeOpenAIRequest(body []byte) (*Request, error) {
	var in oaiRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("decode chat completion request: %w", err)
	}
	if in.Model == "" {
		return nil, errors.New("model is required")
	}
	if len(in.Messages) == 0 {
		return nil, errors.New("messages must not be empty")
	}
	req := &Request{Model: in.Model, Temperature: in.Temperature, Stream: in.Stream, ReasoningEffort: in.ReasoningEffort}
	switch {
	case in.MaxCompletionTokens != nil:
		req.MaxTokens = *in.MaxCompletionTokens
	case in.MaxTokens != nil:
		req.MaxTokens = *in.MaxTokens
	}
	for _, t := range in.Tools {
		if t.Type != "function" {
			return nil, fmt.Errorf("unsupported tool type %q", t.Type)
		}
		req.Tools = append(req.Tools, llm.ToolDef{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Function.Parameters})
	}
	names := map[string]string{} // tool call ID -> name
	// awaiting are the calls of the last assistant message not yet
	// answered: as in the real API, tool messages answering all of them
	// must come right after it.
	awaiting := map[string]bool{}
	var system []string
	for i, m := range in.Messages {
		if m.Role != "tool" && len(awaiting) > 0 {
			return nil, fmt.Errorf("messages.[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; "+
				"the following tool_call_ids did not have response messages: %s", i, strings.Join(slices.Sorted(maps.Keys(awaiting)), ", "))
		}
		switch m.Role {
		case "system", "developer":
			parts, err := oaiContent(m.Content)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			system = append(system, llm.Message{Parts: parts}.Text())
		case "user":
			parts, err := oaiContent(m.Content)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Parts: parts})
		case "assistant":
			parts, err := oaiContent(m.Content)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			msg := llm.Message{Role: llm.RoleAssistant, Parts: parts}
			for _, c := range m.ToolCalls {
				if c.ID == "" || c.Function.Name == "" {
					return nil, fmt.Errorf("message %d: tool call without id or name", i)
				}
				names[c.ID] = c.Function.Name
				awaiting[c.ID] = true
				msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: rawArgs(c.Function.Arguments)})
			}
			req.Messages = append(req.Messages, msg)
		case "tool":
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("message %d: tool message without tool_call_id", i)
			}
			if !awaiting[m.ToolCallID] {
				return nil, fmt.Errorf("messages.[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			}
			delete(awaiting, m.ToolCallID)
			parts, err := oaiContent(m.Content)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			for _, p := range parts {
				if p.Image != nil {
					return nil, fmt.Errorf("messages.[%d]: image URLs are only allowed for messages with role 'user', but this message with role 'tool' contains an image URL", i)
				}
			}
			res := llm.ToolResult{CallID: m.ToolCallID, Name: names[m.ToolCallID], Content: llm.Message{Parts: parts}.Text()}
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.RoleTool {
				req.Messages[n-1].ToolResults = append(req.Messages[n-1].ToolResults, res)
			} else {
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolResults: []llm.ToolResult{res}})
			}
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	if len(awaiting) > 0 {
		return nil, fmt.Errorf("messages: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; "+
			"the following tool_call_ids did not have response messages: %s", strings.Join(slices.Sorted(maps.Keys(awaiting)), ", "))
	}
	req.System = strings.Join(system, "\n")
	return req, nil
}

// rawArgs keeps valid JSON arguments as they are and turns anything else
// into a JSON string, the convention the adapters follow.
func rawArgs(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// oaiContent decodes message content: a string, an array of parts, or null.
func oaiContent(raw json.RawMessage) ([]llm.Part, error) {
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
		return []llm.Part{{Text: s}}, nil
	}
	var parts []oaiPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, fmt.Errorf("decode content parts: %w", err)
	}
	var out []llm.Part
	for _, p := range parts {
		switch p.Type {
		case "text":
			out = append(out, llm.Part{Text: p.Text})
		case "image_url":
			if p.ImageURL == nil {
				return nil, errors.New("image_url part without image_url")
			}
			img, err := parseDataURL(p.ImageURL.URL)
			if err != nil {
				return nil, err
			}
			out = append(out, llm.Part{Image: img})
		default:
			return nil, fmt.Errorf("unsupported content part type %q", p.Type)
		}
	}
	return out, nil
}

// parseDataURL decodes a base64 data: URL.
func parseDataURL(u string) (*llm.Image, error) {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return nil, errors.New("image url is not a data: url")
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return nil, errors.New("data url without comma")
	}
	mime, ok := strings.CutSuffix(meta, ";base64")
	if !ok {
		return nil, errors.New("data url is not base64")
	}
	b, err := decodeBase64(data)
	if err != nil {
		return nil, fmt.Errorf("data url: %w", err)
	}
	return &llm.Image{MIMEType: mime, Data: b}, nil
}

// decodeBase64 accepts the standard and URL alphabets, padded or not, as
// the real APIs do.
func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("invalid base64")
}

func (openaiAPI) writeError(w http.ResponseWriter, status int, msg string) {
	typ, code := "invalid_request_error", any(nil)
	switch {
	case status == http.StatusUnauthorized:
		code = "invalid_api_key"
	case status == http.StatusForbidden:
		typ = "permission_error"
	case status == http.StatusNotFound:
		code = "model_not_found"
	case status == http.StatusTooManyRequests:
		typ, code = "requests", "rate_limit_exceeded"
	case status >= 500:
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

var openaiStops = map[string]string{
	string(llm.StopEndTurn):   "stop",
	string(llm.StopToolUse):   "tool_calls",
	string(llm.StopMaxTokens): "length",
	string(llm.StopRefusal):   "content_filter",
}

func (openaiAPI) writeReply(s *stream, req *Request, rep Reply) error {
	var in oaiRequest
	_ = json.Unmarshal(req.Body, &in) // decoded once already
	id := fmt.Sprintf("chatcmpl-llmtest%d", req.Seq)
	const created = 1767225600
	calls := rep.calls(newIDs("call_llmtest", req.Seq))
	finish := wireStop(openaiStops, string(rep.stopReason()))
	usage := map[string]any{
		"prompt_tokens":     rep.Usage.InputTokens,
		"completion_tokens": rep.Usage.OutputTokens,
		"total_tokens":      rep.Usage.InputTokens + rep.Usage.OutputTokens,
	}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		if rep.Text != "" {
			msg["content"] = rep.Text
		}
		if rep.Thinking != "" {
			msg["reasoning_content"] = rep.Thinking
		}
		if len(calls) > 0 {
			tcs := make([]map[string]any, len(calls))
			for i, c := range calls {
				tcs[i] = map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}}
			}
			msg["tool_calls"] = tcs
		}
		return s.json(map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
			"usage":   usage,
		})
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"system_fingerprint": "fp_llmtest",
			"choices":            []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		}
	}
	if err := s.event("", chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)); err != nil {
		return err
	}
	for _, p := range split(rep.Thinking, rep.Chunks) {
		if err := s.content(); err != nil {
			return err
		}
		if err := s.event("", chunk(map[string]any{"reasoning_content": p}, nil)); err != nil {
			return err
		}
	}
	for _, p := range split(rep.Text, rep.Chunks) {
		if err := s.content(); err != nil {
			return err
		}
		if err := s.event("", chunk(map[string]any{"content": p}, nil)); err != nil {
			return err
		}
	}
	for i, c := range calls {
		if err := s.content(); err != nil {
			return err
		}
		head := map[string]any{"index": i, "id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": ""}}
		if err := s.event("", chunk(map[string]any{"tool_calls": []any{head}}, nil)); err != nil {
			return err
		}
		for _, f := range fragments(c.args) {
			if err := s.content(); err != nil {
				return err
			}
			frag := map[string]any{"index": i, "function": map[string]any{"arguments": f}}
			if err := s.event("", chunk(map[string]any{"tool_calls": []any{frag}}, nil)); err != nil {
				return err
			}
		}
	}
	if rep.Disconnect {
		return nil
	}
	if err := s.event("", chunk(map[string]any{}, finish)); err != nil {
		return err
	}
	if in.StreamOptions != nil && in.StreamOptions.IncludeUsage && !rep.NoUsage {
		u := chunk(nil, nil)
		u["choices"] = []any{}
		u["usage"] = usage
		if err := s.event("", u); err != nil {
			return err
		}
	}
	return s.event("", "[DONE]")
}
