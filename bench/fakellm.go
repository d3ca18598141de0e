package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Models the fake OpenAI-compatible server knows. Each answers at once,
// so a turn's time through agentd is agentd's own plus the HTTP round
// trips to the fake.
const (
	// modelInstant answers "ok".
	modelInstant = "instant"
	// modelTool first calls the tool named toolForLoop, then, once the
	// conversation holds the tool's result, answers "done".
	modelTool = "tool"
	// modelHold starts a streamed answer and never finishes it, holding
	// the run (and any stream on it) open until the caller goes away.
	modelHold = "hold"
)

// toolForLoop is the built-in tool modelTool calls: read-only, local and
// cheap, so the round trip measures agentd's loop, not the tool.
const toolForLoop = "file_list"

// fakeLLM serves POST /v1/chat/completions like an OpenAI-compatible
// server, streamed (SSE chunks, usage, [DONE]) or not.
type fakeLLM struct{}

func (fakeLLM) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"no such route"}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		http.Error(w, `{"error":{"message":"read body"}}`, http.StatusBadRequest)
		return
	}
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var rep reply
	switch req.Model {
	case modelInstant:
		rep = reply{text: "ok"}
	case modelTool:
		if req.Messages[len(req.Messages)-1].Role == "tool" {
			rep = reply{text: "done"}
		} else {
			rep = reply{tool: toolForLoop, args: `{"path":"."}`}
		}
	case modelHold:
		if !req.Stream {
			http.Error(w, `{"error":{"message":"hold needs stream"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", chunk(req.Model, `{"role":"assistant","content":""}`, "null"))
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
		return
	default:
		http.Error(w, `{"error":{"message":"unknown model"}}`, http.StatusNotFound)
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(rep.completion(req.Model))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write(rep.stream(req.Model))
}

// reply is one answer: text, or a single tool call.
type reply struct {
	text       string
	tool, args string
}

func chunk(model, delta, finish string) string {
	return `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":` + jsonString(model) +
		`,"choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
}

const usageJSON = `{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}`

func (r reply) stream(model string) []byte {
	var b strings.Builder
	ev := func(s string) { b.WriteString("data: " + s + "\n\n") }
	if r.tool != "" {
		ev(chunk(model, `{"role":"assistant","tool_calls":[{"index":0,"id":"call_bench","type":"function","function":{"name":`+
			jsonString(r.tool)+`,"arguments":`+jsonString(r.args)+`}}]}`, "null"))
		ev(chunk(model, `{}`, `"tool_calls"`))
	} else {
		ev(chunk(model, `{"role":"assistant","content":`+jsonString(r.text)+`}`, "null"))
		ev(chunk(model, `{}`, `"stop"`))
	}
	ev(`{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1,"model":` + jsonString(model) + `,"choices":[],"usage":` + usageJSON + `}`)
	ev("[DONE]")
	return []byte(b.String())
}

func (r reply) completion(model string) []byte {
	msg := `{"role":"assistant","content":` + jsonString(r.text) + `}`
	finish := `"stop"`
	if r.tool != "" {
		msg = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_bench","type":"function","function":{"name":` +
			jsonString(r.tool) + `,"arguments":` + jsonString(r.args) + `}}]}`
		finish = `"tool_calls"`
	}
	return []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1,"model":` + jsonString(model) +
		`,"choices":[{"index":0,"message":` + msg + `,"finish_reason":` + finish + `}],"usage":` + usageJSON + `}`)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
