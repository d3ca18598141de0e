package gemini

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"

	"google.golang.org/genai"

	"github.com/agentd/agentd/internal/llm"
)

// accumulator assembles a streamed answer from its chunks. Only candidate
// 0 is kept (the adapter never asks for more).
type accumulator struct {
	text     strings.Builder
	thinking strings.Builder
	calls    []call
	finish   genai.FinishReason
	// finishMessage explains some finish reasons, e.g. the malformed call.
	finishMessage string
	blocked       bool // the prompt was blocked
	usage         llm.Usage
	hasUsage      bool // a chunk carried usageMetadata
}

// call is one function call as it arrived.
type call struct {
	fc  *genai.FunctionCall
	sig []byte
}

// add folds one chunk into the answer, reporting text and thinking
// fragments to onDelta as they come.
func (a *accumulator) add(chunk *genai.GenerateContentResponse, onDelta func(llm.Delta)) {
	if chunk == nil {
		return
	}
	if u := chunk.UsageMetadata; u != nil {
		// Each chunk carries running totals.
		a.usage = llm.Usage{
			InputTokens:  int(u.PromptTokenCount + u.ToolUsePromptTokenCount),
			OutputTokens: int(u.CandidatesTokenCount + u.ThoughtsTokenCount),
		}
		a.hasUsage = true
	}
	if pf := chunk.PromptFeedback; pf != nil && pf.BlockReason != "" {
		a.blocked = true
	}
	if len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
		return
	}
	cand := chunk.Candidates[0]
	if cand.Content != nil {
		for _, part := range cand.Content.Parts {
			switch {
			case part == nil:
			case part.FunctionCall != nil:
				a.calls = append(a.calls, call{fc: part.FunctionCall, sig: part.ThoughtSignature})
			case part.Text == "":
			case part.Thought:
				a.thinking.WriteString(part.Text)
				onDelta(llm.Delta{Kind: llm.DeltaThinking, Text: part.Text})
			default:
				a.text.WriteString(part.Text)
				onDelta(llm.Delta{Kind: llm.DeltaText, Text: part.Text})
			}
		}
	}
	if cand.FinishReason != "" && cand.FinishReason != genai.FinishReasonUnspecified {
		a.finish = cand.FinishReason
		a.finishMessage = cand.FinishMessage
	}
}

// response returns the assembled answer. A stream that ended without a finish reason was cut off, and is an
// error rather than a short answer.
func (a *accumulator) response() (*llm.Response, error) {
	if a.finish == "" && !a.blocked {
		return nil, fmt.Errorf("stream ended before the model finished: %w", io.ErrUnexpectedEOF)
	}
	msg := llm.Message{Role: llm.RoleAssistant, Thinking: a.thinking.String()}
	if a.text.Len() > 0 {
		msg.Parts = []llm.Part{{Text: a.text.String()}}
	}
	for _, c := range a.calls {
		id := c.fc.ID
		if id == "" {
			id = newCallID()
		}
		args := json.RawMessage("{}")
		if len(c.fc.Args) > 0 {
			if b, err := json.Marshal(c.fc.Args); err == nil {
				args = b
			}
		}
		msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: id, Name: c.fc.Name, Arguments: args, Signature: c.sig})
	}
	if a.finish == genai.FinishReasonMalformedFunctionCall && len(msg.ToolCalls) == 0 {
		msg.ToolCalls = append(msg.ToolCalls, malformedCall(a.finishMessage))
	}
	return &llm.Response{Message: msg, Usage: a.usage, UsageKnown: a.hasUsage, StopReason: a.stopReason(len(msg.ToolCalls) > 0), FinishReason: string(a.finish)}, nil
}

// stopReason normalises the finish reason.
func (a *accumulator) stopReason(calls bool) llm.StopReason {
	if a.blocked {
		return llm.StopRefusal
	}
	switch a.finish {
	case genai.FinishReasonMaxTokens:
		return llm.StopMaxTokens
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonImageSafety,
		genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return llm.StopRefusal
	}
	if calls {
		return llm.StopToolUse
	}
	return llm.StopEndTurn
}

// The API's message about a call it could not parse names the function,
// e.g. "Malformed function call: print(default_api.write_file(path=...".
var (
	malformedAPIName  = regexp.MustCompile(`default_api\.([A-Za-z_][A-Za-z0-9_.\-]*)\(`)
	malformedBareName = regexp.MustCompile(`call:\s*([A-Za-z_][A-Za-z0-9_.\-]*)\(`)
)

// malformedCall stands in for a call the API could not parse: the agent
// loop sees arguments that are not an object and tells the model.
func malformedCall(message string) llm.ToolCall {
	name := "malformed_function_call"
	if m := malformedAPIName.FindStringSubmatch(message); m != nil {
		name = m[1]
	} else if m := malformedBareName.FindStringSubmatch(message); m != nil && m[1] != "print" {
		name = m[1]
	}
	raw := message
	if raw == "" {
		raw = "malformed function call"
	}
	args, _ := json.Marshal(raw) // a string always marshals
	return llm.ToolCall{ID: newCallID(), Name: name, Arguments: args}
}

// newCallID makes a call ID; Gemini usually sends none.
func newCallID() string {
	return syntheticIDPrefix + strings.ToLower(rand.Text()[:16])
}
