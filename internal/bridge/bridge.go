package bridge

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/agent"
)

// The MCP → A2A bridge serves A2A agents (the discovered external agents
// and agentd's own A2A-exposed agents) as MCP tools, one tools/call per
// A2A message, without flattening the task:
//
//   - the task streams: its status and artifact updates become MCP
//     progress notifications;
//   - an MCP cancellation cancels the A2A task;
//   - input-required becomes a form elicitation on initialize-era
//     sessions (2025-11-25 and older) and an input-required result
//     (SEP-2322) on 2026-07-28, when the client declared elicitation;
//     otherwise a tool result that says what the agent needs and how to
//     answer (call again with task_id);
//   - file artifacts become resource links (URLs) or embedded resources
//     (bytes), data parts stay JSON;
//   - every result carries the task_id and context_id (structured
//     content), which the task_id and context_id arguments take back to
//     continue the same task or conversation.

// LocalToolPrefix starts the MCP tool name of a local agent served over
// the bridge; external agents keep the names ToolName gives them.
const LocalToolPrefix = "a2a_local_"

// inputRequestID names the one input request of an input-required result.
const inputRequestID = "a2a_input"

const bridgeSchema = `{"type":"object","properties":{` +
	`"message":{"type":"string","description":"What to ask or tell the agent, with all the context it needs."},` +
	`"data":{"type":"object","description":"Structured input, sent as an A2A data part (for an MCP proxy agent: {\"target_mcp_server_id\", \"tool_name\", \"arguments\"})."},` +
	`"context_id":{"type":"string","description":"Continue the conversation of an earlier result: its context_id."},` +
	`"task_id":{"type":"string","description":"Answer a task that is waiting for input (state input-required): its task_id."}}}`

// BridgeOptions configure a Bridge.
type BridgeOptions struct {
	// Server serves agentd's own agents exposed over A2A; nil serves none.
	Server *a2aedge.Server
	// Kernel lists those agents and says when they change; required with
	// Server.
	Kernel *agent.Kernel
	// Client serves the discovered external agents; nil serves none.
	Client *a2aedge.Client
	// Key signs the requestState of input-required results (2026-07-28
	// clients echo it back, to any replica). Replicas must share it; nil
	// means a random key of this process's own.
	Key    []byte
	Logger *slog.Logger
}

// Bridge serves A2A agents as MCP tools. An MCP server edge lists
// MCPTools, routes their calls to CallMCPTool and re-lists on OnChange.
type Bridge struct {
	opts BridgeOptions
	log  *slog.Logger
	key  []byte // signs the requestState of input-required results

	mu       sync.Mutex
	watchers map[int]func()
	next     int
	closed   bool
	unwatch  func()
}

// NewBridge returns a bridge over the server's agents and the client's.
func NewBridge(opts BridgeOptions) *Bridge {
	b := &Bridge{opts: opts, log: orDiscard(opts.Logger), key: opts.Key, watchers: map[int]func(){}}
	if len(b.key) == 0 {
		b.key = make([]byte, 32)
		_, _ = rand.Read(b.key)
	}
	if opts.Server != nil {
		b.unwatch = opts.Kernel.Agents().OnChange(b.changed)
	}
	if opts.Client != nil {
		opts.Client.OnToolsChanged(b.changed)
	}
	return b
}

// Close stops following changes.
func (b *Bridge) Close() error {
	b.mu.Lock()
	b.closed = true
	unwatch := b.unwatch
	b.unwatch = nil
	b.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
	return nil
}

// OnChange registers f, called when the tool list may have changed (an
// external agent was discovered, a local agent added or changed). f must
// not block.
func (b *Bridge) OnChange(f func()) (cancel func()) {
	b.mu.Lock()
	id := b.next
	b.next++
	b.watchers[id] = f
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.watchers, id)
		b.mu.Unlock()
	}
}

func (b *Bridge) changed() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	fs := make([]func(), 0, len(b.watchers))
	for _, f := range b.watchers {
		fs = append(fs, f)
	}
	b.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// bridgeTarget is one agent served as a tool.
type bridgeTarget struct {
	tool  string
	agent string // the local agent's name, or the external agent's configured name
	where string // "local", or the external agent's URL
	peer  peer
	// card returns the agent's card; a local card is built on demand
	// (a proxy agent's lists the MCP tools it reaches), not per call.
	card func() *a2a.AgentCard
}

// targets lists the agents the bridge serves: local agents first, then
// external ones; a name taken twice goes to the first.
func (b *Bridge) targets(ctx context.Context) ([]bridgeTarget, error) {
	var out []bridgeTarget
	taken := map[string]bool{}
	if s := b.opts.Server; s != nil {
		entries, err := b.opts.Kernel.Agents().List(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			m := e.Manifest
			if !m.Expose.A2A {
				continue
			}
			name := LocalToolPrefix + strings.TrimPrefix(a2aedge.ToolName(m.Name), "a2a_")
			if taken[name] {
				continue
			}
			taken[name] = true
			out = append(out, bridgeTarget{tool: name, agent: m.Name, where: "local", peer: localPeer{s, m.Name},
				card: func() *a2a.AgentCard { return s.Card("", m) }})
		}
	}
	if c := b.opts.Client; c != nil {
		for _, st := range c.Agents() {
			if !st.Discovered || taken[st.Tool] {
				continue
			}
			taken[st.Tool] = true
			card := st.Card
			out = append(out, bridgeTarget{tool: st.Tool, agent: st.Name, where: st.URL, peer: remotePeer{c, st.Name},
				card: func() *a2a.AgentCard { return card }})
		}
	}
	return out, nil
}

// MCPTools returns one tool per agent the bridge serves.
func (b *Bridge) MCPTools(ctx context.Context) ([]*mcp.Tool, error) {
	targets, err := b.targets(ctx)
	if err != nil {
		return nil, fmt.Errorf("list a2a agents for mcp: %w", err)
	}
	out := make([]*mcp.Tool, 0, len(targets))
	for _, t := range targets {
		card := t.card()
		out = append(out, &mcp.Tool{
			Name:        t.tool,
			Title:       card.Name,
			Description: t.description(card),
			InputSchema: json.RawMessage(bridgeSchema),
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: ptr(t.where != "local")},
		})
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }

func (t bridgeTarget) description(card *a2a.AgentCard) string {
	var b strings.Builder
	if t.where == "local" {
		fmt.Fprintf(&b, "Send a message to agentd's agent %q over A2A. ", t.agent)
	} else {
		fmt.Fprintf(&b, "Send a message to the remote A2A agent %q (%s). ", card.Name, t.where)
	}
	b.WriteString(strings.TrimSpace(card.Description))
	for i, s := range card.Skills {
		if i == 0 {
			b.WriteString(" Skills:")
		}
		fmt.Fprintf(&b, " %s: %s;", s.Name, firstLineOf(s.Description))
	}
	b.WriteString(" Each call is one A2A task; the result's structured content holds task_id, context_id and state. " +
		"Pass context_id to continue the conversation, or task_id to answer a task waiting for input.")
	return truncate(b.String(), 2000)
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// find resolves a tool name.
func (b *Bridge) find(ctx context.Context, name string) (bridgeTarget, bool, error) {
	targets, err := b.targets(ctx)
	if err != nil {
		return bridgeTarget{}, false, err
	}
	for _, t := range targets {
		if t.tool == name {
			return t, true, nil
		}
	}
	return bridgeTarget{}, false, nil
}

// bridgeArgs are a bridge tool's arguments.
type bridgeArgs struct {
	Message   string         `json:"message"`
	Data      map[string]any `json:"data"`
	ContextID string         `json:"context_id"`
	TaskID    string         `json:"task_id"`
}

// CallMCPTool serves a tools/call of one of the bridge's tools.
func (b *Bridge) CallMCPTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	t, ok, err := b.find(ctx, req.Params.Name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no A2A agent serves tool %q (any more)", req.Params.Name)}
	}
	var args bridgeArgs
	if raw := bytes.TrimSpace(req.Params.Arguments); len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return errorResult(fmt.Sprintf(`invalid arguments (%v): want {"message": string, "data"?: object, "context_id"?: string, "task_id"?: string}`, err), nil), nil
		}
	}
	var msg *a2a.Message
	if state := req.Params.RequestState; state != "" {
		// The retry of an input-required result (2026-07-28): the answer
		// goes to the task the state names.
		st, err := b.open(state, t.tool)
		if err != nil {
			return errorResult("the answer came with an unknown or expired requestState ("+err.Error()+"); call again with the task_id and your answer as message", nil), nil
		}
		tv := &taskView{id: a2a.TaskID(st.Task), contextID: st.Context, state: a2a.TaskStateInputRequired}
		ans, _ := req.Params.InputResponses[inputRequestID].(*mcp.ElicitResult)
		var res *mcp.CallToolResult
		if msg, res = answerMessage(t, tv, st.Kind, ans); res != nil {
			return res, nil
		}
	} else {
		if strings.TrimSpace(args.Message) == "" && args.Data == nil {
			return errorResult(`give a message (or data) for the agent: {"message": string}`, nil), nil
		}
		var parts a2a.ContentParts
		if args.Message != "" {
			parts = append(parts, a2a.NewTextPart(args.Message))
		}
		if args.Data != nil {
			parts = append(parts, a2a.NewDataPart(args.Data))
		}
		msg = a2a.NewMessage(a2a.MessageRoleUser, parts...)
		msg.ContextID, msg.TaskID = args.ContextID, a2a.TaskID(args.TaskID)
	}
	return b.converse(ctx, req, t, msg)
}

// converse sends msg and follows the task until it ends or needs input;
// input is asked of the MCP client by elicitation while it can answer.
func (b *Bridge) converse(ctx context.Context, req *mcp.CallToolRequest, t bridgeTarget, msg *a2a.Message) (*mcp.CallToolResult, error) {
	n := newNotifier(req)
	for {
		tv, err := b.run(ctx, t, msg, n)
		if ctx.Err() != nil {
			// The MCP client cancelled (or went away): so does the task.
			if tv.id != "" && !tv.state.Terminal() {
				b.cancelTask(ctx, t, tv.id)
			}
			return nil, ctx.Err()
		}
		if err != nil {
			return errorResult(fmt.Sprintf("A2A agent %q failed: %v", t.agent, err), tv.structured(t, nil)), nil
		}
		if tv.state != a2a.TaskStateInputRequired {
			return tv.result(t), nil
		}
		kind, params := questionOf(tv)
		switch inputMode(req) {
		case modeInputRequests:
			st := requestState{Tool: t.tool, Task: string(tv.id), Context: tv.contextID, Kind: kind}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputRequestID: params}, RequestState: b.seal(st)}, nil
		case modeElicit:
			ans, err := req.Session.Elicit(ctx, params)
			if err != nil {
				if ctx.Err() != nil {
					b.cancelTask(ctx, t, tv.id)
					return nil, ctx.Err()
				}
				b.log.Debug("elicitation failed; answering with the question", "tool", t.tool, "err", err)
				return tv.needsInput(t, ""), nil
			}
			var res *mcp.CallToolResult
			if msg, res = answerMessage(t, tv, kind, ans); res != nil {
				return res, nil
			}
		default:
			return tv.needsInput(t, ""), nil
		}
	}
}

// namingGrace bounds how long a cancelled call waits for its stream to
// name the task it started, so that the task can be cancelled too.
const namingGrace = 10 * time.Second

// cancelTask cancels the A2A task after the MCP call ended.
func (b *Bridge) cancelTask(ctx context.Context, t bridgeTarget, id a2a.TaskID) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := t.peer.cancel(cctx, id); err != nil {
		b.log.Warn("cancel a2a task after the mcp call was cancelled", "tool", t.tool, "task", id, "err", err)
	}
}

// run sends msg and follows the task until it ends or needs input: by
// its stream, then by polling if the stream ended first (an agent that
// does not stream answers a blocking send with a task still working).
func (b *Bridge) run(ctx context.Context, t bridgeTarget, msg *a2a.Message, n *notifier) (*taskView, error) {
	tv := &taskView{id: msg.TaskID, contextID: msg.ContextID}
	// The stream outlives a cancelled call until it has named the task
	// (for at most namingGrace): the agent may have started the task
	// before the cancellation, and converse can cancel it only by its id.
	// Following the caller's context, the task would run on, orphaned.
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	var named atomic.Bool
	named.Store(tv.id != "")
	var grace atomic.Pointer[time.Timer]
	defer func() {
		if tm := grace.Load(); tm != nil {
			tm.Stop()
		}
	}()
	defer context.AfterFunc(ctx, func() {
		if named.Load() {
			stop()
			return
		}
		grace.Store(time.AfterFunc(namingGrace, stop))
	})()
	for ev, err := range t.peer.stream(sctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			if ctx.Err() != nil {
				return tv, ctx.Err()
			}
			return tv, err
		}
		tv.apply(ctx, ev, n)
		if tv.id != "" {
			named.Store(true)
			if ctx.Err() != nil {
				return tv, ctx.Err()
			}
		}
	}
	if ctx.Err() != nil {
		return tv, ctx.Err()
	}
	delay := 100 * time.Millisecond
	for tv.id != "" && !a2aedge.Settled(tv.state) {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return tv, ctx.Err()
		}
		delay = min(delay*2, 2*time.Second)
		task, err := t.peer.get(ctx, tv.id)
		if err != nil {
			return tv, err
		}
		tv.apply(ctx, task, n)
	}
	if tv.state == a2a.TaskStateUnspecified {
		return tv, errors.New("the agent answered nothing")
	}
	return tv, nil
}

// taskView is what the bridge knows of a task from its events.
type taskView struct {
	id        a2a.TaskID
	contextID string
	state     a2a.TaskState
	status    *a2a.Message
	artifacts []*a2a.Artifact
}

// apply folds an event into the view and reports progress.
func (tv *taskView) apply(ctx context.Context, ev a2a.Event, n *notifier) {
	switch v := ev.(type) {
	case *a2a.Task:
		prev := tv.state
		tv.id, tv.contextID, tv.state, tv.status = v.ID, v.ContextID, v.Status.State, v.Status.Message
		tv.artifacts = slices.Clone(v.Artifacts)
		if v.Status.State != prev {
			n.say(ctx, stateName(v.Status.State)+messageSuffix(v.Status.Message))
		}
	case *a2a.Message:
		// A direct reply is a completed exchange.
		tv.id, tv.contextID, tv.state, tv.status = v.TaskID, v.ContextID, a2a.TaskStateCompleted, v
	case *a2a.TaskStatusUpdateEvent:
		tv.id, tv.contextID, tv.state = v.TaskID, v.ContextID, v.Status.State
		if v.Status.Message != nil || v.Status.State.Terminal() {
			tv.status = v.Status.Message
		}
		n.say(ctx, stateName(v.Status.State)+messageSuffix(v.Status.Message))
	case *a2a.TaskArtifactUpdateEvent:
		tv.id, tv.contextID = v.TaskID, v.ContextID
		tv.addArtifact(v.Artifact, v.Append)
		if text := partsText(v.Artifact.Parts); text != "" {
			n.say(ctx, text)
		}
	}
}

func (tv *taskView) addArtifact(a *a2a.Artifact, appendParts bool) {
	if a == nil {
		return
	}
	for i, old := range tv.artifacts {
		if old.ID == a.ID {
			if appendParts {
				merged := *old
				merged.Parts = append(slices.Clone(old.Parts), a.Parts...)
				tv.artifacts[i] = &merged
			} else {
				tv.artifacts[i] = a
			}
			return
		}
	}
	tv.artifacts = append(tv.artifacts, a)
}

func messageSuffix(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	if text := partsText(m.Parts); text != "" {
		return ": " + text
	}
	return ""
}

// partsText is the text of parts: text as is, data as JSON, files named.
func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	a2aedge.WriteParts(&b, parts)
	return b.String()
}

// stateName is a task state as A2A's JSON spells it ("input-required").
func stateName(s a2a.TaskState) string {
	if s == a2a.TaskStateUnspecified {
		return "unknown"
	}
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(string(s), "TASK_STATE_"), "_", "-"))
}

// structured is the result's structured content: the ids that continue
// the task or the conversation, its state, and extra fields.
func (tv *taskView) structured(t bridgeTarget, extra map[string]any) map[string]any {
	out := map[string]any{"agent": t.agent, "state": stateName(tv.state)}
	if tv.id != "" {
		out["task_id"] = string(tv.id)
	}
	if tv.contextID != "" {
		out["context_id"] = tv.contextID
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// result renders a settled task: its text (artifacts, else the status
// message), files as resource links or embedded resources, data parts in
// the structured content too.
func (tv *taskView) result(t bridgeTarget) *mcp.CallToolResult {
	parts := a2a.ContentParts{}
	for _, a := range tv.artifacts {
		parts = append(parts, a.Parts...)
	}
	if len(parts) == 0 && tv.status != nil {
		parts = tv.status.Parts
	}
	var text strings.Builder
	var files []mcp.Content
	var data []any
	for i, p := range parts {
		switch v := p.Content.(type) {
		case a2a.Text:
			text.WriteString(string(v))
		case a2a.Data:
			d, _ := json.Marshal(v.Value)
			text.Write(d)
			data = append(data, v.Value)
		case a2a.URL:
			files = append(files, &mcp.ResourceLink{URI: string(v), Name: orDefault(p.Filename, fmt.Sprintf("file-%d", i+1)), MIMEType: p.MediaType})
		case a2a.Raw:
			files = append(files, embedded(tv.id, i, p, v))
		}
	}
	extra := map[string]any{}
	if len(data) > 0 {
		extra["data"] = data
	}
	if tv.state != a2a.TaskStateCompleted && tv.status != nil && len(tv.artifacts) > 0 {
		extra["status_message"] = partsText(tv.status.Parts)
	}
	sc := tv.structured(t, extra)
	res := &mcp.CallToolResult{StructuredContent: sc, IsError: tv.state == a2a.TaskStateFailed || tv.state == a2a.TaskStateRejected || tv.state == a2a.TaskStateCanceled}
	body := text.String()
	if body == "" {
		body = fmt.Sprintf("(the task ended %s without a text answer)", stateName(tv.state))
		if tv.state == a2a.TaskStateAuthRequired {
			body = "The agent needs authentication it can only get outside this call."
		}
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: body})
	res.Content = append(res.Content, files...)
	// The structured content repeated as text, as the spec advises, so
	// clients without structured output still see the ids.
	res.Content = append(res.Content, &mcp.TextContent{Text: string(mustMarshal(sc))})
	return res
}

// embedded is a byte artifact as an embedded resource: text types as
// text, anything else as a blob.
func embedded(task a2a.TaskID, i int, p *a2a.Part, raw a2a.Raw) mcp.Content {
	uri := fmt.Sprintf("agentd://a2a/tasks/%s/files/%d", url.PathEscape(string(task)), i+1)
	if p.Filename != "" {
		uri += "/" + url.PathEscape(p.Filename)
	}
	rc := &mcp.ResourceContents{URI: uri, MIMEType: p.MediaType}
	if strings.HasPrefix(p.MediaType, "text/") || p.MediaType == "application/json" {
		rc.Text = string(raw)
	} else {
		rc.Blob = []byte(raw)
	}
	return &mcp.EmbeddedResource{Resource: rc}
}

// needsInput is the result for a client that cannot be asked: what the
// agent needs, and how to answer on the same task.
func (tv *taskView) needsInput(t bridgeTarget, note string) *mcp.CallToolResult {
	question := "(no question given)"
	if tv.status != nil {
		if q := partsText(tv.status.Parts); q != "" {
			question = q
		}
	}
	text := fmt.Sprintf("The agent is waiting for input (task %s is input-required): %s\n"+
		"To answer, call %s again with task_id %q, context_id %q and your answer as message.", tv.id, question, t.tool, tv.id, tv.contextID)
	if note != "" {
		text = note + " " + text
	}
	sc := tv.structured(t, map[string]any{"question": question})
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: string(mustMarshal(sc))}},
		StructuredContent: sc,
	}
}

func errorResult(msg string, sc map[string]any) *mcp.CallToolResult {
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
	if sc != nil {
		r.StructuredContent = sc
	}
	return r
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Kinds of question an input-required task asks, by its data part.
const (
	questionText      = "text"      // anything: answered with text
	questionApproval  = "approval"  // agentd's approval_request: answered {"approved": bool}
	questionArguments = "arguments" // agentd's proxy arguments_required: answered {"arguments": {...}}
)

// questionOf turns the task's question into a form elicitation: a yes/no
// for agentd's approvals, a form of the missing arguments for its MCP
// proxy, else one text field.
func questionOf(tv *taskView) (string, *mcp.ElicitParams) {
	var text string
	var data map[string]any
	if tv.status != nil {
		for _, p := range tv.status.Parts {
			switch v := p.Content.(type) {
			case a2a.Text:
				text += string(v)
			case a2a.Data:
				data, _ = v.Value.(map[string]any)
			}
		}
	}
	if text == "" {
		text = "The agent needs more input."
	}
	switch data["type"] {
	case "approval_request":
		return questionApproval, &mcp.ElicitParams{Message: text, RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"approved": map[string]any{"type": "boolean", "title": "Allow it"}},
			"required":   []any{"approved"},
		}}
	case "arguments_required":
		if props, ok := primitiveProps(data); ok {
			return questionArguments, &mcp.ElicitParams{Message: text, RequestedSchema: map[string]any{
				"type": "object", "properties": props, "required": data["missing"],
			}}
		}
	}
	return questionText, &mcp.ElicitParams{Message: text, RequestedSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"reply": map[string]any{"type": "string", "title": "Your answer"}},
		"required":   []any{"reply"},
	}}
}

// primitiveProps picks the missing arguments' schemas out of a proxy
// question; elicitation forms take only flat primitive fields.
func primitiveProps(q map[string]any) (map[string]any, bool) {
	missing, _ := q["missing"].([]any)
	schema, _ := q["input_schema"].(map[string]any)
	all, _ := schema["properties"].(map[string]any)
	if len(missing) == 0 {
		return nil, false
	}
	out := map[string]any{}
	for _, m := range missing {
		name, _ := m.(string)
		p, _ := all[name].(map[string]any)
		typ, _ := p["type"].(string)
		switch typ {
		case "string", "number", "integer", "boolean":
		default:
			return nil, false
		}
		field := map[string]any{"type": typ}
		for _, k := range []string{"title", "description", "enum", "minimum", "maximum", "default"} {
			if v, ok := p[k]; ok {
				field[k] = v
			}
		}
		out[name] = field
	}
	return out, true
}

// answerMessage turns an elicitation answer into the next message on the
// task; a declined or dismissed question ends the call with the task
// still waiting, so the client can answer later.
func answerMessage(t bridgeTarget, tv *taskView, kind string, ans *mcp.ElicitResult) (*a2a.Message, *mcp.CallToolResult) {
	if ans == nil || ans.Action != "accept" {
		action := "gave no answer"
		if ans != nil && ans.Action != "" {
			action = ans.Action + "d"
			if ans.Action == "cancel" {
				action = "dismissed the question"
			}
		}
		return nil, tv.needsInput(t, "You "+action+"; the task still waits.")
	}
	var part *a2a.Part
	switch kind {
	case questionApproval:
		ok, _ := ans.Content["approved"].(bool)
		part = a2a.NewDataPart(map[string]any{"approved": ok})
	case questionArguments:
		part = a2a.NewDataPart(map[string]any{"arguments": ans.Content})
	default:
		reply, _ := ans.Content["reply"].(string)
		part = a2a.NewTextPart(reply)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, part)
	msg.TaskID, msg.ContextID = tv.id, tv.contextID
	return msg, nil
}

// How a question reaches the MCP client.
const (
	modeResult        = iota // a tool result saying what is needed
	modeElicit               // elicitation/create, now (initialize-era sessions)
	modeInputRequests        // an input-required result (2026-07-28)
)

// inputMode picks how to ask: only clients that declared elicitation are
// asked; 2026-07-28 has no server-to-client requests, so those get an
// input-required result; older sessions are asked directly, which lets a
// task ask more than once within one call.
func inputMode(req *mcp.CallToolRequest) int {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || req.Session == nil {
		return modeResult
	}
	if req.ProtocolVersion() >= "2026-07-28" {
		return modeInputRequests
	}
	return modeElicit
}

// requestState is what an input-required result asks the client to echo.
type requestState struct {
	Tool    string `json:"tool"`
	Task    string `json:"task"`
	Context string `json:"context"`
	Kind    string `json:"kind"`
}

// seal encodes st with a MAC, so a client cannot forge the state of a
// question it was never asked (2026-07-28 asks unauthenticated servers to
// sign it).
func (b *Bridge) seal(st requestState) string {
	payload := base64.RawURLEncoding.EncodeToString(mustMarshal(st))
	mac := hmac.New(sha256.New, b.key)
	mac.Write([]byte(payload))
	return payload + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// open checks and decodes a sealed state for tool.
func (b *Bridge) open(s, tool string) (requestState, error) {
	payload, sig, ok := strings.Cut(s, ".")
	if !ok {
		return requestState{}, errors.New("malformed")
	}
	mac := hmac.New(sha256.New, b.key)
	mac.Write([]byte(payload))
	// The signature is compared as text, as seal wrote it: decoding it
	// first would accept one signature spelled several ways (base64
	// skips CR and LF even in Strict mode), which FuzzRequestState found.
	if !hmac.Equal([]byte(sig), []byte(base64.RawURLEncoding.EncodeToString(mac.Sum(nil)))) {
		return requestState{}, errors.New("not issued by this daemon (or it restarted since)")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(payload)
	var st requestState
	if err != nil || json.Unmarshal(raw, &st) != nil || st.Tool != tool || st.Task == "" {
		return requestState{}, errors.New("not for this tool")
	}
	return st, nil
}

// notifier sends MCP progress notifications when the client asked for
// them (it sent a progress token).
type notifier struct {
	ss    *mcp.ServerSession
	token any
	n     float64
}

// newNotifier returns nil when nobody listens; a nil *notifier says
// nothing.
func newNotifier(req *mcp.CallToolRequest) *notifier {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return nil
	}
	return &notifier{ss: req.Session, token: token}
}

func (n *notifier) say(ctx context.Context, msg string) {
	if n == nil || msg == "" || ctx.Err() != nil {
		return
	}
	n.n++
	_ = n.ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: n.token, Progress: n.n, Message: truncate(msg, 500)})
}

// peer is an A2A agent the bridge talks to.
type peer interface {
	stream(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error]
	get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error)
	cancel(ctx context.Context, id a2a.TaskID) error
}

// localPeer is one of agentd's agents, through the A2A server's own
// request handler: the tasks are the ones its A2A clients see.
type localPeer struct {
	s     *a2aedge.Server
	agent string
}

func (p localPeer) stream(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return p.s.SendStreamingMessage(ctx, p.agent, req)
}

func (p localPeer) get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	return p.s.GetTask(ctx, p.agent, id)
}

func (p localPeer) cancel(ctx context.Context, id a2a.TaskID) error {
	return p.s.CancelTask(ctx, p.agent, id)
}

// remotePeer is a discovered external agent, through the client.
type remotePeer struct {
	c      *a2aedge.Client
	target string
}

func (p remotePeer) stream(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return p.c.StreamMessage(ctx, p.target, req)
}

func (p remotePeer) get(ctx context.Context, id a2a.TaskID) (*a2a.Task, error) {
	return p.c.GetTask(ctx, p.target, string(id))
}

func (p remotePeer) cancel(ctx context.Context, id a2a.TaskID) error {
	_, err := p.c.CancelTask(ctx, p.target, string(id))
	return err
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
