package openai

import (
	"encoding/base64"
	"encoding/json"
	"slices"

	"github.com/agentd/agentd/internal/llm"
)

// The request body, encoded here rather than by the SDK. The SDK's
// parameter types encode through nested MarshalJSON layers (unions,
// optional fields, extras) that re-encode every message several times
// and recurse deep enough to grow a goroutine's stack three times: on an
// A2A send to an agent whose model answers at once, building the body
// was about 6% of agentd's CPU, and the stack growth 2.5% more. The
// SDK still makes the request (auth, retries, errors): the body it is
// given is sent as it is. params (request.go) is the SDK's version of
// the same body; TestBodyMatchesSDK holds the two to the same JSON.

// wireRequest is a Chat Completions request, without "stream", which
// the SDK's NewStreaming sets.
type wireRequest struct {
	Messages            []wireMessage     `json:"messages"`
	Model               string            `json:"model"`
	MaxCompletionTokens int64             `json:"max_completion_tokens,omitempty"`
	MaxTokens           int64             `json:"max_tokens,omitempty"`
	Temperature         *float64          `json:"temperature,omitempty"`
	ReasoningEffort     string            `json:"reasoning_effort,omitempty"`
	StreamOptions       wireStreamOptions `json:"stream_options"`
	Tools               []wireTool        `json:"tools,omitempty"`
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// wireMessage is any message: Content is a string, a []wirePart or nil
// (left out).
type wireMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID *string        `json:"tool_call_id,omitempty"`
}

type wirePart struct {
	Type     string        `json:"type"`
	Text     *string       `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

type wireToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function wireCallFunction `json:"function"`
}

type wireCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string          `json:"type"`
	Function json.RawMessage `json:"function"`
}

// body encodes req as params does.
func (p *Provider) body(req *llm.Request) ([]byte, error) {
	w := wireRequest{Model: req.Model, Messages: wireMessages(req.System, req.Messages), StreamOptions: wireStreamOptions{IncludeUsage: true}}
	if req.MaxTokens > 0 {
		if p.official {
			w.MaxCompletionTokens = int64(req.MaxTokens)
		} else {
			w.MaxTokens = int64(req.MaxTokens)
		}
	}
	w.Temperature = req.Temperature
	w.ReasoningEffort = string(req.Reasoning)
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: toolFunction(t)})
	}
	return json.Marshal(w)
}

// wireMessages is messages (request.go), encoded here.
func wireMessages(system string, msgs []llm.Message) []wireMessage {
	out := make([]wireMessage, 0, len(msgs)+1)
	if system != "" {
		out = append(out, wireMessage{Role: "system", Content: system})
	}
	for _, m := range msgs {
		switch m.Role {
		case llm.RoleUser:
			out = append(out, wireUser(m))
		case llm.RoleAssistant:
			a := wireMessage{Role: "assistant"}
			if text := m.Text(); text != "" {
				a.Content = text
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, wireToolCall{ID: c.ID, Type: "function",
					Function: wireCallFunction{Name: c.Name, Arguments: string(llm.ObjectArguments(c.Arguments))}})
			}
			if a.Content == nil && len(a.ToolCalls) == 0 {
				continue // as in messages: nothing to replay
			}
			out = append(out, a)
		case llm.RoleTool:
			var images []wirePart
			for _, r := range m.ToolResults {
				out = append(out, wireMessage{Role: "tool", Content: r.Content, ToolCallID: &r.CallID})
				if len(r.Images) == 0 {
					continue
				}
				images = append(images, textPart(toolImagesCaption(r)))
				for _, img := range r.Images {
					images = append(images, wireImage(img))
				}
			}
			if len(images) > 0 {
				out = append(out, wireMessage{Role: "user", Content: images})
			}
		}
	}
	return out
}

// wireUser is userMessage (request.go), encoded here.
func wireUser(m llm.Message) wireMessage {
	if !slices.ContainsFunc(m.Parts, func(p llm.Part) bool { return p.Image != nil }) {
		return wireMessage{Role: "user", Content: m.Text()}
	}
	var parts []wirePart
	for _, part := range m.Parts {
		if part.Text != "" {
			parts = append(parts, textPart(part.Text))
		}
		if img := part.Image; img != nil {
			parts = append(parts, wireImage(*img))
		}
	}
	return wireMessage{Role: "user", Content: parts}
}

func textPart(s string) wirePart { return wirePart{Type: "text", Text: &s} }

func wireImage(img llm.Image) wirePart {
	return wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: "data:" + img.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)}}
}
