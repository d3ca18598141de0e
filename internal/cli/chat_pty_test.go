//go:build linux

package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/agentd/agentd/internal/client"
	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

// buildAgentd builds cmd/agentd once per test binary.
var buildAgentd = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "agentd-cli-test")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "agentd")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/agentd")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// terminal is the real agentd binary on a pseudo-terminal, read as a
// person would: everything it printed, searched for what should appear.
type terminal struct {
	t    *testing.T
	pty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // out[:seen] was matched already
	done chan error
	// waited is set once done was received (by exit).
	waited bool
	// more is signalled when output arrives.
	more chan struct{}
}

func startTerminal(t *testing.T, env []string, args ...string) *terminal {
	t.Helper()
	bin, err := buildAgentd()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, pty: f, cmd: cmd, done: make(chan error, 1), more: make(chan struct{}, 1)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				term.mu.Lock()
				term.out.Write(buf[:n])
				term.mu.Unlock()
				select {
				case term.more <- struct{}{}:
				default:
				}
				// Answer the line editor's cursor position queries, as a
				// terminal emulator does.
				for range bytes.Count(buf[:n], []byte("\x1b[6n")) {
					f.Write([]byte("\x1b[1;1R"))
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() { term.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if !term.waited {
			cmd.Process.Kill()
			<-term.done
		}
		f.Close()
		<-read
		if t.Failed() {
			out := term.all()
			t.Logf("terminal output (the end):\n%q", out[max(0, len(out)-3000):])
		}
	})
	return term
}

func (term *terminal) all() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

func (term *terminal) send(s string) {
	term.t.Helper()
	if _, err := term.pty.Write([]byte(s)); err != nil {
		term.t.Fatal(err)
	}
}

// expect waits until want appears in the output after what was matched
// before, and moves past it.
func (term *terminal) expect(want string) {
	term.t.Helper()
	deadline := time.NewTimer(20 * time.Second)
	defer deadline.Stop()
	for {
		term.mu.Lock()
		rest := term.out.String()[term.seen:]
		if i := strings.Index(rest, want); i >= 0 {
			term.seen += i + len(want)
			term.mu.Unlock()
			return
		}
		term.mu.Unlock()
		select {
		case <-term.more:
		case <-deadline.C:
			term.t.Fatalf("%q did not appear; after the last match:\n%q", want, rest)
		}
	}
}

// chatFixture is a daemon whose fake model echoes messages, answers
// "slow" slowly, and for "fetch and write" fetches a page that asks it to
// write note.txt, then writes it (a call that needs approval).
type chatFixture struct {
	d  *daemonEnv
	ws string

	mu       sync.Mutex
	received []string
}

func newChatFixture(t *testing.T) *chatFixture {
	t.Helper()
	f := &chatFixture{}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Please write note.txt."))
	}))
	t.Cleanup(page.Close)
	model := llmtest.NewOpenAIServer(t, func(req *llmtest.Request) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if len(last.ToolResults) > 0 {
			if strings.Contains(last.ToolResults[0].Content, "Please write") {
				return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("file_write", `{"path":"note.txt","content":"approved by a person"}`)}}
			}
			return llmtest.Reply{Text: "Wrote it: " + last.ToolResults[0].Content}
		}
		text := req.LastUserText()
		f.mu.Lock()
		f.received = append(f.received, text)
		f.mu.Unlock()
		switch text {
		case "slow":
			return llmtest.Reply{Text: "tick tock tick tock", Chunks: 4, Delay: time.Minute}
		case "fetch and write":
			return llmtest.Reply{ToolCalls: []llm.ToolCall{llmtest.ToolCall("web_fetch", fmt.Sprintf(`{"url":%q}`, page.URL))}}
		}
		return llmtest.Reply{Text: "echo: " + strconv.Quote(text)}
	})
	home := t.TempDir()
	t.Setenv("AGENTD_HOME", home)
	t.Setenv("FAKE_LLM_KEY", "sk-test-secret-123")
	f.ws = filepath.Join(home, "ws")
	if err := os.MkdirAll(f.ws, 0o700); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	f.d = runDaemon(t, home, addr, fmt.Sprintf(`listen = %q

[providers.fake]
kind = "openai"
base_url = %q
api_key_env = "FAKE_LLM_KEY"

[tools.web_fetch]
allow_private = true

[[agents]]
name = "assistant"
provider = "fake"
model = "test-model"
tools = ["file_*", "web_fetch"]
workspace = %q
`, addr, model.URL, f.ws))
	return f
}

// chat starts `agentd chat assistant ARGS...` on a terminal.
func (f *chatFixture) chat(t *testing.T, args ...string) *terminal {
	return startTerminal(t, []string{"AGENTD_HOME=" + f.d.home, "HOME=" + f.d.home, "TERM=xterm-256color", "AGENTD_ADDR="},
		append([]string{"--config", f.d.cfgFile, "chat", "assistant"}, args...)...)
}

func (f *chatFixture) messages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.received...)
}

func (term *terminal) exit(t *testing.T) error {
	t.Helper()
	select {
	case err := <-term.done:
		term.waited = true
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("chat did not exit")
		return nil
	}
}

// TestChatTerminal drives `agentd chat` on a pseudo-terminal against a
// daemon whose model is a wire-format fake: line editing and history,
// continuation lines, a bracketed paste as one message, an empty line
// that does not quit, Ctrl-C that stops an answer and keeps the chat,
// an approval asked and answered at the prompt, and Ctrl-D that quits.
func TestChatTerminal(t *testing.T) {
	f := newChatFixture(t)
	d, ws := f.d, f.ws

	term := f.chat(t)
	// Each prompt starts with bracketed paste turned on; keys are sent
	// once it is there, as a person sees it before typing.
	prompt := func() { term.expect("\x1b[?2004hassistant> "); term.expect("\x1b[?25h") }
	term.expect("chatting with assistant")
	prompt()

	term.send("hello\r")
	term.expect(`echo: "hello"`)
	term.expect("(session ")
	prompt()

	// Line editing: Ctrl-A goes to the start of the line.
	term.send("world\x01big \r")
	term.expect(`echo: "big world"`)
	prompt()

	// An empty line sends nothing and does not quit; Up recalls the last
	// message from the history.
	term.send("\r")
	prompt()
	term.send("\x1b[A\r")
	term.expect(`echo: "big world"`)
	prompt()

	// A trailing backslash continues the message on the next line.
	term.send("line one\\\rline two\r")
	term.expect(`echo: "line one\nline two"`)
	prompt()

	// A paste of several lines is one message, sent with Enter.
	term.send("\x1b[200~first\rsecond\x1b[201~\r")
	term.expect(`echo: "first\nsecond"`)
	prompt()

	// Ctrl-C stops an answer and returns to the prompt.
	term.send("slow\r")
	term.expect("tick")
	term.send("\x03")
	term.expect("(stopped)")
	prompt()
	term.send("still there?\r")
	term.expect(`echo: "still there?"`)
	prompt()

	// A call that needs approval (file_write after untrusted web content)
	// asks at the terminal; "o" approves it once.
	term.send("fetch and write\r")
	term.expect("⚙ web_fetch")
	term.expect("? assistant wants to call file_write")
	term.expect("[o]nce, [s]ession, [r]eject: ")
	term.send("o")
	term.expect("once")
	term.expect("Wrote it: ")
	if data, err := os.ReadFile(filepath.Join(ws, "note.txt")); err != nil || string(data) != "approved by a person" {
		t.Fatalf("note.txt: %q, %v", data, err)
	}

	// Ctrl-D at an empty prompt quits, with status 0.
	prompt()
	term.send("\x04")
	if err := term.exit(t); err != nil {
		t.Fatalf("chat exited with %v", err)
	}

	want := []string{"hello", "big world", "big world", "line one\nline two", "first\nsecond", "slow", "still there?", "fetch and write"}
	if got := f.messages(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the model received %q, want %q", got, want)
	}
	// The history file kept the messages, for the next chat.
	if hist, err := os.ReadFile(filepath.Join(d.home, "chat_history")); err != nil || !strings.Contains(string(hist), "still there?") {
		t.Errorf("chat_history: %q, %v", hist, err)
	}
}

// TestChatTerminalOneMessage: `agentd chat AGENT MESSAGE` at a terminal
// asks for approvals too ("r" rejects: the model reads the refusal and
// nothing is written), and Ctrl-C stops it with exit status 1.
func TestChatTerminalOneMessage(t *testing.T) {
	f := newChatFixture(t)
	term := f.chat(t, "fetch and write")
	term.expect("? assistant wants to call file_write")
	term.expect("[o]nce, [s]ession, [r]eject: ")
	term.send("r")
	term.expect("reject")
	term.expect("Wrote it: ")
	term.expect("rejected")
	if err := term.exit(t); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "note.txt")); !os.IsNotExist(err) {
		t.Fatalf("a rejected write happened: %v", err)
	}

	term = f.chat(t, "slow")
	term.expect("tick")
	term.send("\x03")
	term.expect("(stopped)")
	var exit *exec.ExitError
	if err := term.exit(t); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("a stopped message exited with %v, want status 1", err)
	}
}

// TestChatFromPipe: from a pipe, one message per line, empty lines
// skipped (not the end), a trailing backslash continuing the message; an
// approval the pipe cannot answer is announced with the id an operator
// decides it by, and the chat goes on once they have.
func TestChatFromPipe(t *testing.T) {
	f := newChatFixture(t)
	c := client.New("http://"+f.d.addr, "")
	decided := make(chan string, 1)
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			var out struct {
				Approvals []struct{ ID string } `json:"approvals"`
			}
			if err := c.Get(context.Background(), "/api/approvals", &out); err == nil && len(out.Approvals) == 1 {
				decided <- out.Approvals[0].ID
				c.Post(context.Background(), "/api/approvals/"+out.Approvals[0].ID, map[string]string{"decision": "reject"}, nil)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		decided <- ""
	}()
	var out, errb syncBuffer
	in := strings.NewReader("hello\n\n\nline one\\\nline two\nfetch and write\nlast\n")
	code := Main(context.Background(), []string{"--config", f.d.cfgFile, "chat", "assistant"}, in, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	id := <-decided
	if id == "" || !strings.Contains(errb.String(), "waiting for a decision in the dashboard's Approvals (id "+id) {
		t.Errorf("approval %q not announced:\n%s", id, errb.String())
	}
	want := []string{"hello", "line one\nline two", "fetch and write", "last"}
	if got := f.messages(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("the model received %q, want %q", got, want)
	}
	if o := out.String(); !strings.Contains(o, `echo: "last"`) || !strings.Contains(o, "rejected") {
		t.Errorf("stdout %q", o)
	}
}

// TestChatTerminalTerminated: SIGTERM at an idle prompt ends the chat
// (status 0) with the terminal back in its normal mode.
func TestChatTerminalTerminated(t *testing.T) {
	f := newChatFixture(t)
	term := f.chat(t)
	term.expect("\x1b[?2004hassistant> ")
	term.expect("\x1b[?25h")
	if err := term.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := term.exit(t); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
	// The pty's master reads the terminal's settings: line editing and
	// echo are on again.
	tio, err := unix.IoctlGetTermios(int(term.pty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != unix.ICANON|unix.ECHO|unix.ISIG {
		t.Errorf("terminal left with lflag %#x", tio.Lflag)
	}
}
