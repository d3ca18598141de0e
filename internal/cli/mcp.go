package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/tool"
)

func (e *env) mcpCmd() *cobra.Command {
	var standalone bool
	cmd := &cobra.Command{
		Use:   "mcp [COMMAND]",
		Short: "serve MCP on stdio (no subcommand); servers, tools, call inspect the upstreams",
		Long: `Without a subcommand, serve MCP on stdin/stdout for an editor
({"command": "agentd", "args": ["mcp"]}): relayed to the running daemon's
/mcp when one answers, else served in-process. The subcommands inspect the
daemon's upstream MCP servers and call their tools.`,
		Example: `  agentd mcp                    # for an MCP host's config
  agentd mcp servers
  agentd mcp tools everything
  agentd mcp call mcp_everything_get-sum --arg a=1 --arg b=2`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownSubcommand(cmd, args[0])
			}
			return e.mcpServe(cmd.Context(), standalone)
		},
	}
	cmd.Flags().BoolVar(&standalone, "standalone", false, "serve in-process even when a daemon is running")

	var kv []string
	var raw string
	call := &cobra.Command{
		Use:   "call TOOL",
		Short: "call a tool through the daemon's pipeline (policy, approval, audit)",
		Example: `  agentd mcp call mcp_everything_echo --arg message=hi
  agentd mcp call mcp_everything_get-sum --arg a=1 --arg b=2
  agentd mcp call mcp_everything_get-sum --json '{"a":1,"b":2}'`,
		Args: exactArgs(1, "a TOOL name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			argsJSON, err := buildArgs(kv, raw)
			if err != nil {
				return &usageError{err.Error()}
			}
			c, _, err := e.client()
			if err != nil {
				return err
			}
			var out map[string]any
			if err := c.Post(cmd.Context(), "/api/tools/"+url.PathEscape(args[0])+"/call", argsJSON, &out); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, out["content"])
			if isErr, _ := out["is_error"].(bool); isErr {
				return fmt.Errorf("tool %s returned an error", args[0])
			}
			return nil
		},
	}
	call.Flags().StringArrayVar(&kv, "arg", nil, "argument k=v (repeatable; v is parsed as JSON when it is valid JSON, else a string)")
	call.Flags().StringVar(&raw, "json", "", "all arguments as one JSON object")

	cmd.AddCommand(&cobra.Command{
		Use:     "servers",
		Short:   "print the upstream MCP servers and their state as JSON",
		Example: "  agentd mcp servers",
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := e.client()
			if err != nil {
				return err
			}
			var out map[string]any
			if err := c.Get(cmd.Context(), "/api/mcp/servers", &out); err != nil {
				return err
			}
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(out)
		},
	}, &cobra.Command{
		Use:     "tools [SERVER]",
		Short:   "list the upstream MCP servers' tools, of one server or all",
		Example: "  agentd mcp tools\n  agentd mcp tools everything",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("want at most one SERVER, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := e.client()
			if err != nil {
				return err
			}
			var out struct {
				Tools []tool.Spec `json:"tools"`
			}
			if err := c.Get(cmd.Context(), "/api/tools", &out); err != nil {
				return err
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOOL\tSERVER\tDESCRIPTION")
			for _, t := range out.Tools {
				if t.Origin != tool.OriginMCP || (len(args) > 0 && t.Server != args[0]) {
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Server, abbreviate(t.Description, 80))
			}
			return tw.Flush()
		},
	}, call)
	return cmd
}

// buildArgs turns --arg k=v pairs into a JSON object; values that parse as
// JSON (numbers, booleans, objects) keep their type, so get-sum's a=1
// arrives as a number.
func buildArgs(kv []string, raw string) (json.RawMessage, error) {
	obj := map[string]any{}
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return nil, fmt.Errorf("--json: %v", err)
		}
	}
	for _, p := range kv {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--arg %q: want key=value", p)
		}
		var val any
		if err := json.Unmarshal([]byte(v), &val); err != nil {
			if _, nerr := strconv.ParseFloat(v, 64); nerr == nil {
				return nil, fmt.Errorf("--arg %q: bad number", p)
			}
			val = v
		}
		obj[k] = val
	}
	return json.Marshal(obj)
}
