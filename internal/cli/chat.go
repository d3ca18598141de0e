package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/client"
	"github.com/agentd/agentd/internal/httpapi"
)

func runChat(ctx context.Context, e *env, args []string) error {
	fs := e.newFlags("chat")
	session := fs.String("session", "", "continue this session id")
	quiet := fs.Bool("quiet", false, "print only the agent's text, not tool activity")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		return fmt.Errorf("%w: agentd chat [--session ID] AGENT [MESSAGE]", errUsage)
	}
	name := fs.Arg(0)
	c, _, err := e.client()
	if err != nil {
		return err
	}
	if fs.NArg() > 1 {
		_, err := e.turn(ctx, c, name, *session, strings.Join(fs.Args()[1:], " "), *quiet)
		return err
	}
	// Interactive: one turn per line, in one session.
	fmt.Fprintf(e.stderr, "chatting with %s; an empty line or Ctrl-D ends\n", name)
	in := bufio.NewScanner(e.stdin)
	in.Buffer(make([]byte, 64*1024), 1<<20)
	sid := *session
	for {
		fmt.Fprint(e.stderr, "> ")
		if !in.Scan() {
			fmt.Fprintln(e.stderr)
			return in.Err()
		}
		line := strings.TrimSpace(in.Text())
		if line == "" {
			return nil
		}
		id, err := e.turn(ctx, c, name, sid, line, *quiet)
		if err != nil {
			if errors.Is(err, client.ErrNotRunning) || ctx.Err() != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "error: %v\n", err)
		}
		if id != "" {
			sid = id
		}
	}
}

// turn streams one message's run to the terminal: text to stdout, tool
// activity to stderr (so piping stdout keeps only the answer).
func (e *env) turn(ctx context.Context, c *client.Client, name, session, msg string, quiet bool) (string, error) {
	var sid string
	var wrote bool
	final, err := c.Stream(ctx, name, httpapi.MessageRequest{Message: msg, SessionID: session}, func(ev agent.Event) {
		switch ev.Type {
		case agent.EventSession:
			sid = ev.SessionID
		case agent.EventText:
			io.WriteString(e.stdout, ev.Text)
			wrote = true
		case agent.EventToolStarted:
			if !quiet {
				fmt.Fprintf(e.stderr, "\n⚙ %s %s\n", ev.ToolCall.Name, abbreviate(string(ev.ToolCall.Arguments), 120))
			}
		case agent.EventToolFinished:
			if !quiet {
				status := "ok"
				if ev.ToolResult.IsError {
					status = "error"
				}
				fmt.Fprintf(e.stderr, "  ↳ %s: %s\n", status, abbreviate(ev.ToolResult.Content, 160))
			}
		}
	})
	if wrote {
		fmt.Fprintln(e.stdout)
	}
	if err != nil {
		return sid, err
	}
	if final.StopReason != "" && final.StopReason != agent.StopEndTurn {
		fmt.Fprintf(e.stderr, "(stopped: %s)\n", final.StopReason)
	}
	if !quiet && session == "" && sid != "" {
		fmt.Fprintf(e.stderr, "(session %s)\n", sid)
	}
	return sid, nil
}

func abbreviate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
