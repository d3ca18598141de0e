package llmtest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/llm"
)

// NewGeminiServer starts a fake Gemini API serving
// POST {URL}/{version}/models/{model}:streamGenerateContent?alt=sse and
// :generateContent. Function calls carry no IDs (like the real Gemini API)
// and the first one carries a thoughtSignature, which clients must send
// back: with thinking on (generationConfig.thinkingConfig), a request that
// replays a function call of the current turn without it is rejected, as
// Gemini 3 does. Thinking is streamed as parts with "thought": true.
func NewGeminiServer(tb testing.TB, h Handler) *Server {
	tb.Helper()
	return newServer(tb, VendorGemini, "", geminiAPI{}, h)
}

// GeminiThoughtSignature is the thoughtSignature the fake puts on the first
// function call of a reply.
var GeminiThoughtSignature = []byte("llmtest-thought-signature")

type geminiAPI struct{}

type gemRequest struct {
	Contents          []gemContent `json:"contents"`
	SystemInstruction *gemContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig *struct {
		MaxOutputTokens int      `json:"maxOutputTokens"`
		Temperature     *float64 `json:"temperature"`
		ThinkingConfig  *struct {
			IncludeThoughts bool `json:"includeThoughts"`
			ThinkingBudget  int  `json:"thinkingBudget"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

type gemContent struct {
	Role  string    `json:"role"`
	Parts []gemPart `json:"parts"`
}

type gemPart struct {
	Text       string `json:"text"`
	Thought    bool   `json:"thought"`
	InlineData *struct {
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
		Parts    []struct {
			InlineData *struct {
				MIMEType string `json:"mimeType"`
				Data     string `json:"data"`
			} `json:"inlineData"`
		} `json:"parts"`
	} `json:"functionResponse"`
	ThoughtSignature string `json:"thoughtSignature"`
}

func (geminiAPI) decode(r *http.Request, body []byte) (*Request, int, error) {
	path := r.URL.Path
	_, rest, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/models/")
	model, method, ok2 := strings.Cut(rest, ":")
	if r.Method != http.MethodPost || !ok || !ok2 || model == "" || (method != "streamGenerateContent" && method != "generateContent") {
		return nil, http.StatusNotFound, fmt.Errorf("llmtest: no route %s %s", r.Method, path)
	}
	stream := method == "streamGenerateContent"
	if stream && r.URL.Query().Get("alt") != "sse" {
		return nil, http.StatusBadRequest, errors.New("llmtest: streamGenerateContent is only served with alt=sse")
	}
	req, err := decodeGeminiRequest(body)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	req.Model = model
	req.Stream = stream
	req.APIKey = r.Header.Get("X-Goog-Api-Key")
	if req.APIKey == "" {
		req.APIKey = r.URL.Query().Get("key")
	}
	return req, 0, nil
}

// decodeGeminiRequest turns a generateContent request body into the
// neutral view. functionResponse parts become a RoleTool message; their
// response's "output" or "error" field becomes the result content.
func decodeGeminiRequest(body []byte) (*Request, error) {
	var in gemRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("decode generateContent request: %w", err)
	}
	if len(in.Contents) == 0 {
		return nil, errors.New("contents is not specified")
	}
	req := &Request{}
	if in.GenerationConfig != nil {
		req.MaxTokens = in.GenerationConfig.MaxOutputTokens
		req.Temperature = in.GenerationConfig.Temperature
		if tc := in.GenerationConfig.ThinkingConfig; tc != nil {
			req.ThinkingBudget = tc.ThinkingBudget
		}
	}
	if req.ThinkingBudget > 0 {
		if err := checkThoughtSignatures(in.Contents); err != nil {
			return nil, err
		}
	}
	if in.SystemInstruction != nil {
		for _, p := range in.SystemInstruction.Parts {
			req.System += p.Text
		}
	}
	for _, t := range in.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if len(schema) == 0 {
				schema = f.Parameters
			}
			req.Tools = append(req.Tools, llm.ToolDef{Name: f.Name, Description: f.Description, InputSchema: schema})
		}
	}
	for i, c := range in.Contents {
		if len(c.Parts) == 0 {
			return nil, fmt.Errorf("contents[%d]: must include at least one parts field", i)
		}
		switch c.Role {
		case "user", "":
			var results []llm.ToolResult
			user := llm.Message{Role: llm.RoleUser}
			for _, p := range c.Parts {
				switch {
				case p.FunctionResponse != nil:
					fr := p.FunctionResponse
					if fr.Name == "" {
						return nil, fmt.Errorf("contents[%d]: functionResponse without name", i)
					}
					res := llm.ToolResult{CallID: fr.ID, Name: fr.Name}
					res.Content, res.IsError = gemResult(fr.Response)
					for j, fp := range fr.Parts {
						if fp.InlineData == nil {
							return nil, fmt.Errorf("contents[%d]: functionResponse.parts[%d]: only inlineData is served", i, j)
						}
						data, err := decodeBase64(fp.InlineData.Data)
						if err != nil {
							return nil, fmt.Errorf("contents[%d]: functionResponse.parts[%d].inlineData: %w", i, j, err)
						}
						res.Images = append(res.Images, llm.Image{MIMEType: fp.InlineData.MIMEType, Data: data})
					}
					results = append(results, res)
				case p.InlineData != nil:
					data, err := decodeBase64(p.InlineData.Data)
					if err != nil {
						return nil, fmt.Errorf("contents[%d]: inlineData: %w", i, err)
					}
					user.Parts = append(user.Parts, llm.Part{Image: &llm.Image{MIMEType: p.InlineData.MIMEType, Data: data}})
				case p.FunctionCall != nil:
					return nil, fmt.Errorf("contents[%d]: functionCall in a user turn", i)
				default:
					user.Parts = append(user.Parts, llm.Part{Text: p.Text})
				}
			}
			if len(results) > 0 {
				req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolResults: results})
			}
			if len(user.Parts) > 0 {
				req.Messages = append(req.Messages, user)
			}
		case "model":
			msg := llm.Message{Role: llm.RoleAssistant}
			for _, p := range c.Parts {
				switch {
				case p.FunctionCall != nil:
					fc := p.FunctionCall
					if fc.Name == "" {
						return nil, fmt.Errorf("contents[%d]: functionCall without name", i)
					}
					args := bytes.TrimSpace(fc.Args)
					if len(args) == 0 || string(args) == "null" {
						args = []byte("{}")
					}
					call := llm.ToolCall{ID: fc.ID, Name: fc.Name, Arguments: args}
					if sig, err := decodeBase64(p.ThoughtSignature); err == nil && len(sig) > 0 {
						call.Signature = sig
					}
					msg.ToolCalls = append(msg.ToolCalls, call)
				case p.Thought:
					msg.Thinking += p.Text
				case p.FunctionResponse != nil, p.InlineData != nil:
					return nil, fmt.Errorf("contents[%d]: unexpected part in a model turn", i)
				default:
					msg.Parts = append(msg.Parts, llm.Part{Text: p.Text})
				}
			}
			req.Messages = append(req.Messages, msg)
		default:
			return nil, fmt.Errorf("contents[%d]: please use a valid role: user, model", i)
		}
	}
	return req, nil
}

// checkThoughtSignatures rejects model turns of the current turn (after
// the last user text) whose first function call lacks the fake's
// signature.
func checkThoughtSignatures(contents []gemContent) error {
	start := 0
	for i, c := range contents {
		if c.Role != "model" && slices.ContainsFunc(c.Parts, func(p gemPart) bool { return p.FunctionResponse == nil }) {
			start = i + 1
		}
	}
	for i := start; i < len(contents); i++ {
		for j, p := range contents[i].Parts {
			if p.FunctionCall == nil {
				continue
			}
			if sig, err := decodeBase64(p.ThoughtSignature); err != nil || !bytes.Equal(sig, GeminiThoughtSignature) {
				return fmt.Errorf("contents[%d].parts[%d]: function call %s is missing a thought_signature", i, j, p.FunctionCall.Name)
			}
			break
		}
	}
	return nil
}

// gemResult extracts a tool result's content from a functionResponse
// response object.
func gemResult(raw json.RawMessage) (string, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err == nil && len(obj) == 1 {
		for k, v := range obj {
			if k != "output" && k != "error" {
				break
			}
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				s = string(v)
			}
			return s, k == "error"
		}
	}
	return string(raw), false
}

// ThoughtSignatures returns the thoughtSignatures a Gemini request carried
// on function call parts, decoded, in order. It is empty for other vendors.
func (r *Request) ThoughtSignatures() [][]byte {
	if r.Vendor != VendorGemini {
		return nil
	}
	var in gemRequest
	if json.Unmarshal(r.Body, &in) != nil {
		return nil
	}
	var out [][]byte
	for _, c := range in.Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil && p.ThoughtSignature != "" {
				if b, err := decodeBase64(p.ThoughtSignature); err == nil {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

func (geminiAPI) writeError(w http.ResponseWriter, status int, msg string) {
	st := "INTERNAL"
	switch status {
	case http.StatusBadRequest:
		st = "INVALID_ARGUMENT"
	case http.StatusUnauthorized:
		st = "UNAUTHENTICATED"
	case http.StatusForbidden:
		st = "PERMISSION_DENIED"
	case http.StatusNotFound:
		st = "NOT_FOUND"
	case http.StatusTooManyRequests:
		st = "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		st = "UNAVAILABLE"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg, "status": st}})
}

var geminiStops = map[string]string{
	string(llm.StopEndTurn):   "STOP",
	string(llm.StopToolUse):   "STOP",
	string(llm.StopMaxTokens): "MAX_TOKENS",
	string(llm.StopRefusal):   "SAFETY",
}

func (geminiAPI) writeReply(s *stream, req *Request, rep Reply) error {
	respID := fmt.Sprintf("llmtest%d", req.Seq)
	finish := wireStop(geminiStops, string(rep.stopReason()))
	usage := func(final bool) map[string]any {
		u := map[string]any{"promptTokenCount": rep.Usage.InputTokens, "totalTokenCount": rep.Usage.InputTokens}
		if final {
			u["candidatesTokenCount"] = rep.Usage.OutputTokens
			u["totalTokenCount"] = rep.Usage.InputTokens + rep.Usage.OutputTokens
		}
		return u
	}
	var callParts []any
	var malformed string
	if rep.MalformedToolArgs && len(rep.ToolCalls) > 0 {
		c := rep.ToolCalls[0]
		malformed = fmt.Sprintf("Malformed function call: print(default_api.%s(%s", c.Name, truncateJSON(string(c.Arguments)))
		finish = "MALFORMED_FUNCTION_CALL"
	} else {
		for i, c := range rep.calls(func(int) string { return "" }) {
			fc := map[string]any{"name": c.name, "args": json.RawMessage(c.args)}
			if id := rep.ToolCalls[i].ID; id != "" {
				fc["id"] = id
			}
			part := map[string]any{"functionCall": fc}
			if i == 0 {
				part["thoughtSignature"] = base64.StdEncoding.EncodeToString(GeminiThoughtSignature)
			}
			callParts = append(callParts, part)
		}
	}
	response := func(parts []any, final bool) map[string]any {
		cand := map[string]any{"index": 0}
		if len(parts) > 0 {
			cand["content"] = map[string]any{"role": "model", "parts": parts}
		}
		if final {
			cand["finishReason"] = finish
			if malformed != "" {
				cand["finishMessage"] = malformed
			}
		}
		r := map[string]any{"candidates": []any{cand}, "modelVersion": req.Model, "responseId": respID}
		if !rep.NoUsage {
			r["usageMetadata"] = usage(final)
		}
		return r
	}
	if !req.Stream {
		var parts []any
		if rep.Thinking != "" {
			parts = append(parts, map[string]any{"text": rep.Thinking, "thought": true})
		}
		if rep.Text != "" {
			parts = append(parts, map[string]any{"text": rep.Text})
		}
		parts = append(parts, callParts...)
		return s.json(response(parts, true))
	}
	// Content chunks; the last one carries the finish reason and usage.
	var chunks [][]any
	for _, p := range split(rep.Thinking, rep.Chunks) {
		chunks = append(chunks, []any{map[string]any{"text": p, "thought": true}})
	}
	for _, p := range split(rep.Text, rep.Chunks) {
		chunks = append(chunks, []any{map[string]any{"text": p}})
	}
	if len(callParts) > 0 {
		chunks = append(chunks, callParts)
	}
	if len(chunks) == 0 && malformed == "" {
		chunks = append(chunks, []any{map[string]any{"text": ""}})
	}
	for i, parts := range chunks {
		if err := s.content(); err != nil {
			return err
		}
		final := i == len(chunks)-1 && malformed == "" && !rep.Disconnect
		if err := s.event("", response(parts, final)); err != nil {
			return err
		}
	}
	if malformed != "" && !rep.Disconnect {
		return s.event("", response(nil, true))
	}
	return nil
}
