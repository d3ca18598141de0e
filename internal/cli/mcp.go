package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/agentd/agentd/internal/tool"
)

func runMCP(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return runMCPServe(ctx, e, args)
	}
	c, _, err := e.client()
	if err != nil {
		return err
	}
	switch args[0] {
	case "servers":
		var out map[string]any
		if err := c.Get(ctx, "/api/mcp/servers", &out); err != nil {
			return err
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "tools":
		var out struct {
			Tools []tool.Spec `json:"tools"`
		}
		if err := c.Get(ctx, "/api/tools", &out); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tSERVER\tDESCRIPTION")
		for _, t := range out.Tools {
			if t.Origin != tool.OriginMCP || (len(args) > 1 && t.Server != args[1]) {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, t.Server, abbreviate(t.Description, 80))
		}
		return tw.Flush()
	case "call":
		fs := e.newFlags("mcp call")
		var kv []string
		fs.Func("arg", "argument k=v (repeatable; v is parsed as JSON when it is valid JSON, else a string)", func(s string) error {
			kv = append(kv, s)
			return nil
		})
		raw := fs.String("json", "", "all arguments as one JSON object")
		if len(args) < 2 {
			return fmt.Errorf("%w: agentd mcp call TOOL [--arg k=v]... [--json '{...}']", errUsage)
		}
		if err := fs.Parse(args[2:]); err != nil {
			return err
		}
		argsJSON, err := buildArgs(kv, *raw)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		var out map[string]any
		if err := c.Post(ctx, "/api/tools/"+url.PathEscape(args[1])+"/call", argsJSON, &out); err != nil {
			return err
		}
		fmt.Fprintln(e.stdout, out["content"])
		if isErr, _ := out["is_error"].(bool); isErr {
			return fmt.Errorf("tool %s returned an error", args[1])
		}
		return nil
	}
	return fmt.Errorf("%w: unknown subcommand %q (servers, tools, call; no subcommand serves MCP on stdio)", errUsage, args[0])
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
