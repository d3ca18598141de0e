package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// Paths of scenario 3.
const (
	pathA2AAgentd = "agentd /a2a/agents/instant"
	// pathA2AJSLLM does what agentd's instant agent does: a streamed call
	// to the same fake model, the turn persisted in SQLite (node:sqlite,
	// WAL). The A2A send targets compare with it.
	pathA2AJSLLM = "@a2a-js/sdk server, fake model + node:sqlite"
	// pathA2AJSMem answers from memory: no model call, no store. For
	// information, and the baseline of the model-free mcp_proxy agent.
	pathA2AJSMem = "@a2a-js/sdk server, answers from memory"
	pathA2AProxy = "agentd /a2a/agents/proxy (mcp_proxy, no model)"
	// For information: the same agent with one processor (OneProcAgentd).
	pathA2AOneProc = "agentd /a2a/agents/instant, GOMAXPROCS=1"
)

// a2aSend returns a load function sending one text message and requiring
// the task to complete.
func a2aSend(c *a2aclient.Client) func(context.Context) error {
	return a2aSendParts(c, a2a.NewTextPart("hi"))
}

// proxyPart is what the mcp_proxy agent runs: server-everything's echo.
func proxyPart() *a2a.Part {
	return a2a.NewDataPart(map[string]any{"target_mcp_server_id": "everything", "tool_name": "echo", "arguments": map[string]any{"message": "hi"}})
}

// a2aSendParts is a2aSend with a message made of fresh copies of parts.
func a2aSendParts(c *a2aclient.Client, parts ...*a2a.Part) func(context.Context) error {
	return func(ctx context.Context) error {
		r, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, parts...)})
		if err != nil {
			return err
		}
		switch v := r.(type) {
		case *a2a.Task:
			if v.Status.State != a2a.TaskStateCompleted {
				return fmt.Errorf("task ended %s, want completed", v.Status.State)
			}
		case *a2a.Message:
		default:
			return fmt.Errorf("unexpected result %T", r)
		}
		return nil
	}
}

// a2aFirstEvent returns a load function that starts a stream and reports
// the time to its first event; it reads the stream to its end.
func a2aFirstEvent(c *a2aclient.Client) func(context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) {
		t0 := time.Now()
		var first time.Duration
		n := 0
		for _, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))}) {
			if err != nil {
				return 0, err
			}
			if n == 0 {
				first = time.Since(t0)
			}
			n++
		}
		if n == 0 {
			return 0, errors.New("stream ended without an event")
		}
		return first, nil
	}
}

func runA2A(ctx context.Context, e *Env, res *Scenario) error {
	type target struct {
		name   string
		client *a2aclient.Client
		send   func(context.Context) error
	}
	var targets []target
	a, err := e.MainAgentd(ctx)
	if err != nil {
		return err
	}
	if err := a2aAvailable(ctx, e.HTTP, a, agentInstant); err != nil {
		res.naRow(pathA2AAgentd, err)
	} else if c, err := e.A2AClient(ctx, a.URL+"/a2a/agents/"+agentInstant); err != nil {
		res.naRow(pathA2AAgentd, err)
	} else {
		defer c.Destroy()
		targets = append(targets, target{pathA2AAgentd, c, a2aSend(c)})
	}
	if err := e.NeedNode(); err != nil {
		res.naRow(pathA2AJSLLM, err)
	} else if llm, err := e.FakeLLM(ctx); err != nil {
		res.naRow(pathA2AJSLLM, err)
	} else if jsProc, url, err := e.StartA2ALLMPeer(ctx, llm); err != nil {
		if jsProc != nil {
			defer jsProc.Stop(3 * time.Second)
		}
		res.naRow(pathA2AJSLLM, err)
	} else if c, err := e.A2AClient(ctx, url); err != nil {
		defer jsProc.Stop(3 * time.Second)
		res.naRow(pathA2AJSLLM, err)
	} else {
		defer jsProc.Stop(3 * time.Second)
		defer c.Destroy()
		targets = append(targets, target{pathA2AJSLLM, c, a2aSend(c)})
	}
	if err := e.NeedNode(); err != nil {
		res.naRow(pathA2AJSMem, err)
	} else if jsProc, url, err := e.StartA2APeer(ctx); err != nil {
		res.naRow(pathA2AJSMem, err)
	} else if c, err := e.A2AClient(ctx, url); err != nil {
		defer jsProc.Stop(3 * time.Second)
		res.naRow(pathA2AJSMem, err)
	} else {
		defer jsProc.Stop(3 * time.Second)
		defer c.Destroy()
		targets = append(targets, target{pathA2AJSMem, c, a2aSend(c)})
	}
	// For information, not for the target: the model-free agent, whose
	// task is one MCP call through the tool pipeline to a Node server.
	if e.NeedNode() == nil {
		if err := a2aAvailable(ctx, e.HTTP, a, agentProxy); err != nil {
			res.naRow(pathA2AProxy, err)
		} else if c, err := e.A2AClient(ctx, a.URL+"/a2a/agents/"+agentProxy); err != nil {
			res.naRow(pathA2AProxy, err)
		} else {
			defer c.Destroy()
			targets = append(targets, target{pathA2AProxy, c, a2aSendParts(c, proxyPart())})
		}
	}
	if one, err := e.OneProcAgentd(ctx); err != nil {
		res.naRow(pathA2AOneProc, err)
	} else if c, err := e.A2AClient(ctx, one.URL+"/a2a/agents/"+agentInstant); err != nil {
		res.naRow(pathA2AOneProc, err)
	} else {
		defer c.Destroy()
		targets = append(targets, target{pathA2AOneProc, c, a2aSend(c)})
	}
	var live []target
	for _, t := range targets {
		if err := t.send(ctx); err != nil {
			res.naRow(t.name, fmt.Errorf("first send failed: %w", err))
			continue
		}
		live = append(live, t)
	}

	concs := a2aConcurrency(e.Settings.Concurrency)
	for _, conc := range concs {
		var cells []*Cell
		fns := map[*Cell]func(context.Context) error{}
		for _, t := range live {
			c := &Cell{Path: t.name + " send", Concurrency: conc}
			fns[c] = t.send
			cells = append(cells, c)
		}
		e.logf("  send at concurrency %d", conc)
		Interleave(ctx, e.Settings.Rounds, cells, func(ctx context.Context, c *Cell) Stats {
			return Load(ctx, e.spec(conc), fns[c])
		})
		for _, c := range cells {
			res.Rows = append(res.Rows, cellRow(c))
		}
	}
	var cells []*Cell
	fns := map[*Cell]func(context.Context) (time.Duration, error){}
	for _, t := range live {
		if t.name == pathA2AProxy || t.name == pathA2AOneProc {
			continue
		}
		c := &Cell{Path: t.name + " stream, first event", Concurrency: 1}
		fns[c] = a2aFirstEvent(t.client)
		cells = append(cells, c)
	}
	e.logf("  stream first event")
	Interleave(ctx, e.Settings.Rounds, cells, func(ctx context.Context, c *Cell) Stats {
		return LoadTimed(ctx, e.spec(1), fns[c])
	})
	for _, c := range cells {
		res.Rows = append(res.Rows, cellRow(c))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}

	low, high := concs[0], concs[len(concs)-1]
	llmWhy := "Like for like: both stream the reply from the same fake model over HTTP and persist the turn (conversation, both messages, the finished task) " +
		"in one SQLite transaction, WAL, synchronous=NORMAL; agentd also coalesces concurrent turns into one commit (group commit) and checkpoints the WAL between commits, " +
		"the JS peer commits each turn alone with SQLite's default autocheckpoint. " + pathA2AJSMem + " (no model, no store) is shown beside for information."
	for _, c := range []comparison{
		{Name: "A2A send, LLM agent", Goal: goalText("agentd's SendMessage round trips/s over those of the @a2a-js/sdk agent that calls the same fake model and persists to SQLite", bound{Conc: low, Min: 1.2}, bound{Conc: high, Min: 1.2}),
			Num: pathA2AAgentd + " send", Den: pathA2AJSLLM + " send", Metric: mRate, Bounds: []bound{{Conc: low, Min: 1.2}, {Conc: high, Min: 1.2}}, Why: llmWhy},
		{Name: "A2A send, mcp_proxy agent", Goal: goalText("the model-free mcp_proxy agent's SendMessage round trips/s over those of the @a2a-js/sdk executor that answers from memory", bound{Conc: high, Min: 5}),
			Num: pathA2AProxy + " send", Den: pathA2AJSMem + " send", Metric: mRate, Bounds: []bound{{Conc: high, Min: 5}},
			Why: "agentd's mcp_proxy task is one tools/call through the tool pipeline to server-everything over stdio, persisted; the JS executor answers from memory and stores nothing."},
		{Name: "A2A first streamed event", Goal: "agentd's p50 time to the first SendStreamingMessage event ≤ that of the @a2a-js/sdk agent calling the same fake model (ratio ≤ 1)",
			Num: pathA2AAgentd + " stream, first event", Den: pathA2AJSLLM + " stream, first event", Metric: mP50, Bounds: []bound{{Conc: 1, Max: 1}},
			Why: "Both publish the task (working) before the model call."},
	} {
		res.Targets = append(res.Targets, c.target(res))
	}
	return nil
}

// a2aConcurrency is where scenario 3 measures sends: c=1 and c=16, the
// concurrencies of issue 14's targets, or the lowest and highest of a run
// that has no 16.
func a2aConcurrency(cs []int) []int {
	if slices.Contains(cs, 1) && slices.Contains(cs, 16) {
		return []int{1, 16}
	}
	return []int{cs[0], cs[len(cs)-1]}
}
