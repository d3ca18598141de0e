package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/a2aedge"
)

// a2aCmd drives the daemon's A2A client through /api/a2a: the daemon
// holds the external agents' credentials and the SSRF guard, so the CLI
// never talks to remote agents itself.
func (e *env) a2aCmd() *cobra.Command {
	var asJSON bool
	cmd := group(&cobra.Command{
		Use:   "a2a COMMAND",
		Short: "A2A client: discover, send to, and follow external agents through the daemon",
		Example: `  agentd a2a agents
  agentd a2a discover https://agents.example.com/weather
  agentd a2a send weather "will it rain in Lyon tomorrow?"
  agentd a2a task TASK_ID --agent weather`,
	})
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print the raw JSON answer")

	var allowPrivate bool
	discover := &cobra.Command{
		Use:     "discover URL",
		Short:   "fetch and print an agent's card",
		Example: "  agentd a2a discover https://agents.example.com/weather\n  agentd a2a discover http://127.0.0.1:4300/a2a/agents/assistant --allow-private",
		Args:    exactArgs(1, "a URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := e.client()
			if err != nil {
				return err
			}
			var card a2a.AgentCard
			if err := c.Post(cmd.Context(), "/api/a2a/discover", a2aedge.DiscoverRequest{URL: args[0], AllowPrivate: allowPrivate}, &card); err != nil {
				return err
			}
			if asJSON {
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
		},
	}
	discover.Flags().BoolVar(&allowPrivate, "allow-private", false, "allow a loopback or private address")

	var contextID, taskID string
	send := &cobra.Command{
		Use:   "send AGENT_OR_URL MESSAGE...",
		Short: "send a message to an external agent and print its answer",
		Example: `  agentd a2a send weather "will it rain in Lyon tomorrow?"
  agentd a2a send weather and in Paris? --context CONTEXT_ID
  agentd a2a send weather yes --task TASK_ID    # answer a task waiting for input`,
		Args: minArgs(2, "an AGENT_OR_URL and a MESSAGE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := e.client()
			if err != nil {
				return err
			}
			req := a2aedge.APISendRequest{Agent: args[0], SendRequest: a2aedge.SendRequest{
				Message: strings.Join(args[1:], " "), ContextID: contextID, TaskID: taskID}}
			var out a2aedge.APISendResponse
			if err := c.Post(cmd.Context(), "/api/a2a/send", req, &out); err != nil {
				return err
			}
			if asJSON {
				return a2aPrintJSON(e.stdout, out)
			}
			a2aPrintTask(e.stdout, out.Task, out.Text)
			return nil
		},
	}
	send.Flags().StringVar(&contextID, "context", "", "continue this conversation (contextId)")
	send.Flags().StringVar(&taskID, "task", "", "answer this task, which is waiting for input")

	var target string
	var cancel bool
	task := &cobra.Command{
		Use:     "task ID",
		Short:   "print a task (or cancel it)",
		Example: "  agentd a2a task TASK_ID\n  agentd a2a task TASK_ID --agent weather --cancel",
		Args:    exactArgs(1, "a task ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := e.client()
			if err != nil {
				return err
			}
			path := "/api/a2a/tasks/" + url.PathEscape(args[0])
			if cancel {
				path += "/cancel"
			}
			if target != "" {
				path += "?agent=" + url.QueryEscape(target)
			}
			var out struct {
				Task   *a2a.Task `json:"task"`
				Text   string    `json:"text"`
				Source string    `json:"source"`
			}
			if cancel {
				err = c.Post(cmd.Context(), path, nil, &out)
			} else {
				err = c.Get(cmd.Context(), path, &out)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return a2aPrintJSON(e.stdout, out)
			}
			if out.Text == "" && out.Task != nil {
				out.Text = a2aedge.ResultText(out.Task)
			}
			a2aPrintTask(e.stdout, out.Task, out.Text)
			return nil
		},
	}
	task.Flags().StringVar(&target, "agent", "", "the external agent or URL the task belongs to")
	task.Flags().BoolVar(&cancel, "cancel", false, "cancel the task")

	agents := &cobra.Command{
		Use:     "agents",
		Short:   "list the configured external agents and their state",
		Example: "  agentd a2a agents",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := e.client()
			if err != nil {
				return err
			}
			var out struct {
				Agents []a2aedge.RemoteStatus `json:"agents"`
			}
			if err := c.Get(cmd.Context(), "/api/a2a/agents", &out); err != nil {
				return err
			}
			if asJSON {
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
		},
	}
	cmd.AddCommand(agents, discover, send, task)
	return cmd
}

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
