package a2aedge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentd/agentd/internal/netguard"
	"github.com/agentd/agentd/internal/telemetry"
	"github.com/agentd/agentd/internal/tool"
)

// ExternalAgent is a remote A2A agent from the config.
type ExternalAgent struct {
	Name string
	// URL is where its card is: a base URL ({url}/.well-known/agent-card.json,
	// then agent.json) or the card's own URL.
	URL string
	// TokenEnv names the variable holding its bearer token, read through
	// ClientOptions.LookupSecret on each use; the token is never logged.
	TokenEnv     string
	AllowPrivate bool
}

// reach is where the agent may be: its allow_private, named in refusals.
func (e ExternalAgent) reach() Reach {
	return Reach{AllowPrivate: e.AllowPrivate, Hint: fmt.Sprintf("set allow_private = true on [[a2a.external_agents]] %q to allow it", e.Name)}
}

// Reach says whether a remote agent may be on loopback or a private
// network, and how the user allows that (netguard.Policy.Hint): each
// way of naming an agent has its own setting.
type Reach struct {
	AllowPrivate bool
	Hint         string
}

// urlReach is the reach of an agent named by URL (a2a_send, a2a_discover,
// POST /api/a2a/send): a model or an API caller cannot point the client at
// the private network, only the operator can, by configuring the agent.
var urlReach = Reach{Hint: "configure it in [[a2a.external_agents]] with allow_private = true to allow it"}

// ClientOptions configure a Client. Zero values take the defaults.
type ClientOptions struct {
	External []ExternalAgent
	// LookupSecret reads an environment variable (config.Config.LookupSecret).
	LookupSecret func(name string) (string, bool)
	// Guard returns the SSRF policy for a destination; nil means public
	// addresses only, or also private ones when allowPrivate.
	Guard func(allowPrivate bool) *netguard.Policy
	// DiscoverTimeout bounds one card fetch; default 30 s.
	DiscoverTimeout time.Duration
	// RetryInterval is the first delay before rediscovering an agent whose
	// discovery failed, doubled up to 10 minutes; default 30 s.
	RetryInterval time.Duration
	// UserAgent is sent on every request; default "agentd".
	UserAgent string
	// Tracer records a client span per message sent (nil: none).
	Tracer trace.TracerProvider
	Logger *slog.Logger
}

// Client talks to remote A2A agents (1.0 and 0.3, JSON-RPC or HTTP+JSON):
// discover, send, stream, get, cancel. It discovers the configured
// external agents in the background and offers them to local agents as
// tools (it is a tool.Source).
type Client struct {
	opts   ClientOptions
	log    *slog.Logger
	tracer trace.Tracer // nil: no spans

	mu       sync.Mutex
	agents   map[string]*remote // by configured name
	order    []string
	adhoc    map[string]*remote // by card URL, for URL targets
	sent     map[a2a.TaskID]sentTask
	sentList []a2a.TaskID
	watchers []func()
	stop     context.CancelFunc // ends discovery; set by Start
	closed   bool
	// specs of the built-in tools, made once (see agentTool.Spec).
	specs struct{ send, discover tool.Spec }

	wg sync.WaitGroup // discovery loops
}

// remote is one remote agent: its config, its card once discovered, and
// a connected a2a-go client.
type remote struct {
	cfg      ExternalAgent
	card     *a2a.AgentCard
	client   *a2aclient.Client
	err      error
	checked  time.Time
	toolName string
	spec     tool.Spec // its tool's, once the card is known
}

// RemoteStatus reports one external agent for the API.
type RemoteStatus struct {
	Name       string         `json:"name"`
	URL        string         `json:"url"`
	Discovered bool           `json:"discovered"`
	Error      string         `json:"error,omitempty"`
	CheckedAt  *time.Time     `json:"checked_at,omitempty"`
	Tool       string         `json:"tool,omitempty"`
	Card       *a2a.AgentCard `json:"card,omitempty"`
}

// NewClient returns a client. Start begins discovering the external agents.
func NewClient(opts ClientOptions) *Client {
	if opts.DiscoverTimeout <= 0 {
		opts.DiscoverTimeout = 30 * time.Second
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = 30 * time.Second
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "agentd"
	}
	if opts.LookupSecret == nil {
		opts.LookupSecret = func(string) (string, bool) { return "", false }
	}
	c := &Client{opts: opts, log: orDiscard(opts.Logger), agents: map[string]*remote{}, adhoc: map[string]*remote{},
		sent: map[a2a.TaskID]sentTask{}}
	if opts.Tracer != nil {
		c.tracer = opts.Tracer.Tracer(telemetry.Scope)
	}
	c.specs.send, c.specs.discover = sendSpec(), discoverSpec()
	used := map[string]bool{"a2a_discover": true, "a2a_send": true}
	for _, e := range opts.External {
		name := ToolName(e.Name)
		for used[name] {
			name += "_agent"
		}
		used[name] = true
		c.agents[e.Name] = &remote{cfg: e, toolName: name}
		c.order = append(c.order, e.Name)
	}
	return c
}

// Start discovers the external agents in the background, one goroutine
// each, retrying failures with backoff. It never blocks; after the first
// call, and after Close, it does nothing.
func (c *Client) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = cancel
	for _, name := range c.order {
		c.wg.Go(func() { c.discoverLoop(ctx, name) })
	}
}

// Close stops background discovery and waits for it.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	stop := c.stop
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	c.wg.Wait()
	return nil
}

func (c *Client) discoverLoop(ctx context.Context, name string) {
	delay := c.opts.RetryInterval
	for {
		err := c.refresh(ctx, name)
		if err == nil || ctx.Err() != nil {
			return
		}
		c.log.Warn("a2a agent discovery failed; will retry", "agent", name, "retry_in", delay, "err", err)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return
		}
		delay = min(delay*2, 10*time.Minute)
	}
}

// guard is the SSRF policy for reach: ClientOptions.Guard's, with reach's
// hint.
func (c *Client) guard(reach Reach) *netguard.Policy {
	p := netguard.Policy{AllowPrivate: reach.AllowPrivate}
	if c.opts.Guard != nil {
		if g := c.opts.Guard(reach.AllowPrivate); g != nil {
			p = *g // Guard's policy may be shared: the hint is this call's
		}
	}
	p.Hint = reach.Hint
	return &p
}

// refresh (re)discovers external agent name and connects to it.
func (c *Client) refresh(ctx context.Context, name string) error {
	c.mu.Lock()
	r, ok := c.agents[name]
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: no external a2a agent %q", errBadRequest, name)
	}
	card, cl, err := c.connect(ctx, r.cfg.URL, r.cfg.reach(), r.cfg.TokenEnv)
	c.mu.Lock()
	r.checked = time.Now().UTC()
	r.err = err
	if err == nil {
		r.card, r.client, r.spec = card, cl, agentSpec(name, r.toolName, card)
	}
	watchers := slices.Clone(c.watchers)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.log.Info("discovered a2a agent", "agent", name, "card_name", card.Name, "skills", len(card.Skills))
	for _, f := range watchers {
		f()
	}
	return nil
}

// OnToolsChanged registers f, called when an external agent is
// discovered (its tool appears). f must not block.
func (c *Client) OnToolsChanged(f func()) {
	c.mu.Lock()
	c.watchers = append(c.watchers, f)
	c.mu.Unlock()
}

// Agents reports the configured external agents.
func (c *Client) Agents() []RemoteStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]RemoteStatus, 0, len(c.order))
	for _, name := range c.order {
		r := c.agents[name]
		st := RemoteStatus{Name: name, URL: r.cfg.URL, Discovered: r.card != nil, Card: r.card}
		if r.card != nil {
			st.Tool = r.toolName
		}
		if r.err != nil {
			st.Error = r.err.Error()
		}
		if !r.checked.IsZero() {
			t := r.checked
			st.CheckedAt = &t
		}
		out = append(out, st)
	}
	return out
}

// Discover fetches the Agent Card at rawURL: {url}/.well-known/agent-card.json,
// falling back to the pre-0.3 {url}/.well-known/agent.json; a URL ending in
// .json is fetched as is. Cards of 1.0, 0.3 and older (a bare "url")
// shapes are read.
func (c *Client) Discover(ctx context.Context, rawURL string, reach Reach, tokenEnv string) (*a2a.AgentCard, error) {
	u, err := c.guard(reach).CheckURL(ctx, rawURL)
	if err != nil {
		return nil, err
	}
	hc := c.httpClient(u, reach, tokenEnv)
	ctx, cancel := context.WithTimeout(ctx, c.opts.DiscoverTimeout)
	defer cancel()
	var candidates []string
	if strings.HasSuffix(u.Path, ".json") {
		candidates = []string{u.String()}
	} else {
		base := strings.TrimRight(u.String(), "/")
		candidates = []string{base + "/.well-known/agent-card.json", base + "/.well-known/agent.json"}
	}
	var firstErr error
	for _, cu := range candidates {
		card, err := fetchCard(ctx, hc, cu)
		if err == nil {
			return card, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

func fetchCard(ctx context.Context, hc *http.Client, cardURL string) (*a2a.AgentCard, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch agent card: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: fetch agent card %s: %w", errUpstream, cardURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: read agent card %s: %w", errUpstream, cardURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: fetch agent card %s: %s", errUpstream, cardURL, resp.Status)
	}
	return ParseCard(body)
}

// ParseCard reads an Agent Card of any version: 1.0 (supportedInterfaces),
// 0.3 (url + preferredTransport) or older (a bare url, taken as 0.3
// JSON-RPC).
func ParseCard(body []byte) (*a2a.AgentCard, error) {
	card, err := a2av0.NewAgentCardParser()(body)
	if err != nil {
		return nil, fmt.Errorf("%w: agent card: %w", errUpstream, err)
	}
	if len(card.SupportedInterfaces) == 0 {
		var old struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(body, &old) == nil && old.URL != "" {
			card.SupportedInterfaces = []*a2a.AgentInterface{{URL: old.URL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version}}
		}
	}
	if card.Name == "" || len(card.SupportedInterfaces) == 0 {
		return nil, fmt.Errorf("%w: agent card has no name or no endpoint", errUpstream)
	}
	return card, nil
}

// httpClient returns a guarded HTTP client that adds the bearer token of
// tokenEnv to requests for the host the agent was configured at, and to
// no other host: a card cannot redirect the credential elsewhere.
func (c *Client) httpClient(u *url.URL, reach Reach, tokenEnv string) *http.Client {
	hc := c.guard(reach).Client(0)
	hc.Transport = &authTransport{next: hc.Transport, host: u.Host, tokenEnv: tokenEnv, lookup: c.opts.LookupSecret, ua: c.opts.UserAgent}
	return hc
}

type authTransport struct {
	next     http.RoundTripper
	host     string
	tokenEnv string
	lookup   func(string) (string, bool)
	ua       string
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("User-Agent", t.ua)
	// The delegating run's trace goes on to the remote agent.
	telemetry.Inject(req.Context(), req.Header)
	if t.tokenEnv != "" && req.URL.Host == t.host {
		if tok, ok := t.lookup(t.tokenEnv); ok && tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	return t.next.RoundTrip(req)
}

// connect discovers the agent at rawURL and builds an a2a-go client for
// it, speaking whichever of 1.0 and 0.3, JSON-RPC and HTTP+JSON its card
// offers (1.0 JSON-RPC first).
func (c *Client) connect(ctx context.Context, rawURL string, reach Reach, tokenEnv string) (*a2a.AgentCard, *a2aclient.Client, error) {
	card, err := c.Discover(ctx, rawURL, reach, tokenEnv)
	if err != nil {
		return nil, nil, err
	}
	u, _ := url.Parse(rawURL)
	hc := c.httpClient(u, reach, tokenEnv)
	cl, err := a2aclient.NewFromCard(ctx, card,
		a2aclient.WithJSONRPCTransport(hc),
		a2aclient.WithRESTTransport(hc),
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc}),
		a2av0.WithRESTTransport(a2av0.RESTTransportConfig{Client: hc}),
		a2aclient.WithConfig(a2aclient.Config{
			AcceptedOutputModes: []string{"text/plain", "application/json"},
			PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON},
		}),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: connect to %s: %w", errUpstream, card.Name, err)
	}
	return card, cl, nil
}

// target resolves a configured agent name or a URL to a connected client.
// URLs are guarded as public-only: a model or API caller cannot point
// the client at the private network by naming a URL.
func (c *Client) target(ctx context.Context, target string) (*remote, error) {
	c.mu.Lock()
	r, ok := c.agents[target]
	if !ok {
		for _, x := range c.agents {
			if x.toolName == target {
				r, ok = x, true
				break
			}
		}
	}
	if ok && r.client != nil {
		c.mu.Unlock()
		return r, nil
	}
	if !ok {
		r = c.adhoc[target]
	}
	c.mu.Unlock()
	if ok {
		if err := c.refresh(ctx, r.cfg.Name); err != nil {
			return nil, err
		}
		return r, nil
	}
	if r != nil && time.Since(r.checked) < 5*time.Minute {
		return r, nil
	}
	if !strings.Contains(target, "://") {
		return nil, fmt.Errorf("%w: %q is neither a configured external agent nor a URL", errBadRequest, target)
	}
	card, cl, err := c.connect(ctx, target, urlReach, "")
	if err != nil {
		return nil, err
	}
	r = &remote{cfg: ExternalAgent{Name: card.Name, URL: target}, card: card, client: cl, checked: time.Now()}
	c.mu.Lock()
	if len(c.adhoc) >= 64 {
		clear(c.adhoc)
	}
	c.adhoc[target] = r
	c.mu.Unlock()
	return r, nil
}

// SendRequest is one message to a remote agent.
type SendRequest struct {
	Message string `json:"message"`
	// ContextID continues a conversation; TaskID answers a task waiting
	// for input.
	ContextID string `json:"context_id,omitempty"`
	TaskID    string `json:"task_id,omitempty"`
}

func (r SendRequest) a2a() *a2a.SendMessageRequest {
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(r.Message))
	msg.ContextID, msg.TaskID = r.ContextID, a2a.TaskID(r.TaskID)
	return &a2a.SendMessageRequest{Message: msg}
}

// Send sends a message to target (an external agent's name or a URL) and
// waits for the task to end or ask for input, polling if the agent
// answers before it is done. With tracing on the exchange is a client
// span (observe.go), whose context goes to the agent in traceparent.
//
// An agent that answers with a message rather than a task gets it
// presented as a completed task (the API's answer has a task); SendReply
// says which it was.
func (c *Client) Send(ctx context.Context, target string, req SendRequest) (*a2a.Task, error) {
	task, _, err := c.SendReply(ctx, target, req)
	return task, err
}

// SendReply is Send, and also the message the agent answered with when it
// answered with one instead of a task: the task is then made up of it
// (completed, with the message's ids, empty when the message has none).
func (c *Client) SendReply(ctx context.Context, target string, req SendRequest) (*a2a.Task, *a2a.Message, error) {
	ctx, span := c.startSend(ctx, target)
	task, msg, err := c.send(ctx, target, req)
	endSend(span, task, err)
	return task, msg, err
}

func (c *Client) send(ctx context.Context, target string, req SendRequest) (*a2a.Task, *a2a.Message, error) {
	r, err := c.target(ctx, target)
	if err != nil {
		return nil, nil, err
	}
	res, err := r.client.SendMessage(ctx, req.a2a())
	if err != nil {
		return nil, nil, fmt.Errorf("%w: send to %s: %w", errUpstream, r.cfg.Name, err)
	}
	var task *a2a.Task
	switch v := res.(type) {
	case *a2a.Message:
		// A direct reply is a completed exchange: present it as a task,
		// and say it was a message.
		now := time.Now().UTC()
		task = &a2a.Task{ID: v.TaskID, ContextID: v.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: v, Timestamp: &now}}
		if v.TaskID != "" {
			c.remember(ctx, v.TaskID, target)
		}
		return task, v, nil
	case *a2a.Task:
		task = v
	default:
		return nil, nil, fmt.Errorf("%w: unexpected send result %T", errUpstream, res)
	}
	if task.ID != "" {
		c.remember(ctx, task.ID, target)
	}
	delay := 100 * time.Millisecond
	for !Settled(task.Status.State) && task.ID != "" {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return task, nil, ctx.Err()
		}
		delay = min(delay*2, 2*time.Second)
		task, err = r.client.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
		if err != nil {
			return nil, nil, fmt.Errorf("%w: poll task: %w", errUpstream, err)
		}
	}
	return task, nil, nil
}

// Settled reports whether a task needs nothing more from the server.
func Settled(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// Stream sends a message to target and yields the task's events as they
// come.
func (c *Client) Stream(ctx context.Context, target string, req SendRequest) iter.Seq2[a2a.Event, error] {
	return c.StreamMessage(ctx, target, req.a2a())
}

// StreamMessage is Stream for a message of any parts.
func (c *Client) StreamMessage(ctx context.Context, target string, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		r, err := c.target(ctx, target)
		if err != nil {
			yield(nil, err)
			return
		}
		for ev, err := range r.client.SendStreamingMessage(ctx, req) {
			if err != nil {
				yield(nil, fmt.Errorf("%w: stream from %s: %w", errUpstream, r.cfg.Name, err))
				return
			}
			if id := ev.TaskInfo().TaskID; id != "" {
				c.remember(ctx, id, target)
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// GetTask fetches a task from target; an empty target means the agent a
// task with this id was last sent to through this client.
func (c *Client) GetTask(ctx context.Context, target, id string) (*a2a.Task, error) {
	r, err := c.targetOf(ctx, target, id)
	if err != nil {
		return nil, err
	}
	t, err := r.client.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id)})
	if err != nil {
		return nil, fmt.Errorf("%w: get task: %w", errUpstream, err)
	}
	return t, nil
}

// CancelTask cancels a task at target (empty: where it was sent).
func (c *Client) CancelTask(ctx context.Context, target, id string) (*a2a.Task, error) {
	r, err := c.targetOf(ctx, target, id)
	if err != nil {
		return nil, err
	}
	t, err := r.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(id)})
	if err != nil {
		return nil, fmt.Errorf("%w: cancel task: %w", errUpstream, err)
	}
	return t, nil
}

func (c *Client) targetOf(ctx context.Context, target, id string) (*remote, error) {
	if target == "" {
		c.mu.Lock()
		target = c.sent[a2a.TaskID(id)].target
		c.mu.Unlock()
		if target == "" {
			return nil, fmt.Errorf("%w: task %s was not sent through this daemon; name the agent or URL", a2a.ErrTaskNotFound, id)
		}
	}
	return c.target(ctx, target)
}

// sentTask is where a task was sent through this client, and by whom.
type sentTask struct {
	target string
	// owner is the principal whose request sent it ("" for the daemon's
	// own, such as an agent's tool call): the remote agent sees only the
	// daemon's credential, so this is what tells principals' tasks apart.
	owner string
}

// remember records where a task was sent, and the principal of ctx that
// sent it (the last 1,000).
func (c *Client) remember(ctx context.Context, id a2a.TaskID, target string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.sent[id]; !ok {
		c.sentList = append(c.sentList, id)
		if len(c.sentList) > 1000 {
			delete(c.sent, c.sentList[0])
			c.sentList = c.sentList[1:]
		}
	}
	c.sent[id] = sentTask{target: target, owner: ownerFrom(ctx)}
}

// sentBy returns the target a task was sent to through this client and
// the principal that sent it; ok is false for a task it does not know.
func (c *Client) sentBy(id a2a.TaskID) (target, owner string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.sent[id]
	return t.target, t.owner, ok
}

// configured returns the name of the external agent target names (by its
// name or its tool's), false when target is no configured agent.
func (c *Client) configured(target string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.agents[target]; ok {
		return target, true
	}
	for name, x := range c.agents {
		if x.toolName == target {
			return name, true
		}
	}
	return "", false
}

// ResultText is what a task produced, as text: its artifacts' text (data
// parts as JSON), else its status message, else the agent's last message.
func ResultText(t *a2a.Task) string {
	var b strings.Builder
	for _, a := range t.Artifacts {
		WriteParts(&b, a.Parts)
	}
	if b.Len() == 0 && t.Status.Message != nil {
		WriteParts(&b, t.Status.Message.Parts)
	}
	if b.Len() == 0 {
		for i := len(t.History) - 1; i >= 0; i-- {
			if t.History[i].Role == a2a.MessageRoleAgent {
				WriteParts(&b, t.History[i].Parts)
				break
			}
		}
	}
	return b.String()
}

// WriteParts writes parts as text: text as is, data as JSON, files named.
func WriteParts(b *strings.Builder, parts a2a.ContentParts) {
	for _, p := range parts {
		switch v := p.Content.(type) {
		case a2a.Text:
			b.WriteString(string(v))
		case a2a.Data:
			d, _ := json.Marshal(v.Value)
			b.Write(d)
		case a2a.URL:
			fmt.Fprintf(b, "[file %s]", string(v))
		case a2a.Raw:
			fmt.Fprintf(b, "[file %q, %s, %d bytes]", p.Filename, p.MediaType, len(v))
		}
	}
}

// ToolName is the tool name of external agent name: "a2a_" and the name
// lowercased, with every run of characters other than letters, digits and
// '_' turned into one '_', at most 64 characters.
func ToolName(name string) string {
	var b strings.Builder
	b.WriteString("a2a_")
	under := false
	for _, r := range strings.ToLower(name) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_'
		if !ok {
			if !under {
				b.WriteByte('_')
			}
			under = true
			continue
		}
		b.WriteRune(r)
		under = r == '_'
	}
	s := b.String()
	if len(s) > 64 {
		s = s[:64]
	}
	s = strings.TrimRight(s, "_")
	if s == "a2a" {
		s = "a2a_agent"
	}
	return s
}

// Tools implements tool.Source: one tool per discovered external agent,
// plus a2a_discover and a2a_send.
func (c *Client) Tools() []tool.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := []tool.Tool{discoverTool{c}, sendTool{c}}
	for _, name := range c.order {
		r := c.agents[name]
		if r.card != nil {
			out = append(out, agentTool{c: c, name: name, spec: r.spec})
		}
	}
	return out
}

var _ tool.Source = (*Client)(nil)
