//go:build linux

package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/daemon"
	"github.com/agentd/agentd/internal/proctree"
)

// repoRoot finds the module root by walking up to go.mod.
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := findRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers (a logger).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// daemonSpec describes an in-process daemon.
type daemonSpec struct {
	// TOML is the config file's body; listen is irrelevant in process.
	TOML string
	// Env is the whole environment the config sees (secrets, HOME...).
	Env map[string]string
	// Home is AGENTD_HOME; empty means a fresh temporary directory.
	Home string
	// Key is the API key the helpers send (the config's api_key).
	Key string
	// Wrap, if set, wraps the daemon's handler (fault injection).
	Wrap func(http.Handler) http.Handler
	// Quiet discards the daemon's logs instead of keeping them (load
	// tests: the kept logs would grow the heap being measured).
	Quiet bool
}

// inproc is a daemon built by daemon.New and served by an httptest
// server on loopback: the composition the binary uses, minus the
// process.
type inproc struct {
	D    *daemon.Daemon
	URL  string
	Home string
	Key  string
	// Logs holds everything the daemon logged, at debug level.
	Logs *syncBuffer
	// HC is the client the helpers use; CloseIdle drops its connections.
	HC *http.Client

	srv  *httptest.Server
	once sync.Once
}

// lookupIn returns a LookupEnv over m.
func lookupIn(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// startDaemon writes spec's config into a home directory, loads it the
// way the binary does and starts the daemon with MCP connections on.
func startDaemon(t testing.TB, spec daemonSpec) *inproc {
	t.Helper()
	home := spec.Home
	if home == "" {
		home = t.TempDir()
	}
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(spec.TOML), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": os.Getenv("PATH"), "HOME": home}
	for k, v := range spec.Env {
		env[k] = v
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: lookupIn(env)})
	if err != nil {
		t.Fatalf("load config: %v\n%s", err, spec.TOML)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if spec.Quiet {
		log = slog.New(slog.DiscardHandler)
	}
	d, err := daemon.New(context.Background(), cfg, daemon.Options{ConnectMCP: true, Logger: log})
	if err != nil {
		t.Fatalf("daemon.New: %v", err)
	}
	h := d.Handler()
	if spec.Wrap != nil {
		h = spec.Wrap(h)
	}
	srv := httptest.NewServer(h)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	p := &inproc{D: d, URL: srv.URL, Home: home, Key: spec.Key, Logs: logs, srv: srv, HC: &http.Client{Transport: tr}}
	t.Cleanup(p.Close)
	return p
}

// Close stops serving and closes the daemon; it may be called twice.
func (p *inproc) Close() {
	p.once.Do(func() {
		p.HC.CloseIdleConnections()
		p.srv.CloseClientConnections()
		p.srv.Close()
		_ = p.D.Close()
	})
}

// dropConns closes the test client's idle connections and every
// connection to the daemon's listener, the way an idle timeout would:
// clients inside other daemons (A2A) keep idle connections in transports
// a test cannot reach, and closing the server end is the only way to
// make them go. A leaked handler or unclosed body still shows: its
// goroutine does not wait on the connection.
func (p *inproc) dropConns() {
	p.HC.CloseIdleConnections()
	p.srv.CloseClientConnections()
}

// reply is an HTTP response, read whole.
type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r reply) String() string { return fmt.Sprintf("%d %s", r.Status, bytes.TrimSpace(r.Body)) }

// call sends one request with the daemon's API key and reads the reply.
func (p *inproc) call(t testing.TB, method, path string, body any) reply {
	t.Helper()
	return p.callKey(t, method, path, body, p.Key, nil)
}

// callKey sends one request with key as bearer token ("" = none) and
// extra headers.
func (p *inproc) callKey(t testing.TB, method, path string, body any, key string, hdr http.Header) reply {
	t.Helper()
	r, err := doHTTP(context.Background(), p.HC, method, p.URL+path, body, key, hdr)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// guess is callKey from a loopback address of its own (127.1.x.y, a new
// one each call): wrong credentials spend their client address's budget
// of failed authentications (burst 10), and a matrix of thousands of
// them from one address would be refused with 429 after the tenth, which
// is the limit working, not what the matrix checks.
func (p *inproc) guess(t testing.TB, method, path string, body any, key string, hdr http.Header) reply {
	t.Helper()
	n := guesses.Add(1)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 1, byte(n>>8), byte(n))}}
	tr := loadTransport()
	tr.DialContext = d.DialContext
	defer tr.CloseIdleConnections()
	r, err := doHTTP(context.Background(), &http.Client{Transport: tr}, method, p.URL+path, body, key, hdr)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

var guesses atomic.Uint32

// doHTTP sends one request; body is JSON-encoded unless it is a string
// or nil.
func doHTTP(ctx context.Context, hc *http.Client, method, url string, body any, key string, hdr http.Header) (reply, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return reply{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := hc.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	data, err := readBody(resp)
	if err != nil {
		return reply{}, err
	}
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// readBody reads resp's body to its end, except the change stream's
// (GET /api/events), which never ends: of it, the first event, hello, is
// what a request can check.
func readBody(resp *http.Response) ([]byte, error) {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return io.ReadAll(resp.Body)
	}
	br := bufio.NewReader(resp.Body)
	var first bytes.Buffer
	for {
		line, err := br.ReadString('\n')
		first.WriteString(line)
		if err != nil {
			if err == io.EOF {
				return first.Bytes(), nil
			}
			return nil, err
		}
		if line == "\n" {
			break
		}
	}
	if strings.Contains(first.String(), "event: hello\n") {
		return first.Bytes(), nil
	}
	rest, err := io.ReadAll(br)
	return append(first.Bytes(), rest...), err
}

// apiError is the API's stable error shape.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func decodeJSON(t testing.TB, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %q: %v", truncate(string(data), 300), err)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// resources is what must return to its baseline after a fault: this
// process's goroutines and file descriptors, and its live descendants.
type resources struct {
	Goroutines int
	FDs        int
	Children   int
}

func (r resources) String() string {
	return fmt.Sprintf("%d goroutines, %d fds, %d child processes", r.Goroutines, r.FDs, r.Children)
}

func measure() resources {
	return resources{Goroutines: runtime.NumGoroutine(), FDs: countFDs(os.Getpid()), Children: len(proctree.Descendants(os.Getpid()))}
}

// baseline measures resources once idle connections are closed and the
// counts have stopped moving.
func baseline(closers ...func()) resources {
	closeIdle(closers...)
	m := measure()
	for stable := 0; stable < 10; {
		time.Sleep(30 * time.Millisecond)
		closeIdle(closers...)
		n := measure()
		if n == m {
			stable++
		} else {
			stable = 0
		}
		m = n
	}
	return m
}

// settle waits until resources are back to base or the timeout passes,
// closing idle connections meanwhile, and returns the last measurement.
func settle(base resources, timeout time.Duration, closers ...func()) resources {
	deadline := time.Now().Add(timeout)
	for {
		closeIdle(closers...)
		m := measure()
		if m.Goroutines <= base.Goroutines && m.FDs <= base.FDs && m.Children <= base.Children {
			return m
		}
		if time.Now().After(deadline) {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// closeIdle drops the idle keep-alive connections of the process-wide
// default transport, which the daemon's provider clients use, and calls
// closers (inproc.dropConns): pooled connections are not leaks, but they
// blur goroutine and fd counts. It is called repeatedly because a
// connection returns to its pool a moment after its response was read.
func closeIdle(closers ...func()) {
	if tr, ok := http.DefaultTransport.(*http.Transport); ok {
		tr.CloseIdleConnections()
	}
	for _, c := range closers {
		c()
	}
}

// strayConn is what one HTTP/1.1 keep-alive connection between two
// in-process peers costs: a client read and write loop and a server
// goroutine, and a descriptor at each end. Checks allow one, for a
// connection still being torn down when the check runs; minReps makes a
// leak of one goroutine or descriptor per fault exceed it.
var strayConn = resources{Goroutines: 3, FDs: 2}

// minReps is the fewest repetitions of a fault for which a leak of one
// goroutine or descriptor per request exceeds strayConn's allowance.
const minReps = 4

// checkBaseline fails t when after exceeds base by more than one stray
// connection, or has any extra child process.
func checkBaseline(t testing.TB, what string, base, after resources) {
	t.Helper()
	if after.Goroutines > base.Goroutines+strayConn.Goroutines || after.FDs > base.FDs+strayConn.FDs || after.Children > base.Children {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Errorf("%s: resources did not return to baseline: before %v, after %v\n%s", what, base, after, buf[:n])
	}
}

func countFDs(pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(ents)
}

// procStatus reads a "Key:  value kB" field of /proc/PID/status, in kB
// (or as a count for Threads).
func procStatus(pid int, key string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			f := strings.Fields(v)
			if len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n
			}
		}
	}
	return -1
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// tomlQuote quotes s as a TOML basic string.
func tomlQuote(s string) string {
	b, _ := json.Marshal(s) // JSON string escapes are valid TOML basic-string escapes
	return string(b)
}

// percentile returns the p-th percentile (0-100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

// ms formats d in milliseconds with two decimals.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
