//go:build linux || darwin

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reeflective/readline"
	"golang.org/x/sys/unix"

	"github.com/agentd/agentd/internal/client"
	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/tool"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}

// interactive chats at a terminal. The prompt is
// github.com/reeflective/readline's (maintained, pure Go, inputrc-aware:
// emacs/vi editing, history search, bracketed paste, multi-line input);
// while an answer streams, runKeys holds the terminal so that Ctrl-C is
// a key that cancels the run rather than a signal that ends the process.
func (ch *chat) interactive(ctx context.Context, cfg *config.Config) error {
	e := ch.e
	rl := readline.NewShell()
	_ = rl.Config.Set("enable-bracketed-paste", true)
	// The prompt is one short line: its width is known, so no cursor
	// position query (a round trip that stalls on slow links).
	_ = rl.Config.Set("cursor-position-probe", false)
	rl.Prompt.Primary(func() string { return ch.agent + "> " })
	rl.Prompt.Secondary(func() string { return "… " })
	// A line ending in a backslash continues on the next one.
	rl.AcceptMultiline = func(line []rune) bool {
		return !strings.HasSuffix(strings.TrimRight(string(line), " \t"), `\`)
	}
	if err := os.MkdirAll(cfg.Home, 0o700); err == nil {
		rl.History.AddFromFile("chat history", filepath.Join(cfg.Home, "chat_history"))
	}
	fmt.Fprintf(e.stderr, "chatting with %s: Enter sends, a trailing \\ continues the line, Ctrl-C stops an answer, Ctrl-D quits\n", ch.agent)
	// SIGTERM ends the chat at the prompt too: the editor blocks in its
	// read, so it gets a Ctrl-C as if typed, and is woken to see it; the
	// loop then sees ctx done, and the editor has put the terminal back.
	defer context.AfterFunc(ctx, func() {
		rl.Keys.Feed(false, 3)
		rl.Keys.RequestRefresh()
	})()
	for ctx.Err() == nil {
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			continue // Ctrl-C at the prompt drops the line, as in a shell
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		msg := strings.TrimSpace(strings.ReplaceAll(line, "\\\n", "\n"))
		if msg == "" {
			continue
		}
		if _, err := ch.ttyTurn(ctx, msg); err != nil {
			if ctx.Err() != nil {
				return nil // terminated during the answer
			}
			if errors.Is(err, client.ErrNotRunning) {
				return err
			}
			fmt.Fprintf(e.stderr, "error: %v\n", err)
		}
	}
	return nil
}

// ttyTurn runs one turn with the terminal held by runKeys: Ctrl-C
// cancels the turn (the daemon cancels the run when its stream closes),
// which is then stopped, not failed.
func (ch *chat) ttyTurn(ctx context.Context, msg string) (stopped bool, err error) {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	keys, err := startRunKeys(int(os.Stdin.Fd()), cancel)
	if err != nil {
		_, err := ch.turn(runCtx, msg, nil)
		return false, err
	}
	_, err = ch.turn(runCtx, msg, keys.ask(ch.e.stderr))
	keys.stop()
	if runCtx.Err() != nil && ctx.Err() == nil {
		fmt.Fprintln(ch.e.stderr, "(stopped)")
		return true, nil
	}
	return false, err
}

// runKeys reads the terminal while a turn runs: canonical mode, echo and
// signals off, so Ctrl-C arrives as a byte (and cancels the turn) and an
// approval's answer is one key. Output processing stays on, so the
// answer's newlines print as usual.
type runKeys struct {
	fd           int
	saved        unix.Termios
	wakeR, wakeW int
	keys         chan byte
	done         chan struct{}
}

func startRunKeys(fd int, cancel func()) (*runKeys, error) {
	saved, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	t := *saved
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG | unix.IEXTEN
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &t); err != nil {
		return nil, err
	}
	var p [2]int
	if err := unix.Pipe(p[:]); err != nil {
		_ = unix.IoctlSetTermios(fd, ioctlSetTermios, saved)
		return nil, err
	}
	k := &runKeys{fd: fd, saved: *saved, wakeR: p[0], wakeW: p[1], keys: make(chan byte, 16), done: make(chan struct{})}
	go k.read(cancel)
	return k, nil
}

// read forwards keys until stop: it polls the terminal and a wake pipe,
// so it never sits in a read that would steal the prompt's next key.
func (k *runKeys) read(cancel func()) {
	defer close(k.done)
	buf := make([]byte, 64)
	for {
		fds := []unix.PollFd{{Fd: int32(k.fd), Events: unix.POLLIN}, {Fd: int32(k.wakeR), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return // hung up
		}
		n, err := unix.Read(k.fd, buf)
		if n <= 0 || err != nil {
			return
		}
		for _, b := range buf[:n] {
			if b == 3 { // Ctrl-C
				cancel()
				continue
			}
			select {
			case k.keys <- b:
			default: // typed ahead while nothing asks: dropped
			}
		}
	}
}

// stop ends read and gives the terminal back as it was.
func (k *runKeys) stop() {
	_, _ = unix.Write(k.wakeW, []byte{0})
	<-k.done
	unix.Close(k.wakeR)
	unix.Close(k.wakeW)
	_ = unix.IoctlSetTermios(k.fd, ioctlSetTermios, &k.saved)
}

// ask returns the asker that prompts on w and takes one key: o(nce),
// s(ession) or r(eject) (y and n too).
func (k *runKeys) ask(w io.Writer) asker {
	return func(ctx context.Context, p tool.PendingApproval) (tool.Decision, bool) {
		for len(k.keys) > 0 { // nothing typed before the question answers it
			<-k.keys
		}
		fmt.Fprint(w, "  approve? [o]nce, [s]ession, [r]eject: ")
		for {
			select {
			case <-ctx.Done():
				fmt.Fprintln(w)
				return "", false
			case b := <-k.keys:
				var d tool.Decision
				switch b {
				case 'o', 'O', 'y', 'Y':
					d = tool.ApproveOnce
				case 's', 'S', 'a', 'A':
					d = tool.ApproveAll
				case 'r', 'R', 'n', 'N':
					d = tool.Reject
				default:
					continue
				}
				fmt.Fprintln(w, d)
				return d, true
			}
		}
	}
}
