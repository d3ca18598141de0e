package acpagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/tool"
)

// kindWords maps words of a tool name to the ACP kind they suggest, so
// upstream tools (mcp_github_get_file, mcp_fs_write_file) are classified
// like the built-ins. The first word that matches wins, scanning the name
// from its end, because the verb of an MCP tool comes after its server.
var kindWords = map[string]acp.ToolKind{
	"read": acp.ToolKindRead, "get": acp.ToolKindRead, "list": acp.ToolKindRead, "view": acp.ToolKindRead,
	"cat": acp.ToolKindRead, "recall": acp.ToolKindRead, "ls": acp.ToolKindRead,
	"write": acp.ToolKindEdit, "edit": acp.ToolKindEdit, "create": acp.ToolKindEdit, "update": acp.ToolKindEdit,
	"patch": acp.ToolKindEdit, "replace": acp.ToolKindEdit, "append": acp.ToolKindEdit, "insert": acp.ToolKindEdit,
	"delete": acp.ToolKindDelete, "remove": acp.ToolKindDelete, "rm": acp.ToolKindDelete,
	"move": acp.ToolKindMove, "rename": acp.ToolKindMove, "mv": acp.ToolKindMove,
	"search": acp.ToolKindSearch, "grep": acp.ToolKindSearch, "find": acp.ToolKindSearch, "query": acp.ToolKindSearch,
	"exec": acp.ToolKindExecute, "run": acp.ToolKindExecute, "shell": acp.ToolKindExecute, "bash": acp.ToolKindExecute,
	"command": acp.ToolKindExecute, "terminal": acp.ToolKindExecute,
	"fetch": acp.ToolKindFetch, "http": acp.ToolKindFetch, "download": acp.ToolKindFetch, "browse": acp.ToolKindFetch,
	"think": acp.ToolKindThink,
}

// kindOf classifies a tool by its name for the editor's icons.
func kindOf(name string) acp.ToolKind {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	for i := len(words) - 1; i >= 0; i-- {
		if k, ok := kindWords[words[i]]; ok {
			return k
		}
	}
	return acp.ToolKindOther
}

// toolArgs is the loosely typed view of a call's arguments used for
// titles, locations and diffs. Unknown shapes simply yield nothing.
type toolArgs map[string]any

func parseArgs(raw json.RawMessage) toolArgs {
	var m toolArgs
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

func (a toolArgs) str(keys ...string) string {
	for _, k := range keys {
		if v, ok := a[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}

// pathKeys are the argument names that hold a file path.
var pathKeys = []string{"path", "file_path", "filePath", "file", "filename"}

// title is a one-line summary of a call: the tool name and its most
// telling argument.
func title(name string, args toolArgs) string {
	detail := args.str(append(pathKeys, "command", "url", "query", "agent")...)
	if detail == "" {
		return name
	}
	detail = strings.Join(strings.Fields(detail), " ")
	if utf8.RuneCountInString(detail) > 80 {
		detail = string([]rune(detail)[:77]) + "..."
	}
	return name + ": " + detail
}

// locations are the files a call touches, made absolute against the
// session's directory so the editor can open them.
func locations(cwd string, args toolArgs) []acp.ToolCallLocation {
	p := args.str(pathKeys...)
	if p == "" {
		return nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return []acp.ToolCallLocation{{Path: filepath.Clean(p)}}
}

// rawInput is the call's arguments as the editor should see them: the
// JSON itself when valid (a malformed argument string from the model
// would otherwise break the whole notification).
func rawInput(raw json.RawMessage) any {
	raw = normArgs(raw)
	if json.Valid(raw) {
		return raw
	}
	return string(raw)
}

// normArgs gives empty arguments the "{}" the runner substitutes, so
// digests computed here match the ones of the calls the tools receive.
func normArgs(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

// callID is the id the editor knows a call by. Providers that give calls
// no id get one derived from the call, stable across the run's events.
func callID(c llm.ToolCall) acp.ToolCallId {
	if c.ID != "" {
		return acp.ToolCallId(c.ID)
	}
	return acp.ToolCallId("call_" + tool.Digest(c.Name, normArgs(c.Arguments))[:16])
}

// startUpdate announces a call. It is pending: the runner may still ask
// for approval, and nothing says when it really starts but its progress,
// an approval or an editor-backed tool.
func startUpdate(cwd string, c llm.ToolCall) acp.SessionUpdate {
	args := parseArgs(c.Arguments)
	return acp.StartToolCall(callID(c), title(c.Name, args),
		acp.WithStartKind(kindOf(c.Name)),
		acp.WithStartStatus(acp.ToolCallStatusPending),
		acp.WithStartLocations(locations(cwd, args)),
		acp.WithStartRawInput(rawInput(c.Arguments)),
	)
}

// progressUpdate reports a long call's progress.
func progressUpdate(c llm.ToolCall, msg string, progress, total float64) acp.SessionUpdate {
	opts := []acp.ToolCallUpdateOpt{acp.WithUpdateStatus(acp.ToolCallStatusInProgress)}
	text := msg
	if total > 0 {
		text = strings.TrimSpace(fmt.Sprintf("%s (%g/%g)", msg, progress, total))
	}
	if text != "" {
		opts = append(opts, acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(text))}))
	}
	return acp.UpdateToolCall(callID(c), opts...)
}

// finishUpdate reports a call's end. A successful edit keeps the diff it
// showed; every other result is shown as text.
func finishUpdate(c llm.ToolCall, res llm.ToolResult, keepContent bool) acp.SessionUpdate {
	status := acp.ToolCallStatusCompleted
	if res.IsError {
		status = acp.ToolCallStatusFailed
	}
	opts := []acp.ToolCallUpdateOpt{acp.WithUpdateStatus(status)}
	if !keepContent || res.IsError {
		opts = append(opts, acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(displayText(res.Content)))}))
	}
	return acp.UpdateToolCall(callID(c), opts...)
}

// displayText strips the untrusted-data envelope the runner puts around
// upstream results: it tells the model that the text is data, and means
// nothing to a person reading the editor.
func displayText(s string) string {
	if !tool.IsUntrustedBlock(s) {
		return s
	}
	_, body, ok := strings.Cut(s, "\n")
	if !ok {
		return s
	}
	return strings.TrimSuffix(strings.TrimSuffix(body, "</untrusted-data>"), "\n")
}
