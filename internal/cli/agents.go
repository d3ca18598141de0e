package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/config"
)

func (e *env) agentsCmd() *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "agents COMMAND",
		Short: "list, show, create and delete agents",
		Example: `  agentd agents list
  agentd agents show assistant
  agentd agents create helper.toml
  agentd agents delete helper`,
	})
	cmd.AddCommand(&cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "list the agents: name, model, source, exposure, description",
		Example: "  agentd agents list",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := e.client()
			if err != nil {
				return err
			}
			agents, err := c.Agents(cmd.Context())
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tMODEL\tSOURCE\tEXPOSED\tDESCRIPTION")
			for _, a := range agents {
				m := a.Manifest
				exp := ""
				if m.Expose.MCP {
					exp += "mcp "
				}
				if m.Expose.A2A {
					exp += "a2a"
				}
				model := m.Provider + "/" + m.Model
				if m.Kind != "" && m.Kind != "llm" {
					model = m.Kind
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, model, a.Source, exp, m.Description)
			}
			return tw.Flush()
		},
	}, &cobra.Command{
		Use:               "show NAME",
		Short:             "print an agent's manifest and source as JSON",
		Example:           "  agentd agents show assistant",
		Args:              exactArgs(1, "an agent NAME"),
		ValidArgsFunction: e.completeAgents,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := e.client()
			if err != nil {
				return err
			}
			a, err := c.Agent(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(a)
		},
	}, &cobra.Command{
		Use:   "create FILE.toml",
		Short: "create an agent through the API from a manifest (as in agents/*.toml)",
		Example: `  cat > helper.toml <<'EOF'
  name = "helper"
  provider = "openai"
  model = "gpt-4.1-mini"
  EOF
  agentd agents create helper.toml`,
		Args: exactArgs(1, "a manifest FILE.toml"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := e.client()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			m, err := config.ParseManifestTOML(args[0], data)
			if err != nil {
				return err
			}
			if err := c.CreateAgent(cmd.Context(), m); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "created agent %s\n", m.Name)
			return nil
		},
	}, &cobra.Command{
		Use:               "delete NAME",
		Aliases:           []string{"rm"},
		Short:             "delete an agent created through the API (config agents stay)",
		Example:           "  agentd agents delete helper",
		Args:              exactArgs(1, "an agent NAME"),
		ValidArgsFunction: e.completeAgents,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := e.client()
			if err != nil {
				return err
			}
			if err := c.DeleteAgent(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "deleted agent %s\n", args[0])
			return nil
		},
	})
	return cmd
}
