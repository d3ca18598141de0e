package tool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/policy"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
)

// AuditLog receives one record per call. store.AuditStore satisfies it.
type AuditLog interface {
	AppendAudit(ctx context.Context, r store.AuditRecord) (int64, error)
}

// ApprovalRequest is a question the pipeline asks a human through whatever
// edge started the run.
type ApprovalRequest struct {
	Agent     string          `json:"agent"`
	SessionID string          `json:"session_id,omitempty"`
	CallID    string          `json:"call_id,omitempty"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args,omitempty"`
	Reason    string          `json:"reason"`
	// Principal names who started the run; it (or an admin) may decide.
	Principal string `json:"principal,omitempty"`
}

// Approver answers approval requests. Edges implement it: ACP asks the
// editor, A2A asks its client (input-required), MCP elicits when the
// client can; where the edge cannot ask, RunnerOptions.Operator answers
// (the dashboard's queue), and without one the call is denied.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (bool, error)
}

// Answer is an approval's outcome and who gave it.
type Answer struct {
	Approved bool
	// By names the principal that answered; "" when unknown.
	By string
}

// AnsweringApprover is an Approver that knows who answered: one whose
// questions reach more than the run's own connection (an A2A task, which
// an admin may answer too; the operator's queue). The audit record of the
// call then names the answerer, so an approval is never put on the run's
// principal when someone else gave it.
type AnsweringApprover interface {
	Approver
	ApproveAnswer(ctx context.Context, req ApprovalRequest) (Answer, error)
}

// QueueingApprover is an AnsweringApprover that queues a request for
// someone else to decide (the operator's Approvals) and can say when it
// waits, with the id the decision is made with.
type QueueingApprover interface {
	AnsweringApprover
	// ApproveQueued is ApproveAnswer calling queued (if not nil) once
	// the request waits, before waiting.
	ApproveQueued(ctx context.Context, req ApprovalRequest, queued func(PendingApproval)) (Answer, error)
}

// ApproverFunc adapts a function to Approver.
type ApproverFunc func(ctx context.Context, req ApprovalRequest) (bool, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req ApprovalRequest) (bool, error) {
	return f(ctx, req)
}

// Lookup finds tools by name and lists them. *Registry satisfies it.
type Lookup interface {
	List() []Tool
	Lookup(name string) (Tool, bool)
}

// RunnerOptions configures a Runner. Zero values take the defaults.
type RunnerOptions struct {
	Timeout        time.Duration  // default 60 s
	Timeouts       map[string]int // per tool name, seconds
	MaxResultChars int            // default 50,000
	// MaxImageBytes caps the images one result shows the model, in
	// total; default 5 MiB (the largest image Anthropic's API takes).
	MaxImageBytes int
	LoopGuard     int      // the Nth identical consecutive call is refused; default 3
	Audit         AuditLog // nil = no audit (tests only)
	// AuditAhead, when set, is told +1 when a call enters the pipeline
	// and -1 just before its record is appended, so that a group-
	// committing audit log knows records are coming and can let them
	// join the commit (auditlog.Writer.Ahead).
	AuditAhead func(delta int)
	// Operator answers approval requests of runs whose edge cannot ask
	// (a scope without an Approver): the dashboard's Approvals. nil =
	// such calls are denied at once.
	Operator Approver
	Logger   *slog.Logger
	// Meter records agentd.tool.calls and agentd.tool.call.duration; nil
	// records nothing (and costs nothing).
	Meter metric.MeterProvider
	// Tracer starts an execute_tool span per call, carrying the policy
	// decision and the outcome; nil starts none.
	Tracer trace.TracerProvider
	// CaptureContent puts the call's arguments on its span.
	CaptureContent bool
}

// Runner is the one pipeline every tool call passes through.
type Runner struct {
	tools Lookup
	opts  RunnerOptions
	log   *slog.Logger
	obs   *observer // nil when neither metrics nor traces are on
}

// NewRunner returns a runner over tools.
func NewRunner(tools Lookup, opts RunnerOptions) *Runner {
	if opts.Timeout <= 0 {
		opts.Timeout = 60 * time.Second
	}
	if opts.MaxResultChars <= 0 {
		opts.MaxResultChars = 50_000
	}
	if opts.MaxImageBytes <= 0 {
		opts.MaxImageBytes = DefaultMaxImageBytes
	}
	if opts.LoopGuard <= 0 {
		opts.LoopGuard = 3
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{tools: tools, opts: opts, log: log, obs: newObserver(opts)}
}

// ScopeParams describe the run a Scope serves.
type ScopeParams struct {
	Agent     string
	SessionID string
	// Principal is who the calls are made for: its own tool policy
	// (deny_tools, ask_tools) applies, and the audit log names it.
	Principal *principal.Principal
	Workspace string
	Depth     int
	Rules     *policy.Rules
	Approver  Approver
	// Extra tools visible to this run only (an editor's MCP servers or
	// file system); they take precedence over registry tools.
	Extra []Tool
	// Tainted starts the scope with untrusted data already in context
	// (a resumed session that saw untrusted results).
	Tainted bool
	// OnQueued, if set, is called when a call of this scope waits in the
	// operator's queue (no Approver, so RunnerOptions.Operator decides),
	// with the request's id: the run announces it on its event stream, so
	// a client that can ask a person (agentd chat, the dashboard's chat)
	// does, instead of waiting silently. It must not block.
	OnQueued func(PendingApproval)

	// CancelledBy names who a call's plain cancellation comes from (an
	// edge whose SDK cancels a request without a cause: "the MCP client"),
	// for the audit log. A context cancelled with a *CancelledError cause
	// names its canceller itself.
	CancelledBy string
}

// CancelledError is the cause a caller cancels a run's or a call's
// context with: who cancelled, for the audit log.
type CancelledError struct{ By string }

func (e *CancelledError) Error() string { return "cancelled by " + e.By }

// Unwrap makes it a context.Canceled.
func (e *CancelledError) Unwrap() error { return context.Canceled }

// Scope is the runner bound to one run: it tracks taint and the loop guard
// across the run's calls. It is safe for concurrent calls.
type Scope struct {
	r *Runner
	p ScopeParams

	mu       sync.Mutex
	tainted  bool
	lastCall string
	repeats  int
	always   map[string]bool // tools approved "always" in this scope
}

// Scope starts a scope for one run.
func (r *Runner) Scope(p ScopeParams) *Scope {
	if p.Rules == nil {
		p.Rules = &policy.Rules{}
	}
	return &Scope{r: r, p: p, tainted: p.Tainted, always: map[string]bool{}}
}

// Tainted reports whether untrusted data has entered the run.
func (s *Scope) Tainted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tainted
}

// Specs returns the tools this agent may see, sorted by name.
func (s *Scope) Specs() []Spec {
	var out []Spec
	seen := map[string]bool{}
	add := func(t Tool) {
		sp := t.Spec()
		if seen[sp.Name] {
			return
		}
		seen[sp.Name] = true
		if s.p.Rules.Sees(policy.Call{Tool: sp.Name, Server: sp.Server}) {
			out = append(out, sp)
		}
	}
	for _, t := range s.p.Extra {
		add(t)
	}
	for _, t := range s.r.tools.List() {
		add(t)
	}
	return out
}

// Defs returns Specs as model tool definitions.
func (s *Scope) Defs() []llm.ToolDef {
	specs := s.Specs()
	defs := make([]llm.ToolDef, len(specs))
	for i, sp := range specs {
		defs[i] = llm.ToolDef{Name: sp.Name, Description: sp.Description, InputSchema: sp.InputSchema}
	}
	return defs
}

func (s *Scope) lookup(name string) (Tool, bool) {
	for _, t := range s.p.Extra {
		if t.Spec().Name == name {
			return t, true
		}
	}
	return s.r.tools.Lookup(name)
}

// Outcome is the result of one call through the pipeline.
type Outcome struct {
	Result llm.ToolResult
	// Structured is the tool's machine-readable output, if any.
	Structured json.RawMessage
	Untrusted  bool
	Decision   string // allow, deny, approved, rejected
	Duration   time.Duration
	// unknown marks a call of a tool that does not exist: its name came
	// from the model and must not become a metric label.
	unknown bool
	// digest is Digest of the call, once the loop guard has made it; the
	// audit record reuses it.
	digest string
	// answeredBy names who approved or rejected the call, when the
	// approver knows (AnsweringApprover).
	answeredBy string
	// cancelled says who or what cancelled the call; empty unless it was.
	cancelled string
	// detail is the first line of an error result before it was marked
	// untrusted, for the audit log.
	detail string
}

// outcome classifies a finished call for the audit log and metrics: ok,
// error, denied or cancelled.
func (o *Outcome) outcome() string {
	switch {
	case o.Decision == "deny" || o.Decision == "rejected":
		return "denied"
	case o.cancelled != "":
		return "cancelled"
	case o.Result.IsError:
		return "error"
	}
	return "ok"
}

// Call runs one tool call through the pipeline. It never returns an error:
// every failure becomes an error result the model can read, so a denied or
// broken call never crashes the run.
func (s *Scope) Call(ctx context.Context, call llm.ToolCall, progress func(msg string, progress, total float64)) Outcome {
	return s.Do(ctx, Request{Call: call, Progress: progress})
}

// Request is one call through the pipeline with what an edge passes
// along beyond the model's tool call.
type Request struct {
	Call llm.ToolCall
	// Progress receives the tool's intermediate status; nil drops it.
	Progress func(msg string, progress, total float64)
	// Relay is handed to the tool as Call.Relay (see Relay).
	Relay Relay
}

// Do is Call for a Request.
func (s *Scope) Do(ctx context.Context, req Request) Outcome {
	call, progress := req.Call, req.Progress
	start := time.Now()
	if progress == nil {
		progress = func(string, float64, float64) {}
	}
	var span trace.Span
	if s.r.obs != nil {
		ctx, span = s.r.obs.start(ctx, s, call)
	}
	arriving := s.auditAhead()
	defer arriving() // a tool that panics
	out := s.call(ctx, call, progress, req.Relay)
	out.Duration = time.Since(start)
	out.Result.CallID = call.ID
	out.Result.Name = call.Name
	arriving()
	s.audit(ctx, call, out)
	if s.r.obs != nil {
		s.r.obs.end(ctx, span, call, out)
	}
	return out
}

// auditAhead tells RunnerOptions.AuditAhead that a call's record is
// coming, and returns what tells it the record is arriving (once, however
// often it is called).
func (s *Scope) auditAhead() func() {
	ahead := s.r.opts.AuditAhead
	if ahead == nil || s.r.opts.Audit == nil {
		return func() {}
	}
	ahead(1)
	done := false
	return func() {
		if !done {
			done = true
			ahead(-1)
		}
	}
}

func (s *Scope) call(ctx context.Context, call llm.ToolCall, progress func(string, float64, float64), relay Relay) Outcome {
	t, ok := s.lookup(call.Name)
	if !ok {
		out := refused("deny", fmt.Sprintf("unknown tool %q: it does not exist or its server is disconnected", call.Name))
		out.unknown = true
		return out
	}
	spec := t.Spec()
	args := call.Arguments
	empty := len(bytes.TrimSpace(args)) == 0
	if empty {
		args = json.RawMessage("{}")
	}
	// Providers hand over malformed arguments as a JSON string, so "valid
	// JSON" is not enough: tools take objects.
	if !json.Valid(args) || bytes.TrimSpace(args)[0] != '{' {
		return refused("deny", fmt.Sprintf("arguments for %q are not a valid JSON object; send a JSON object matching the tool's input schema", call.Name))
	}
	digest := Digest(call.Name, args)

	s.mu.Lock()
	if digest == s.lastCall {
		s.repeats++
	} else {
		s.lastCall, s.repeats = digest, 1
	}
	repeats, tainted, always := s.repeats, s.tainted, s.always[call.Name]
	s.mu.Unlock()
	if repeats >= s.r.opts.LoopGuard {
		return refused("deny", fmt.Sprintf("refused: %q was called with identical arguments %d times in a row; the result will not change, so use the previous result or try something else", call.Name, repeats))
	}

	d := s.p.Rules.Decide(policy.Call{Tool: call.Name, Server: spec.Server, Tainted: tainted})
	if d.Action != policy.Deny {
		switch deny, ask := s.p.Principal.ToolRule(call.Name); {
		case deny:
			d = policy.Decision{Action: policy.Deny, Reason: fmt.Sprintf("tool %q is denied for principal %q (its deny_tools)", call.Name, s.p.Principal.Name)}
		case ask && d.Action == policy.Allow:
			d = policy.Decision{Action: policy.Ask, Reason: fmt.Sprintf("tool %q needs approval for principal %q (its ask_tools)", call.Name, s.p.Principal.Name)}
		}
	}
	decision, answeredBy := "allow", ""
	switch d.Action {
	case policy.Deny:
		return refused("deny", "denied: "+d.Reason)
	case policy.Ask:
		if !always {
			a, err := s.ask(ctx, call, args, d.Reason)
			if err != nil {
				return refused("rejected", fmt.Sprintf("denied: %s; approval failed: %v", d.Reason, err))
			}
			if !a.Approved {
				out := refused("rejected", "denied: "+d.Reason+"; the user rejected the call")
				out.answeredBy = a.By
				return out
			}
			answeredBy = a.By
		}
		decision = "approved"
	}

	timeout := s.r.opts.Timeout
	if secs, ok := s.r.opts.Timeouts[call.Name]; ok && secs > 0 {
		timeout = time.Duration(secs) * time.Second
	} else if spec.TimeoutSecs > 0 {
		timeout = time.Duration(spec.TimeoutSecs) * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := t.Call(cctx, &Call{
		Agent: s.p.Agent, SessionID: s.p.SessionID, Workspace: s.p.Workspace,
		Args: args, Depth: s.p.Depth, Principal: s.p.Principal, Progress: progress, Relay: relay,
	})
	untrusted := spec.Untrusted || spec.Origin == OriginMCP || spec.Origin == OriginA2A
	if untrusted {
		s.mu.Lock()
		s.tainted = true
		s.mu.Unlock()
	}
	out := Outcome{Decision: decision, Untrusted: untrusted, Structured: res.Structured, answeredBy: answeredBy}
	if !empty {
		// The audit digests the arguments as the call gave them; args
		// differs only when they were empty.
		out.digest = digest
	}
	switch {
	case err != nil && ctx.Err() != nil:
		out.Result = llm.ToolResult{Content: "cancelled", IsError: true}
		out.cancelled = s.canceller(ctx)
	case err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded):
		out.Result = llm.ToolResult{Content: fmt.Sprintf("tool %q timed out after %s", call.Name, timeout), IsError: true}
	case err != nil:
		out.Result = llm.ToolResult{Content: fmt.Sprintf("tool %q failed: %v", call.Name, err), IsError: true}
	default:
		out.Result = llm.ToolResult{Content: res.Content, IsError: res.IsError}
	}
	out.Result.Content = Truncate(out.Result.Content, s.r.opts.MaxResultChars)
	if out.Result.IsError {
		out.detail = firstLine(out.Result.Content, 200)
	}
	if err == nil && len(res.Images) > 0 {
		var notes string
		out.Result.Images, notes = keepImages(res.Images, s.r.opts.MaxImageBytes)
		out.Result.Content += notes
	}
	// Images are inside the marking too: the text that describes them is
	// in the block, and adapters send them with it (or, where a vendor
	// cannot, introduced as tool output).
	if untrusted {
		out.Result.Content = WrapUntrusted(sourceLabel(spec), out.Result.Content)
	}
	return out
}

// canceller describes who cancelled ctx: the canceller its cause names,
// else the scope's CancelledBy for a plain cancellation, else the cause.
func (s *Scope) canceller(ctx context.Context) string {
	cause := context.Cause(ctx)
	var ce *CancelledError
	switch {
	case errors.As(cause, &ce):
		return "cancelled by " + ce.By
	case cause == context.Canceled && s.p.CancelledBy != "":
		return "cancelled by " + s.p.CancelledBy
	case cause == context.Canceled:
		return "cancelled by the caller"
	case cause == nil:
		return "cancelled"
	}
	return "cancelled: " + cause.Error()
}

func (s *Scope) ask(ctx context.Context, call llm.ToolCall, args json.RawMessage, reason string) (Answer, error) {
	approver := s.p.Approver
	if approver == nil {
		// The edge cannot ask: the operator can, if there is one.
		approver = s.r.opts.Operator
	}
	if approver == nil {
		return Answer{}, errors.New("no one can approve calls on this connection")
	}
	req := ApprovalRequest{
		Agent: s.p.Agent, SessionID: s.p.SessionID, CallID: call.ID, Tool: call.Name, Args: args, Reason: reason,
		Principal: principal.NameOf(s.p.Principal),
	}
	if q, ok := approver.(QueueingApprover); ok && s.p.OnQueued != nil {
		return q.ApproveQueued(ctx, req, s.p.OnQueued)
	}
	if a, ok := approver.(AnsweringApprover); ok {
		return a.ApproveAnswer(ctx, req)
	}
	ok, err := approver.Approve(ctx, req)
	return Answer{Approved: ok}, err
}

// AllowAlways records that the user approved every call of tool for the
// rest of this scope ("allow always" in an editor).
func (s *Scope) AllowAlways(tool string) {
	s.mu.Lock()
	s.always[tool] = true
	s.mu.Unlock()
}

func refused(decision, msg string) Outcome {
	return Outcome{Decision: decision, Result: llm.ToolResult{Content: msg, IsError: true}}
}

func (s *Scope) audit(ctx context.Context, call llm.ToolCall, out Outcome) {
	if s.r.opts.Audit == nil {
		return
	}
	outcome := out.outcome()
	detail := out.detail
	switch {
	case out.cancelled != "":
		detail = out.cancelled
	case detail == "" && out.Result.IsError:
		// Refused before the tool ran, or the tool's own error result:
		// the envelope's opening tag would be the whole first line, so
		// the record keeps what the tool said (its untrusted flag says
		// whose).
		detail = firstLine(UnwrapUntrusted(out.Result.Content), 200)
	}
	if out.answeredBy != "" {
		// Who answered comes first: the rest may be cut.
		word := "approved"
		if out.Decision == "rejected" {
			word = "rejected"
		}
		detail = strings.TrimSuffix(word+" by "+out.answeredBy+"; "+detail, "; ")
	}
	digest := out.digest
	if digest == "" {
		digest = Digest(call.Name, call.Arguments)
	}
	rec := store.AuditRecord{
		Time: time.Now().UTC(), Agent: s.p.Agent, SessionID: s.p.SessionID, Tool: call.Name,
		ArgsDigest: digest, Decision: out.Decision, Outcome: outcome,
		Detail: detail, Untrusted: out.Untrusted, Duration: out.Duration, Principal: principal.NameOf(s.p.Principal),
	}
	// The audit write must happen even when the run was cancelled.
	if _, err := s.r.opts.Audit.AppendAudit(context.WithoutCancel(ctx), rec); err != nil {
		s.r.log.Error("audit write failed", "tool", call.Name, "err", err)
	}
}

// Digest is the hex SHA-256 of the tool name and its compacted arguments:
// stable for equal calls, and revealing nothing of the arguments.
func Digest(name string, args json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(name))
	h.Write([]byte{0})
	var buf bytes.Buffer
	if json.Compact(&buf, args) == nil {
		h.Write(buf.Bytes())
	} else {
		h.Write(args)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Truncate cuts s to at most max characters (runes) and says how much
// was cut, so the model knows the result is partial.
func Truncate(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if max <= 0 || n <= max {
		return s
	}
	cut := 0
	for i := range s {
		if cut == max {
			s = s[:i]
			break
		}
		cut++
	}
	return fmt.Sprintf("%s\n[truncated: showing %d of %d characters]", s, max, n)
}

// DefaultMaxImageBytes is the default of RunnerOptions.MaxImageBytes.
const DefaultMaxImageBytes = 5 << 20

// modelImageTypes are the image types every vendor's vision models take.
var modelImageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// keepImages returns the images a model may be shown, in order, while
// their total stays within max bytes, and a note (appended to the
// result's text) naming those left out: a type no model takes would fail
// the whole model call, and a huge one would fill its context.
func keepImages(imgs []llm.Image, max int) ([]llm.Image, string) {
	var kept []llm.Image
	var notes strings.Builder
	total := 0
	for _, img := range imgs {
		typ := strings.ToLower(strings.TrimSpace(img.MIMEType))
		if i := strings.IndexByte(typ, ';'); i >= 0 {
			typ = strings.TrimSpace(typ[:i])
		}
		switch {
		case !modelImageTypes[typ]:
			fmt.Fprintf(&notes, "\n[image not shown (%s): models take PNG, JPEG, GIF and WebP images]", orUnknownType(typ))
		case total+len(img.Data) > max:
			fmt.Fprintf(&notes, "\n[image not shown (%s, %d bytes): the images of one tool result may have %d bytes in all]", typ, len(img.Data), max)
		default:
			total += len(img.Data)
			kept = append(kept, llm.Image{MIMEType: typ, Data: img.Data})
		}
	}
	return kept, notes.String()
}

func orUnknownType(t string) string {
	if t == "" {
		return "no type"
	}
	return t
}

const (
	untrustedOpen  = "<untrusted-data source=%q>\n"
	untrustedClose = "</untrusted-data>"
)

// WrapUntrusted puts content in a delimited block that tells the model it
// is data, not instructions. A closing tag inside the content is defused so
// the data cannot end the block early.
func WrapUntrusted(source, content string) string {
	content = strings.ReplaceAll(content, untrustedClose, "</untrusted-data\u200b>")
	return fmt.Sprintf(untrustedOpen, source) + content + "\n" + untrustedClose
}

// IsUntrustedBlock reports whether s was produced by WrapUntrusted.
func IsUntrustedBlock(s string) bool {
	return strings.HasPrefix(s, "<untrusted-data source=") && strings.HasSuffix(s, untrustedClose)
}

// UnwrapUntrusted returns the content of a block WrapUntrusted made, and
// any other text unchanged: for people (the audit log, an editor), to
// whom the envelope means nothing.
func UnwrapUntrusted(s string) string {
	if !IsUntrustedBlock(s) {
		return s
	}
	_, body, ok := strings.Cut(s, "\n")
	if !ok {
		return s
	}
	return strings.TrimSuffix(strings.TrimSuffix(body, untrustedClose), "\n")
}

func sourceLabel(sp Spec) string {
	if sp.Server != "" {
		return string(sp.Origin) + ":" + sp.Server
	}
	return string(sp.Origin) + ":" + sp.Name
}

func firstLine(s string, max int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > max {
		s = s[:max]
	}
	return s
}
