package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/a2aedge"
)

const a2aUsage = "agentd a2a discover URL [--allow-private] | send AGENT_OR_URL MESSAGE [--context ID] [--task ID] | task ID [--agent AGENT_OR_URL] [--cancel] | agents  (add --json for raw output)"

// runA2A drives the daemon's A2A client through /api/a2a: the daemon
// holds the external agents' credentials and the SSRF guard, so the CLI
// never talks to remote agents itself.
func runA2A(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: %s", errUsage, a2aUsage)
	}
	fs := e.newFlags("a2a " + args[0])
	asJSON := fs.Bool("json", false, "print the raw JSON answer")
	allowPrivate := fs.Bool("allow-private", false, "discover: allow a loopback or private address")
	contextID := fs.String("context", "", "send: continue this conversation (contextId)")
	taskID := fs.String("task", "", "send: answer this task, which is waiting for input")
	target := fs.String("agent", "", "task: the external agent or URL the task belongs to")
	cancel := fs.Bool("cancel", false, "task: cancel it")
	if err := fs.Parse(a2aArgs(args[1:])); err != nil {
		return err
	}
	rest := fs.Args()
	c, _, err := e.client()
	if err != nil {
		return err
	}
	switch args[0] {
	case "discover":
		if len(rest) != 1 {
			return fmt.Errorf("%w: agentd a2a discover URL", errUsage)
		}
		var card a2a.AgentCard
		if err := c.Post(ctx, "/api/a2a/discover", a2aedge.DiscoverRequest{URL: rest[0], AllowPrivate: *allowPrivate}, &card); err != nil {
			return err
		}
		if *asJSON {
			return a2aPrintJSON(e.stdout, card)
		}
		fmt.Fprintf(e.stdout, "name:        %s\ndescription: %s\nversion:     %s\nstreaming:   %v\npush:        %v\n",
			card.Name, card.Description, card.Version, card.Capabilities.Streaming, card.Capabilities.PushNotifications)
		for _, iface := range card.SupportedInterfaces {
			fmt.Fprintf(e.stdout, "endpoint:    %s (%s %s)\n", iface.URL, iface.ProtocolBinding, iface.ProtocolVersion)
		}
		for _, s := range card.Skills {
			fmt.Fprintf(e.stdout, "skill:       %s: %s\n", s.ID, s.Description)
		}
		return nil
	case "send":
		if len(rest) < 2 {
			return fmt.Errorf("%w: agentd a2a send AGENT_OR_URL MESSAGE", errUsage)
		}
		req := a2aedge.APISendRequest{Agent: rest[0], SendRequest: a2aedge.SendRequest{
			Message: strings.Join(rest[1:], " "), ContextID: *contextID, TaskID: *taskID}}
		var out a2aedge.APISendResponse
		if err := c.Post(ctx, "/api/a2a/send", req, &out); err != nil {
			return err
		}
		if *asJSON {
			return a2aPrintJSON(e.stdout, out)
		}
		a2aPrintTask(e.stdout, out.Task, out.Text)
		return nil
	case "task":
		if len(rest) != 1 {
			return fmt.Errorf("%w: agentd a2a task ID", errUsage)
		}
		path := "/api/a2a/tasks/" + url.PathEscape(rest[0])
		if *cancel {
			path += "/cancel"
		}
		if *target != "" {
			path += "?agent=" + url.QueryEscape(*target)
		}
		var out struct {
			Task   *a2a.Task `json:"task"`
			Text   string    `json:"text"`
			Source string    `json:"source"`
		}
		var err error
		if *cancel {
			err = c.Post(ctx, path, nil, &out)
		} else {
			err = c.Get(ctx, path, &out)
		}
		if err != nil {
			return err
		}
		if *asJSON {
			return a2aPrintJSON(e.stdout, out)
		}
		if out.Text == "" && out.Task != nil {
			out.Text = a2aedge.ResultText(out.Task)
		}
		a2aPrintTask(e.stdout, out.Task, out.Text)
		return nil
	case "agents":
		var out struct {
			Agents []a2aedge.RemoteStatus `json:"agents"`
		}
		if err := c.Get(ctx, "/api/a2a/agents", &out); err != nil {
			return err
		}
		if *asJSON {
			return a2aPrintJSON(e.stdout, out)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tURL\tSTATE\tTOOL")
		for _, a := range out.Agents {
			state := "discovered"
			if !a.Discovered {
				state = "pending"
				if a.Error != "" {
					state = "failed: " + a.Error
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Name, a.URL, state, a.Tool)
		}
		return tw.Flush()
	}
	return fmt.Errorf("%w: unknown a2a command %q; %s", errUsage, args[0], a2aUsage)
}

// a2aArgs moves flags after positional arguments to the front, so both
// `send AGENT --context X MSG` and `send --context X AGENT MSG` work.
func a2aArgs(args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && a2aTakesValue[name] && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			pos = append(pos, a)
		}
	}
	return append(flags, pos...)
}

var a2aTakesValue = map[string]bool{"context": true, "task": true, "agent": true}

func a2aPrintTask(w io.Writer, t *a2a.Task, text string) {
	if t == nil {
		return
	}
	if text != "" {
		fmt.Fprintln(w, text)
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "state: %s  task: %s  context: %s\n", a2aedge.LegacyStatus(t.Status.State), t.ID, t.ContextID)
	if t.Status.State == a2a.TaskStateInputRequired {
		fmt.Fprintf(w, "the agent is waiting for input: agentd a2a send AGENT --task %s ANSWER\n", t.ID)
	}
}

func a2aPrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
