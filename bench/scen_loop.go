package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Paths of scenario 5.
const (
	pathTurnTool  = "turn: tool call, then text"
	pathTurnText  = "turn: text only"
	pathModelCall = "model call direct (fake model)"
)

// turn returns a load function posting one message to agent and checking
// the answer.
func turn(e *Env, a *Agentd, agent, want string, iterations int) func(context.Context) error {
	body := []byte(`{"message":"go"}`)
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL+"/api/agents/"+agent+"/messages", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := e.HTTP.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d: %s", resp.StatusCode, abbreviate(string(b), 200))
		}
		var out struct {
			Text       string `json:"text"`
			Iterations int    `json:"iterations"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return err
		}
		if out.Text != want || (iterations > 0 && out.Iterations != iterations) {
			return fmt.Errorf("answer %q after %d iterations, want %q after %d", out.Text, out.Iterations, want, iterations)
		}
		return nil
	}
}

// modelCall returns a load function making the streamed request agentd
// makes for a tool turn's first step straight to the fake model, read to
// the end: the model's own time, HTTP included.
func modelCall(e *Env, llm string) func(context.Context) error {
	body := []byte(`{"model":"tool","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}],` +
		`"tools":[{"type":"function","function":{"name":"file_list","description":"List a directory.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]}`)
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, llm+"/chat/completions", bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := e.HTTP.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte("[DONE]")) {
			return fmt.Errorf("fake model: status %d: %s", resp.StatusCode, abbreviate(string(b), 200))
		}
		return nil
	}
}

func runLoop(ctx context.Context, e *Env, res *Scenario) error {
	a, err := e.MainAgentd(ctx)
	if err != nil {
		return err
	}
	llm, err := e.FakeLLM(ctx)
	if err != nil {
		return err
	}
	ws := filepath.Join(e.Tmp, "ws-looper")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		return err
	}
	_ = os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o600)

	fns := map[string]func(context.Context) error{
		pathTurnTool:  turn(e, a, agentLooper, "done", 2),
		pathTurnText:  turn(e, a, agentInstant, "ok", 0),
		pathModelCall: modelCall(e, llm),
	}
	var cells []*Cell
	for _, p := range []string{pathTurnTool, pathTurnText, pathModelCall} {
		if err := fns[p](ctx); err != nil {
			res.naRow(p, fmt.Errorf("first call failed: %w", err))
			continue
		}
		cells = append(cells, &Cell{Path: p, Concurrency: 1})
	}
	e.logf("  %d paths × %d rounds at concurrency 1", len(cells), e.Settings.Rounds)
	Interleave(ctx, e.Settings.Rounds, cells, func(ctx context.Context, c *Cell) Stats {
		return Load(ctx, e.spec(1), fns[c.Path])
	})
	for _, c := range cells {
		res.Rows = append(res.Rows, cellRow(c))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	const name, goal = "agent loop overhead", "< 1 ms per tool round trip, model time excluded"
	tool, ok1 := res.row(pathTurnTool, 1)
	text, ok2 := res.row(pathTurnText, 1)
	model, ok3 := res.row(pathModelCall, 1)
	if !ok1 || !ok2 || !ok3 {
		res.Targets = append(res.Targets, unmeasured(name, goal, "a turn through agentd could not be measured (see the rows)"))
		return nil
	}
	// A tool turn is a text turn plus one tool round trip: a model call
	// answering with a tool call, and the tool run. The difference of
	// the two turns, minus one model call's own time, is what agentd
	// spends on the round trip.
	perTrip := tool.P50us - text.P50us - model.P50us
	perTurn := text.P50us - model.P50us
	// The same difference within each round shows how much the verdict
	// depends on the machine's noise.
	var spread []string
	sides := map[bool]bool{}
	byPath := map[string]*Cell{}
	for _, c := range cells {
		byPath[c.Path] = c
	}
	if t, x, m := byPath[pathTurnTool], byPath[pathTurnText], byPath[pathModelCall]; t != nil && x != nil && m != nil {
		for r := range min(len(t.Rounds), len(x.Rounds), len(m.Rounds)) {
			d := t.Rounds[r].P50 - x.Rounds[r].P50 - m.Rounds[r].P50
			spread = append(spread, fmt.Sprintf("%.0f", us(d)))
			sides[d < time.Millisecond] = true
		}
	}
	tripRow := Row{Path: "derived: agentd time per tool round trip (tool turn − text turn − model call, p50s)", Value: perTrip / 1e3, Unit: "ms"}
	if len(spread) > 1 {
		tripRow.Note = "per round: " + strings.Join(spread, ", ") + " µs"
	}
	res.Rows = append(res.Rows,
		tripRow,
		Row{Path: "derived: agentd time per turn besides the model (text turn − model call, p50s)", Value: perTurn / 1e3, Unit: "ms"})
	res.Targets = append(res.Targets, Target{Name: name, Goal: goal, Measured: fmt.Sprintf("%.2f ms", perTrip/1e3), Met: verdict(perTrip < 1000),
		Why: fmt.Sprintf("p50s at c=1: tool turn %.0f µs, text turn %.0f µs, one direct model call %.0f µs; the round trip costs agentd %.0f µs (the %s tool, its audit row, the tool call and result persisted, a second model request built and parsed). A whole text turn costs agentd %.0f µs besides the model (HTTP API, new session, run, messages stored).",
			tool.P50us, text.P50us, model.P50us, perTrip, toolForLoop, perTurn)})
	if len(spread) > 1 {
		t := &res.Targets[len(res.Targets)-1]
		t.Why += " The same difference within each round: " + strings.Join(spread, ", ") + " µs."
		if len(sides) > 1 {
			t.Why += " Rounds disagree: the verdict is within this machine's noise."
		}
	}
	if perTrip < 0 {
		res.Notes = append(res.Notes, "The derived round-trip time is negative: noise larger than the effect; rerun on a quieter machine.")
	}
	return nil
}
