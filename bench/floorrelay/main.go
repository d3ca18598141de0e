// Command floorrelay is the floor of the bench's gateway scenario: the
// least work a Streamable HTTP → stdio MCP relay can do. It runs one
// stdio MCP server as its child and forwards each POSTed JSON-RPC message
// to it as raw bytes; a request's answer goes back as application/json.
// No session, no policy, no audit, no decoding beyond finding the
// top-level "id" (rewritten to a relay-wide counter so concurrent clients
// cannot collide, and restored in the answer). Messages the server sends
// on its own (notifications, requests to the client) are dropped: the
// relay has no stream to put them on.
//
//	floorrelay -listen 127.0.0.1:0 -- node server-everything/dist/index.js
//
// It prints "listening ADDR" once it accepts connections. agentd's gateway
// does strictly more on every call; the bench reports its calls/s as a
// fraction of this relay's.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "floorrelay:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("floorrelay", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: floorrelay [-listen ADDR] -- COMMAND [ARGS...]")
	}
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stderr = io.Discard
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", fs.Arg(0), err)
	}
	r := &relay{in: bufio.NewWriterSize(stdin, 64<<10), pending: map[uint64]chan []byte{}}
	readDone := make(chan error, 1)
	go func() { readDone <- r.readLoop(stdout) }()

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		_ = cmd.Process.Kill()
		return err
	}
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening %s\n", ln.Addr())
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-readDone:
		runErr = fmt.Errorf("server's stdout ended: %w", err)
	case err := <-serveDone:
		runErr = err
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	_ = stdin.Close()
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return runErr
}

// relay forwards messages to the child's stdin and routes its answers.
type relay struct {
	mu sync.Mutex // guards in
	in *bufio.Writer

	next    atomic.Uint64
	pmu     sync.Mutex
	pending map[uint64]chan []byte
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func (r *relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		// No standalone stream, no session to delete.
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if _, err := buf.ReadFrom(io.LimitReader(req.Body, 16<<20)); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	msg := bytes.TrimSpace(buf.Bytes())
	start, end, _, ok := topLevelID(msg)
	if !ok {
		// A notification (or a response to the server): forward, nothing
		// comes back.
		if err := r.write(msg, nil); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	origID := append([]byte(nil), msg[start:end]...)
	n := r.next.Add(1)
	ch := make(chan []byte, 1)
	r.pmu.Lock()
	r.pending[n] = ch
	r.pmu.Unlock()
	defer func() {
		r.pmu.Lock()
		delete(r.pending, n)
		r.pmu.Unlock()
	}()
	var idBuf [20]byte
	if err := r.write(msg[:start], strconv.AppendUint(idBuf[:0], n, 10), msg[end:]); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	select {
	case line := <-ch:
		s, e, _, _ := topLevelID(line)
		w.Header().Set("Content-Type", "application/json")
		out := bufPool.Get().(*bytes.Buffer)
		out.Reset()
		out.Write(line[:s])
		out.Write(origID)
		out.Write(line[e:])
		_, _ = w.Write(out.Bytes())
		bufPool.Put(out)
	case <-req.Context().Done():
	}
}

// write sends the concatenation of parts as one line to the child.
func (r *relay) write(parts ...[]byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range parts {
		if _, err := r.in.Write(p); err != nil {
			return err
		}
	}
	if err := r.in.WriteByte('\n'); err != nil {
		return err
	}
	return r.in.Flush()
}

// readLoop routes each answer line of the child to the request waiting
// for its id.
func (r *relay) readLoop(stdout io.Reader) error {
	br := bufio.NewReaderSize(stdout, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimSpace(line)
		s, e, hasMethod, ok := topLevelID(line)
		if !ok || hasMethod {
			continue // the server's own notification or request
		}
		n, err := strconv.ParseUint(string(line[s:e]), 10, 64)
		if err != nil {
			continue
		}
		r.pmu.Lock()
		ch := r.pending[n]
		r.pmu.Unlock()
		if ch != nil {
			select {
			case ch <- line:
			default:
			}
		}
	}
}

// topLevelID finds the value of the key "id" of the JSON object msg
// without decoding it: [start, end) is the value's span. hasMethod tells
// whether the object also has a "method" key (a request, not a response).
func topLevelID(msg []byte) (start, end int, hasMethod, ok bool) {
	i := skipSpace(msg, 0)
	if i >= len(msg) || msg[i] != '{' {
		return 0, 0, false, false
	}
	i++
	for {
		i = skipSpace(msg, i)
		if i >= len(msg) || msg[i] != '"' {
			return start, end, hasMethod, ok
		}
		ks := i + 1
		ke := skipString(msg, i)
		if ke < 0 {
			return 0, 0, false, false
		}
		key := msg[ks : ke-1]
		i = skipSpace(msg, ke)
		if i >= len(msg) || msg[i] != ':' {
			return 0, 0, false, false
		}
		i = skipSpace(msg, i+1)
		vs := i
		ve := skipValue(msg, i)
		if ve < 0 {
			return 0, 0, false, false
		}
		switch string(key) {
		case "id":
			start, end, ok = vs, ve, true
		case "method":
			hasMethod = true
		}
		i = skipSpace(msg, ve)
		if i < len(msg) && msg[i] == ',' {
			i++
			continue
		}
		return start, end, hasMethod, ok
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the JSON value starting at b[i], or
// -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j := skipString(b, i)
				if j < 0 {
					return -1
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	default:
		for ; i < len(b); i++ {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
		}
		return i
	}
}
