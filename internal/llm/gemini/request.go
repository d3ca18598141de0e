package gemini

import (
	"bytes"
	"encoding/json"
	"strings"

	"google.golang.org/genai"

	"github.com/agentd/agentd/internal/llm"
)

// syntheticIDPrefix marks call IDs the adapter made up; they are never sent
// to the API.
const syntheticIDPrefix = "gcall_"

// request converts a neutral request into contents and config.
func (p *Provider) request(req *llm.Request) ([]*genai.Content, *genai.GenerateContentConfig) {
	config := &genai.GenerateContentConfig{
		// A resumed stream would replay text already handed to onDelta.
		AutomaticContinuation: genai.Ptr(false),
	}
	if req.System != "" {
		config.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: req.System}}}
	}
	if req.MaxTokens > 0 {
		config.MaxOutputTokens = int32(min(req.MaxTokens, 1<<31-1))
	}
	if req.Temperature != nil {
		config.Temperature = genai.Ptr(float32(*req.Temperature))
	}
	if budget := llm.ReasoningBudget(req.Reasoning); budget > 0 {
		config.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true, ThinkingBudget: genai.Ptr(int32(budget))}
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, len(req.Tools))
		for i, t := range req.Tools {
			decls[i] = &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
			if schema := bytes.TrimSpace(t.InputSchema); len(schema) > 0 && json.Valid(schema) {
				decls[i].ParametersJsonSchema = json.RawMessage(schema)
			}
		}
		config.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	return p.contents(req.Messages), config
}

// contents converts the history. Tool results become functionResponse parts
// of a user turn ({"output": ...} or {"error": ...}, images as the
// response's inline data parts); consecutive messages
// mapping to the same role are merged; empty turns are dropped.
func (p *Provider) contents(msgs []llm.Message) []*genai.Content {
	var out []*genai.Content
	add := func(role string, parts []*genai.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			return
		}
		out = append(out, &genai.Content{Role: role, Parts: parts})
	}
	names := map[string]string{} // call ID -> tool name, for nameless results
	for _, m := range msgs {
		var parts []*genai.Part
		switch m.Role {
		case llm.RoleUser:
			for _, part := range m.Parts {
				if part.Text != "" {
					parts = append(parts, &genai.Part{Text: part.Text})
				}
				if img := part.Image; img != nil {
					parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: img.MIMEType, Data: img.Data}})
				}
			}
			add(genai.RoleUser, parts)
		case llm.RoleAssistant:
			if text := m.Text(); text != "" {
				parts = append(parts, &genai.Part{Text: text})
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				fc := &genai.FunctionCall{Name: c.Name, Args: objectArguments(c.Arguments)}
				if !strings.HasPrefix(c.ID, syntheticIDPrefix) {
					fc.ID = c.ID
				}
				parts = append(parts, &genai.Part{FunctionCall: fc, ThoughtSignature: c.Signature})
			}
			add(genai.RoleModel, parts)
		case llm.RoleTool:
			for _, r := range m.ToolResults {
				name := r.Name
				if name == "" {
					name = names[r.CallID]
				}
				fr := &genai.FunctionResponse{Name: name, Response: map[string]any{"output": r.Content}}
				if r.IsError {
					fr.Response = map[string]any{"error": r.Content}
				}
				if !strings.HasPrefix(r.CallID, syntheticIDPrefix) {
					fr.ID = r.CallID
				}
				// Images go inside the response (multimodal function
				// responses), after the output that describes them.
				for _, img := range r.Images {
					fr.Parts = append(fr.Parts, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: img.MIMEType, Data: img.Data}})
				}
				parts = append(parts, &genai.Part{FunctionResponse: fr})
			}
			add(genai.RoleUser, parts)
		}
	}
	return out
}

// objectArguments decodes args if it is a JSON object, else returns an
// empty map (see llm.ObjectArguments): arguments the model got wrong were
// kept as a JSON string and Gemini only takes an object.
func objectArguments(args json.RawMessage) map[string]any {
	out := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(llm.ObjectArguments(args)))
	dec.UseNumber() // keep big integers exact
	if err := dec.Decode(&out); err != nil {
		return map[string]any{}
	}
	return out
}
