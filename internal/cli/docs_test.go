package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

var updateDocs = flag.Bool("update", false, "rewrite docs/cli.md from the command tree")

// TestCLIDocsUpToDate: docs/cli.md is the command tree's help, so it
// cannot drift from the binary. After changing a command:
//
//	go test ./internal/cli -run TestCLIDocsUpToDate -update
func TestCLIDocsUpToDate(t *testing.T) {
	var buf bytes.Buffer
	writeCLIDocs(&buf, (&env{stdin: os.Stdin, stdout: io.Discard, stderr: io.Discard}).rootCmd())
	file := filepath.Join("..", "..", "docs", "cli.md")
	if *updateDocs {
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(have, buf.Bytes()) {
		t.Fatalf("docs/cli.md is stale: run go test ./internal/cli -run TestCLIDocsUpToDate -update\n--- generated:\n%s", buf.String())
	}
	for _, want := range []string{"## agentd chat", "## agentd completion bash", "## agentd mcp call", "Exit codes:", "AGENTD_ADDR"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("docs/cli.md lacks %q", want)
		}
	}
}

// writeCLIDocs writes every command's help as one Markdown page, in the
// tree's order: the page a person reads before installing.
func writeCLIDocs(w io.Writer, root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	fmt.Fprintln(w, "# agentd command line")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "<!-- Generated from the command tree by TestCLIDocsUpToDate (internal/cli/docs_test.go): edit the commands, then run\n     go test ./internal/cli -run TestCLIDocsUpToDate -update -->")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every command takes `--help` (or `agentd help COMMAND`); flags may come anywhere on the line; `--` ends them.")
	var walk func(c *cobra.Command)
	root.InitDefaultVersionFlag()
	walk = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		fmt.Fprintf(w, "\n## %s\n\n%s\n\n", c.CommandPath(), c.Short)
		if c.Long != "" {
			fmt.Fprintf(w, "%s\n\n", c.Long)
		}
		fmt.Fprintf(w, "```\n%s\n```\n", c.UseLine())
		if len(c.Aliases) > 0 {
			fmt.Fprintf(w, "\nAliases: %s\n", strings.Join(c.Aliases, ", "))
		}
		if c.Example != "" {
			fmt.Fprintf(w, "\nExamples:\n\n```\n%s\n```\n", c.Example)
		}
		if f := c.NonInheritedFlags(); f.HasAvailableFlags() {
			fmt.Fprintf(w, "\nFlags:\n\n```\n%s```\n", f.FlagUsages())
		}
		if f := c.InheritedFlags(); f.HasAvailableFlags() {
			fmt.Fprintf(w, "\nGlobal flags:\n\n```\n%s```\n", f.FlagUsages())
		}
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() || s.Name() == "help" {
				walk(s)
			}
		}
	}
	walk(root)
}
