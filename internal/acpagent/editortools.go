package acpagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/agentd/agentd/internal/builtin"
	"github.com/agentd/agentd/internal/tool"
)

// The workspace tools: built-ins that act on the agent's workspace
// directory. In an ACP session that directory is the editor's cwd.
const (
	toolFileRead  = "file_read"
	toolFileWrite = "file_write"
	toolFileList  = "file_list"
	toolShellExec = "shell_exec"
)

// terminalOutputLimit caps what an editor terminal keeps of a command's
// output, as the built-in shell_exec does.
const terminalOutputLimit = 64 << 10

// editorTimeout bounds the editor requests made only for display (reading
// a file's old text for a diff) and the clean-up after a command.
const editorTimeout = 5 * time.Second

// workspaceTools returns the session's workspace tools. When the editor
// offers a file system or terminals they are served through it, under
// the built-ins' names and schemas, so the model sees unsaved buffers and
// the user watches commands run; otherwise the daemon's built-ins are
// rebound to the session's directory. These extra tools take precedence
// over the daemon's, and the policy decides on them by name as usual.
func (s *server) workspaceTools(ss *session) []tool.Tool {
	caps := s.caps()
	lookup := func(name string) tool.Tool {
		if s.opts.Tools == nil {
			return nil
		}
		t, _ := s.opts.Tools.Lookup(name)
		return t
	}
	var out []tool.Tool
	for _, name := range []string{toolFileRead, toolFileWrite, toolFileList, toolShellExec} {
		base := lookup(name)
		var offered bool
		switch name {
		case toolFileRead:
			offered = caps.Fs.ReadTextFile
		case toolFileWrite:
			offered = caps.Fs.WriteTextFile
		case toolShellExec:
			offered = caps.Terminal
		}
		switch {
		case offered:
			out = append(out, &editorTool{s: s, ss: ss, spec: editorSpec(name, base)})
		case base != nil:
			out = append(out, &rebound{s: s, ss: ss, base: base})
		}
	}
	return out
}

// extraTools are the tools a turn of ss gets beyond the daemon's: the
// workspace tools and the editor's MCP servers' tools. An MCP tool whose
// name the daemon already has (the resource and prompt helpers every
// client manager offers) is left out, so the daemon's own servers stay
// reachable through them.
func (s *server) extraTools(ss *session) []tool.Tool {
	out := append([]tool.Tool(nil), ss.tools...)
	if ss.mcp == nil {
		return out
	}
	for _, t := range ss.mcp.Tools() {
		if s.opts.Tools != nil {
			if _, taken := s.opts.Tools.Lookup(t.Spec().Name); taken {
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// editorSpec is the spec of an editor-backed tool: the built-in's, so the
// model is offered the same tool, with a note on where it runs.
func editorSpec(name string, base tool.Tool) tool.Spec {
	var sp tool.Spec
	if base != nil {
		sp = base.Spec()
	} else {
		sp = fallbackSpecs[name]
	}
	sp.Origin = tool.OriginEditor
	switch name {
	case toolFileRead:
		sp.Description += " The file is read through the user's editor, so unsaved changes are included."
	case toolFileWrite:
		sp.Description += " The file is written through the user's editor."
	case toolShellExec:
		sp.Description = "Run a shell command (/bin/sh -c) in the project directory, in a terminal of the user's editor " +
			"where the user can watch it, and return its output and exit code."
	}
	return sp
}

// fallbackSpecs describe the workspace tools when the daemon has no
// built-in to copy (tests, or a daemon built without them).
var fallbackSpecs = map[string]tool.Spec{
	toolFileRead: {
		Name:        toolFileRead,
		Description: "Read a text file of the project. Paths are relative to the project root; offset and limit select lines.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`),
		ReadOnly:    true,
	},
	toolFileWrite: {
		Name:        toolFileWrite,
		Description: "Write a text file of the project, replacing it (or appending, with append=true). Paths are relative to the project root.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"append":{"type":"boolean"}},"required":["path","content"],"additionalProperties":false}`),
	},
	toolShellExec: {
		Name:        toolShellExec,
		Description: "Run a shell command (/bin/sh -c) in the project directory.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`),
		TimeoutSecs: 35,
	},
}

// resolve confines p (relative to the session directory, or absolute
// inside it) to the session directory. It returns the path to give the
// editor, which names buffers by the path it opened, and the path with
// symlinks resolved, for local reads.
func (ss *session) resolve(p string) (editorPath, real string, err error) {
	rel := p
	if filepath.IsAbs(p) {
		r, err := filepath.Rel(ss.cwd, filepath.Clean(p))
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", "", fmt.Errorf("%w: %q", builtin.ErrOutsideWorkspace, p)
		}
		rel = r
	}
	real, err = builtin.Confine(ss.cwd, rel)
	if err != nil {
		return "", "", err
	}
	return filepath.Join(ss.cwd, rel), real, nil
}

// editArgs are file_write's arguments.
type editArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
	Append  bool    `json:"append"`
}

// previewEdit returns the diff a file_write call would make, reading the
// old text through the editor when it can (to include unsaved changes),
// else from disk. ok is false when the arguments are not a valid edit.
func (s *server) previewEdit(ctx context.Context, ss *session, raw json.RawMessage) (diff acp.ToolCallContent, newText string, ok bool) {
	var a editArgs
	if json.Unmarshal(raw, &a) != nil || a.Path == "" || a.Content == nil {
		return acp.ToolCallContent{}, "", false
	}
	ep, real, err := ss.resolve(a.Path)
	if err != nil {
		return acp.ToolCallContent{}, "", false
	}
	old, exists := s.readOld(ctx, ss, ep, real)
	newText = *a.Content
	if a.Append {
		newText = old + newText
	}
	if !exists {
		return acp.ToolDiffContent(ep, newText), newText, true
	}
	return acp.ToolDiffContent(ep, newText, old), newText, true
}

// readOld returns a file's current text, or false if it has none.
func (s *server) readOld(ctx context.Context, ss *session, editorPath, real string) (string, bool) {
	if s.caps().Fs.ReadTextFile {
		rctx, cancel := context.WithTimeout(ctx, editorTimeout)
		defer cancel()
		resp, err := s.peer.ReadTextFile(rctx, acp.ReadTextFileRequest{SessionId: acp.SessionId(ss.id), Path: editorPath})
		if err != nil {
			return "", false
		}
		return resp.Content, true
	}
	data, err := os.ReadFile(real)
	if err != nil {
		return "", false
	}
	return string(data), true
}

// showDiff attaches the diff of a file_write call to its tool call.
func (s *server) showDiff(ctx context.Context, ss *session, c *tool.Call) {
	r := ss.currentRun()
	if r == nil {
		return
	}
	id, ok := r.claim(toolFileWrite, c.Args)
	if !ok {
		return
	}
	diff, _, ok := s.previewEdit(ctx, ss, c.Args)
	if !ok {
		return
	}
	r.markKeep(id)
	r.send(context.WithoutCancel(ctx), s.peer, acp.UpdateToolCall(id,
		acp.WithUpdateStatus(acp.ToolCallStatusInProgress),
		acp.WithUpdateContent([]acp.ToolCallContent{diff})))
}

// rebound is a daemon built-in run in the session's directory.
type rebound struct {
	s    *server
	ss   *session
	base tool.Tool
}

func (t *rebound) Spec() tool.Spec { return t.base.Spec() }

func (t *rebound) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	cc := *c
	cc.Workspace = t.ss.cwd
	if t.base.Spec().Name == toolFileWrite {
		t.s.showDiff(ctx, t.ss, &cc)
	}
	return t.base.Call(ctx, &cc)
}

// editorTool is a workspace tool served by the editor.
type editorTool struct {
	s    *server
	ss   *session
	spec tool.Spec
}

func (t *editorTool) Spec() tool.Spec { return t.spec }

func (t *editorTool) Call(ctx context.Context, c *tool.Call) (tool.Result, error) {
	switch t.spec.Name {
	case toolFileRead:
		return t.read(ctx, c)
	case toolFileWrite:
		return t.write(ctx, c)
	case toolShellExec:
		return t.shell(ctx, c)
	}
	return tool.Result{}, fmt.Errorf("editor tool %q: %w", t.spec.Name, tool.ErrUnknownTool)
}

func failed(format string, args ...any) tool.Result {
	return tool.Result{Content: fmt.Sprintf(format, args...), IsError: true}
}

// decodeStrict decodes arguments as the built-ins do: unknown fields are
// an error the model can correct.
func decodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid arguments: %v", err)
	}
	return nil
}

// editorErr is the readable part of an error the editor returned.
func editorErr(err error) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		if m, ok := re.Data.(map[string]any); ok {
			for _, k := range []string{"details", "error", "message"} {
				if s, ok := m[k].(string); ok && s != "" {
					return re.Message + ": " + s
				}
			}
		}
		return re.Message
	}
	return err.Error()
}

func (t *editorTool) read(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := decodeStrict(c.Args, &a); err != nil {
		return failed("%v", err), nil
	}
	if a.Path == "" {
		return failed("path is required"), nil
	}
	if a.Offset < 0 || a.Limit < 0 {
		return failed("offset and limit must be positive"), nil
	}
	ep, _, err := t.ss.resolve(a.Path)
	if err != nil {
		return failed("refused: %v", err), nil
	}
	req := acp.ReadTextFileRequest{SessionId: acp.SessionId(t.ss.id), Path: ep}
	if a.Offset > 0 {
		req.Line = acp.Ptr(a.Offset)
	}
	if a.Limit > 0 {
		req.Limit = acp.Ptr(a.Limit)
	}
	resp, err := t.s.peer.ReadTextFile(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return failed("%s: the editor could not read it: %s", a.Path, editorErr(err)), nil
	}
	if resp.Content == "" {
		return tool.Result{Content: "(empty file)"}, nil
	}
	return tool.Result{Content: resp.Content}, nil
}

func (t *editorTool) write(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a editArgs
	if err := decodeStrict(c.Args, &a); err != nil {
		return failed("%v", err), nil
	}
	if a.Path == "" {
		return failed("path is required"), nil
	}
	if a.Content == nil {
		return failed("content is required (use \"\" for an empty file)"), nil
	}
	ep, real, err := t.ss.resolve(a.Path)
	if err != nil {
		return failed("refused: %v", err), nil
	}
	// The old text comes through the editor, unsaved changes included.
	old, exists := t.s.readOld(ctx, t.ss, ep, real)
	newText := *a.Content
	if a.Append {
		if !exists {
			if _, statErr := os.Stat(real); statErr == nil {
				return failed("%s: the editor could not read the file to append to it", a.Path), nil
			}
		}
		newText = old + newText
	}
	diff := acp.ToolDiffContent(ep, newText)
	if exists {
		diff = acp.ToolDiffContent(ep, newText, old)
	}
	if r := t.ss.currentRun(); r != nil {
		if id, ok := r.claim(toolFileWrite, c.Args); ok {
			r.markKeep(id)
			r.send(context.WithoutCancel(ctx), t.s.peer, acp.UpdateToolCall(id,
				acp.WithUpdateStatus(acp.ToolCallStatusInProgress),
				acp.WithUpdateContent([]acp.ToolCallContent{diff})))
		}
	}
	if _, err := t.s.peer.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: acp.SessionId(t.ss.id), Path: ep, Content: newText}); err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return failed("%s: the editor could not write it: %s", a.Path, editorErr(err)), nil
	}
	rel, _ := filepath.Rel(t.ss.cwd, ep)
	rel = filepath.ToSlash(rel)
	verb := "wrote"
	if a.Append {
		verb = "appended"
	}
	out, _ := json.Marshal(map[string]any{"path": rel, "bytes": len(*a.Content)})
	return tool.Result{Content: fmt.Sprintf("%s %d bytes to %s", verb, len(*a.Content), rel), Structured: out}, nil
}

func (t *editorTool) shell(ctx context.Context, c *tool.Call) (tool.Result, error) {
	var a struct {
		Command string `json:"command"`
	}
	if err := decodeStrict(c.Args, &a); err != nil {
		return failed("%v", err), nil
	}
	if strings.TrimSpace(a.Command) == "" {
		return failed("command is required"), nil
	}
	sid := acp.SessionId(t.ss.id)
	created, err := t.s.peer.CreateTerminal(ctx, acp.CreateTerminalRequest{
		SessionId: sid, Command: "/bin/sh", Args: []string{"-c", a.Command},
		Cwd: acp.Ptr(t.ss.cwd), OutputByteLimit: acp.Ptr(terminalOutputLimit),
	})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return failed("the editor could not start a terminal: %s", editorErr(err)), nil
	}
	term := created.TerminalId
	// Clean-up must reach the editor even when the run was cancelled.
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), editorTimeout)
	defer cancel()
	defer func() {
		_, _ = t.s.peer.ReleaseTerminal(cleanup, acp.ReleaseTerminalRequest{SessionId: sid, TerminalId: term})
	}()
	if r := t.ss.currentRun(); r != nil {
		if id, ok := r.claim(toolShellExec, c.Args); ok {
			r.markKeep(id)
			r.send(context.WithoutCancel(ctx), t.s.peer, acp.UpdateToolCall(id,
				acp.WithUpdateStatus(acp.ToolCallStatusInProgress),
				acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolTerminalRef(term)})))
		}
	}
	exit, err := t.s.peer.WaitForTerminalExit(ctx, acp.WaitForTerminalExitRequest{SessionId: sid, TerminalId: term})
	if err != nil {
		_, _ = t.s.peer.KillTerminal(cleanup, acp.KillTerminalRequest{SessionId: sid, TerminalId: term})
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return failed("waiting for the command in the editor's terminal failed: %s", editorErr(err)), nil
	}
	out, err := t.s.peer.TerminalOutput(cleanup, acp.TerminalOutputRequest{SessionId: sid, TerminalId: term})
	if err != nil {
		return failed("the editor did not return the command's output: %s", editorErr(err)), nil
	}
	var b strings.Builder
	b.WriteString(out.Output)
	if out.Truncated {
		b.WriteString("\n[output truncated: only the last part is shown]")
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	isErr := false
	switch {
	case exit.Signal != nil:
		fmt.Fprintf(&b, "[killed by signal %s]", *exit.Signal)
		isErr = true
	case exit.ExitCode != nil:
		fmt.Fprintf(&b, "[exit code %d]", *exit.ExitCode)
		isErr = *exit.ExitCode != 0
	default:
		b.WriteString("[exit status unknown]")
	}
	code := -1
	if exit.ExitCode != nil {
		code = *exit.ExitCode
	}
	st, _ := json.Marshal(map[string]any{"exit_code": code, "truncated": out.Truncated})
	return tool.Result{Content: b.String(), IsError: isErr, Structured: st}, nil
}
