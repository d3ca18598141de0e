package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentd/agentd/internal/client"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

func runMain(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(context.Background(), args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// commandPaths lists every command of the tree as its words after
// "agentd", the root as none.
func commandPaths() [][]string {
	root := (&env{stdin: os.Stdin, stdout: io.Discard, stderr: io.Discard}).rootCmd()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		out = append(out, path)
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() || s.Name() == "help" {
				walk(s, append(append([]string{}, path...), s.Name()))
			}
		}
	}
	walk(root, nil)
	return out
}

// TestHelpEverywhere: `--help` (anywhere on the line) and `help` print
// every command's usage and examples and run nothing: the daemon these
// commands would call fails the test if anything reaches it.
func TestHelpEverywhere(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("help ran the command: %s %s", r.Method, r.URL)
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer api.Close()
	t.Setenv("AGENTD_HOME", t.TempDir())
	t.Setenv("AGENTD_ADDR", api.URL)
	paths := commandPaths()
	if len(paths) < 25 {
		t.Fatalf("only %d commands in the tree", len(paths))
	}
	for _, path := range paths {
		t.Run(strings.Join(append([]string{"agentd"}, path...), " "), func(t *testing.T) {
			code, help, errOut := runMain(append(path, "--help")...)
			if code != 0 || errOut != "" || !strings.Contains(help, "Usage:") {
				t.Fatalf("--help: exit %d, stdout %q, stderr %q", code, help, errOut)
			}
			generated := len(path) > 0 && (path[0] == "completion" || path[0] == "help")
			if !generated && !strings.Contains(help, "Examples:") {
				t.Errorf("no examples in:\n%s", help)
			}
			if code, out, _ := runMain(append([]string{"help"}, path...)...); code != 0 || out != help {
				t.Errorf("help %s: exit %d, printed\n%s\nwhile --help printed\n%s", strings.Join(path, " "), code, out, help)
			}
			if code, out, _ := runMain(append(path, "-h")...); code != 0 || out != help {
				t.Errorf("-h: exit %d", code)
			}
		})
	}
	// --help after arguments is help too, not an argument: mcp call used
	// to call a tool named --help; chat sent it as the message.
	for _, args := range [][]string{
		{"mcp", "call", "mcp_everything_echo", "--help"},
		{"chat", "assistant", "hello", "--help"},
		{"a2a", "send", "weather", "hi", "--help"},
		{"--config", "x.toml", "agents", "show", "assistant", "-h"},
	} {
		if code, out, errOut := runMain(args...); code != 0 || !strings.Contains(out, "Usage:") || errOut != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}

// TestUsageErrors: a wrong command line exits 2, says what is wrong,
// suggests the command meant and points at --help.
func TestUsageErrors(t *testing.T) {
	t.Setenv("AGENTD_HOME", t.TempDir())
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"chta"}, []string{`unknown command "chta" for "agentd"`, "Did you mean this?", "chat", "Run 'agentd --help' for usage."}},
		{[]string{"agnets", "list"}, []string{"Did you mean this?", "agents"}},
		{[]string{"agents", "lst"}, []string{`unknown command "lst" for "agentd agents"`, "Did you mean this?", "list", "Run 'agentd agents --help'"}},
		{[]string{"mcp", "tool"}, []string{"Did you mean this?", "tools"}},
		{[]string{"a2a", "frobnicate"}, []string{`unknown command "frobnicate"`, "agents, discover, send, task"}},
		{[]string{"principals", "newkey"}, []string{"Did you mean this?", "new-key"}},
		{[]string{"agents"}, []string{"a subcommand is required"}},
		{[]string{"chat"}, []string{"agentd chat: want an AGENT", "Run 'agentd chat --help'"}},
		{[]string{"agents", "show"}, []string{"want an agent NAME, got 0"}},
		{[]string{"health", "now"}, []string{"want no arguments"}},
		{[]string{"--bogus", "health"}, []string{"unknown flag: --bogus"}},
		{[]string{"health", "--timeout", "soon"}, []string{`invalid argument "soon"`}},
		{[]string{"mcp", "call", "t", "--arg", "novalue"}, []string{`--arg "novalue": want key=value`}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runMain(tc.args...)
			if code != ExitUsage || out != "" {
				t.Errorf("exit %d (want %d), stdout %q", code, ExitUsage, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

// TestCompletion: the scripts for each shell, and the completions they
// ask the binary for: commands, flags, and agent names from the daemon.
func TestCompletion(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, nil)
	d := startDaemon(t, "openai", model.URL, "")
	for shell, marker := range map[string]string{
		"bash": "__start_agentd", "zsh": "#compdef agentd", "fish": "complete -c agentd", "powershell": "Register-ArgumentCompleter",
	} {
		if code, out, errOut := d.run(t, "completion", shell); code != 0 || !strings.Contains(out, marker) {
			t.Errorf("completion %s: exit %d, %s, script lacks %q", shell, code, errOut, marker)
		}
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "ag"}, []string{"agents\t"}},
		{[]string{"__complete", "mcp", ""}, []string{"call\t", "servers\t", "tools\t"}},
		{[]string{"__complete", "chat", ""}, []string{"assistant\ttest assistant"}},
		{[]string{"__complete", "agents", "show", "as"}, []string{"assistant"}},
		{[]string{"__complete", "health", "--ti"}, []string{"--timeout"}},
	} {
		code, out, errOut := d.run(t, tc.args...)
		for _, w := range tc.want {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("%q: exit %d, %q lacks %q (%s)", tc.args, code, out, w, errOut)
			}
		}
	}
}

// TestClientCommandsFindTheDaemon: every client command reaches the
// daemon at --addr, else AGENTD_ADDR, else where `start --listen` said
// it listens, and fails (exit 1, saying so) where none answers.
func TestClientCommandsFindTheDaemon(t *testing.T) {
	model := llmtest.NewOpenAIServer(t, llmtest.Always(llmtest.Reply{Text: "pong"}))
	home := t.TempDir()
	t.Setenv("AGENTD_HOME", home)
	t.Setenv("AGENTD_ADDR", "")
	t.Setenv("FAKE_LLM_KEY", "sk-test")
	closed := freeAddr(t) // the config's listen: nothing answers there
	file := filepath.Join(home, "config.toml")
	os.WriteFile(file, []byte(fmt.Sprintf(`listen = %q

[providers.fake]
kind = "openai"
base_url = %q
api_key_env = "FAKE_LLM_KEY"

[[agents]]
name = "assistant"
provider = "fake"
model = "m"
`, closed, model.URL)), 0o600)

	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"start", "--config", file, "--listen", addr}, strings.NewReader(""), logs, logs)
	}()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if code := <-done; code != 0 {
				t.Errorf("start exited %d\n%s", code, logs)
			}
		}
	}
	defer stop()
	c := client.New("http://"+addr, "")
	deadline := time.Now().Add(10 * time.Second)
	for _, err := c.Health(ctx); err != nil; _, err = c.Health(ctx) {
		if time.Now().After(deadline) {
			t.Fatalf("daemon not healthy: %v\n%s", err, logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "url=http://"+addr+"/") {
		t.Errorf("the start log does not give the dashboard's URL:\n%s", logs)
	}

	commands := [][]string{
		{"health"},
		{"agents", "list"},
		{"agents", "show", "assistant"},
		{"chat", "assistant", "ping"},
		{"mcp", "servers"},
		{"mcp", "tools"},
	}
	other := filepath.Join(t.TempDir(), "other.toml") // same listen, but not the config the daemon recorded
	data, _ := os.ReadFile(file)
	os.WriteFile(other, data, 0o600)
	for _, tc := range []struct {
		name   string
		env    string
		global []string
		ok     bool
	}{
		{"recorded by start --listen", "", []string{"--config", file}, true},
		{"AGENTD_ADDR", addr, []string{"--config", other}, true},
		{"--addr over AGENTD_ADDR", closed, []string{"--config", other, "--addr", addr}, true},
		{"AGENTD_ADDR over the record", closed, []string{"--config", file}, false},
		{"another config's listen", "", []string{"--config", other}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AGENTD_ADDR", tc.env)
			for _, args := range commands {
				code, out, errOut := runMain(append(append([]string{}, tc.global...), args...)...)
				switch {
				case tc.ok && code != 0:
					t.Errorf("%q: exit %d: %s", args, code, errOut)
				case !tc.ok && (code != ExitFailure || !strings.Contains(errOut, "agentd is not running")):
					t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1, not running", args, code, out, errOut)
				}
			}
		})
	}
	stop()
	if _, err := os.Stat(filepath.Join(home, "daemon.json")); !os.IsNotExist(err) {
		t.Errorf("daemon.json left after the daemon stopped: %v", err)
	}
}
