package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// Paths of scenario 3.
const (
	pathA2AAgentd = "agentd /a2a/agents/instant"
	pathA2AJS     = "@a2a-js/sdk server"
	pathA2AProxy  = "agentd /a2a/agents/proxy (mcp_proxy, no model)"
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
		res.naRow(pathA2AJS, err)
	} else if jsProc, url, err := e.StartA2APeer(ctx); err != nil {
		res.naRow(pathA2AJS, err)
	} else if c, err := e.A2AClient(ctx, url); err != nil {
		defer jsProc.Stop(3 * time.Second)
		res.naRow(pathA2AJS, err)
	} else {
		defer jsProc.Stop(3 * time.Second)
		defer c.Destroy()
		targets = append(targets, target{pathA2AJS, c, a2aSend(c)})
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
	var live []target
	for _, t := range targets {
		if err := t.send(ctx); err != nil {
			res.naRow(t.name, fmt.Errorf("first send failed: %w", err))
			continue
		}
		live = append(live, t)
	}

	concs := []int{e.Settings.Concurrency[0], e.Settings.Concurrency[len(e.Settings.Concurrency)-1]}
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
		if t.name == pathA2AProxy {
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

	const name, goal = "A2A throughput", "agentd ≥ 3× @a2a-js/sdk's send round trips/s"
	var parts, noisy []string
	met, measured := true, 0
	for _, conc := range concs {
		ag, okA := res.row(pathA2AAgentd+" send", conc)
		js, okJ := res.row(pathA2AJS+" send", conc)
		if !okA || !okJ {
			continue
		}
		measured++
		ratio := ag.Rate / js.Rate
		parts = append(parts, fmt.Sprintf("%s at c=%d", ratioText(ag, js, 1), conc))
		if ratio < 3 {
			met = false
		}
		if roundsDisagree(ag, js, func(r float64) bool { return r >= 3 }) {
			noisy = append(noisy, fmt.Sprintf("c=%d", conc))
		}
	}
	if measured == 0 {
		res.Targets = append(res.Targets, unmeasured(name, goal, "agentd's A2A endpoint or the JS peer could not be measured (see the rows)"))
		return nil
	}
	why := "agentd's send round trips/s over the JS server's: " + strings.Join(parts, ", ") +
		". agentd's instant agent still runs the agent loop: a streamed call to the fake model over HTTP, the session and the task persisted in SQLite; the JS executor answers from memory."
	if ag, ok := res.row(pathA2AAgentd+" stream, first event", 1); ok {
		if js, ok := res.row(pathA2AJS+" stream, first event", 1); ok {
			why += fmt.Sprintf(" First stream event p50: agentd %.0f µs, JS %.0f µs.", ag.P50us, js.P50us)
		}
	}
	why += noiseNote(noisy)
	res.Targets = append(res.Targets, Target{Name: name, Goal: goal, Measured: strings.Join(parts, ", "), Met: verdict(met), Why: why})
	return nil
}
