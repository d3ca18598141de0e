package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/agent"
	"github.com/agentd/agentd/internal/client"
	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/tool"
)

func (e *env) chatCmd() *cobra.Command {
	var session string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "chat AGENT [MESSAGE...]",
		Short: "chat with an agent: one message, or an interactive session",
		Long: `With a MESSAGE, send it and stream the answer: text on stdout, tool activity
on stderr. Without one, chat interactively in one session.

In a terminal: line editing and history (Up/Down, Ctrl-R), Enter sends,
a trailing backslash continues on the next line, a paste is one message
however many lines it has; Ctrl-C stops the current answer (at the prompt
it clears the line), Ctrl-D at an empty prompt quits. A tool call that
needs approval asks: [o]nce, [s]ession (this tool, for the rest of the
session) or [r]eject. The history is kept in AGENTD_HOME/chat_history
(mode 0600; ~/.inputrc settings apply).

From a pipe: one message per line; empty lines are skipped; a trailing
backslash continues the message on the next line.`,
		Example: `  agentd chat assistant "list the files in your workspace"
  agentd chat assistant                     # interactive
  agentd chat assistant --session SESSION_ID
  echo "summarise README.md" | agentd chat assistant --quiet`,
		Args:              minArgs(1, "an AGENT"),
		ValidArgsFunction: e.completeAgents,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, cfg, err := e.client()
			if err != nil {
				return err
			}
			ch := &chat{e: e, c: c, agent: args[0], session: session, quiet: quiet}
			f, ok := e.stdin.(*os.File)
			tty := ok && f == os.Stdin && isTerminal(f)
			if len(args) > 1 {
				msg := strings.Join(args[1:], " ")
				if !tty {
					_, err := ch.turn(ctx, msg, nil)
					return err
				}
				// At a terminal one message asks for approvals too, and
				// Ctrl-C stops it (exit 1, as an interrupted command).
				stopped, err := ch.ttyTurn(ctx, msg)
				if err == nil && stopped {
					err = errors.New("stopped")
				}
				return err
			}
			if tty {
				return ch.interactive(ctx, cfg)
			}
			return ch.lines(ctx)
		},
	}
	cmd.Flags().StringVar(&session, "session", "", "continue this session id")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only the agent's text, not tool activity")
	return cmd
}

// chat is one conversation with an agent, in one session.
type chat struct {
	e       *env
	c       *client.Client
	agent   string
	session string // "" until the first turn made one
	quiet   bool
}

// lines chats from a pipe: one message per line (a trailing backslash
// continues it), empty lines skipped, until EOF.
func (ch *chat) lines(ctx context.Context) error {
	in := bufio.NewScanner(ch.e.stdin)
	in.Buffer(make([]byte, 64*1024), 1<<20)
	var msg strings.Builder
	for in.Scan() {
		line := in.Text()
		if strings.HasSuffix(line, `\`) {
			msg.WriteString(strings.TrimSuffix(line, `\`) + "\n")
			continue
		}
		msg.WriteString(line)
		text := strings.TrimSpace(msg.String())
		msg.Reset()
		if text == "" {
			continue
		}
		if _, err := ch.turn(ctx, text, nil); err != nil {
			if errors.Is(err, client.ErrNotRunning) || ctx.Err() != nil {
				return err
			}
			fmt.Fprintf(ch.e.stderr, "error: %v\n", err)
		}
	}
	if text := strings.TrimSpace(msg.String()); text != "" {
		if _, err := ch.turn(ctx, text, nil); err != nil {
			return err
		}
	}
	return in.Err()
}

// asker puts an approval request to the person at the terminal; ok is
// false when the run ended (Ctrl-C) before they answered.
type asker func(ctx context.Context, p tool.PendingApproval) (d tool.Decision, ok bool)

// turn streams one message's run to the terminal: text to stdout, tool
// activity to stderr (so piping stdout keeps only the answer). An
// approval request goes to ask; without one (a pipe) it says where to
// decide it.
func (ch *chat) turn(ctx context.Context, msg string, ask asker) (string, error) {
	e := ch.e
	first := ch.session == ""
	var midLine bool
	final, err := ch.c.Stream(ctx, ch.agent, httpapi.MessageRequest{Message: msg, SessionID: ch.session}, func(ev agent.Event) {
		// Tool activity starts on a line of its own.
		breakLine := func() {
			if midLine {
				fmt.Fprintln(e.stdout)
				midLine = false
			}
		}
		switch ev.Type {
		case agent.EventSession:
			ch.session = ev.SessionID
		case agent.EventText:
			io.WriteString(e.stdout, ev.Text)
			midLine = !strings.HasSuffix(ev.Text, "\n")
		case agent.EventToolStarted:
			if !ch.quiet {
				breakLine()
				fmt.Fprintf(e.stderr, "⚙ %s %s\n", ev.ToolCall.Name, abbreviate(string(ev.ToolCall.Arguments), 100))
			}
		case agent.EventToolFinished:
			if !ch.quiet {
				breakLine()
				fmt.Fprintf(e.stderr, "  ↳ %s\n", resultSummary(ev.ToolResult))
			}
		case agent.EventApproval:
			breakLine()
			ch.approve(ctx, *ev.Approval, ask)
		}
	})
	if midLine {
		fmt.Fprintln(e.stdout)
	}
	if err != nil {
		return ch.session, err
	}
	if final.StopReason != "" && final.StopReason != agent.StopEndTurn {
		fmt.Fprintf(e.stderr, "(stopped: %s)\n", final.StopReason)
	}
	if !ch.quiet && first && ch.session != "" {
		fmt.Fprintf(e.stderr, "(session %s)\n", ch.session)
	}
	return ch.session, nil
}

// approve shows an approval request and sends the person's decision.
func (ch *chat) approve(ctx context.Context, p tool.PendingApproval, ask asker) {
	e := ch.e
	fmt.Fprintf(e.stderr, "? %s wants to call %s %s\n", p.Agent, p.Tool, abbreviate(string(p.Args), 200))
	if p.Reason != "" {
		fmt.Fprintf(e.stderr, "  because: %s\n", p.Reason)
	}
	if ask == nil {
		fmt.Fprintf(e.stderr, "  waiting for a decision in the dashboard's Approvals (id %s, until %s)\n", p.ID, p.Deadline.Local().Format(time.TimeOnly))
		return
	}
	d, ok := ask(ctx, p)
	if !ok {
		return
	}
	if err := ch.c.Post(ctx, "/api/approvals/"+url.PathEscape(p.ID), httpapi.DecisionRequest{Decision: d}, nil); err != nil {
		fmt.Fprintf(e.stderr, "  the decision was not taken: %v\n", err)
	}
}

// resultSummary is a tool result in one line: its status and the start
// of its first line, with how much more there was.
func resultSummary(r *llm.ToolResult) string {
	if r == nil {
		return "ok"
	}
	status := "ok"
	if r.IsError {
		status = "error"
	}
	text := strings.TrimSpace(r.Content)
	if text == "" {
		return status
	}
	first, rest, _ := strings.Cut(text, "\n")
	out := status + ": " + abbreviate(first, 100)
	if n := strings.Count(rest, "\n"); rest != "" {
		out += fmt.Sprintf(" (+%d lines)", n+1)
	}
	return out
}

func abbreviate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
