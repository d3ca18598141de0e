package llm

import (
	"bytes"
	"encoding/json"
)

// ToolArguments turns the arguments text a model streamed for a tool call
// into what ToolCall.Arguments holds, which must always be valid JSON so the
// message can be stored and replayed: the text verbatim (trimmed) when it is
// JSON, {} when it is empty, and otherwise a JSON string holding the raw
// text. The agent loop then sees a non-object and can tell the model its
// arguments were not valid JSON, instead of the adapter failing the call.
func ToolArguments(raw string) json.RawMessage {
	trimmed := bytes.TrimSpace([]byte(raw))
	if len(trimmed) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(trimmed) {
		return json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(raw) // a string always marshals
	return b
}

// ObjectArguments is args (trimmed) when it is a JSON object, else {}.
// Adapters replay a call's arguments through it because vendors accept
// only an object there, while ToolArguments may have kept the model's
// mistake as a JSON string.
func ObjectArguments(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		return trimmed
	}
	return json.RawMessage("{}")
}
