package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/agentd/agentd/internal/config"
)

func runAgents(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: agentd agents list|show NAME|create FILE.toml|delete NAME", errUsage)
	}
	c, _, err := e.client()
	if err != nil {
		return err
	}
	switch args[0] {
	case "list":
		agents, err := c.Agents(ctx)
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
	case "show":
		if len(args) != 2 {
			return fmt.Errorf("%w: agentd agents show NAME", errUsage)
		}
		a, err := c.Agent(ctx, args[1])
		if err != nil {
			return err
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(a)
	case "create":
		if len(args) != 2 {
			return fmt.Errorf("%w: agentd agents create FILE.toml (a manifest, as in agents/*.toml)", errUsage)
		}
		data, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		m, err := config.ParseManifestTOML(args[1], data)
		if err != nil {
			return err
		}
		if err := c.CreateAgent(ctx, m); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "created agent %s\n", m.Name)
		return nil
	case "delete":
		if len(args) != 2 {
			return fmt.Errorf("%w: agentd agents delete NAME", errUsage)
		}
		if err := c.DeleteAgent(ctx, args[1]); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "deleted agent %s\n", args[1])
		return nil
	}
	return fmt.Errorf("%w: unknown subcommand %q (list, show, create, delete)", errUsage, args[0])
}
