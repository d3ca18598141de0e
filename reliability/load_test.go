//go:build linux

package reliability

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/a2aedge"
)

var (
	soakClients  = flag.Int("soak.clients", 500, "concurrent clients of the soak load test")
	soakDuration = flag.Duration("soak.duration", 60*time.Second, "duration of the soak load test (two halves)")
)

// Kinds of load client.
const (
	kindMCP = iota
	kindA2ASend
	kindA2AStream
	kinds
)

var kindNames = [kinds]string{"MCP tools/call", "A2A SendMessage", "A2A SendStreamingMessage"}

// loadStats is what one run of the load measured.
type loadStats struct {
	mu        sync.Mutex
	lat       [kinds][]time.Duration
	errs      [kinds]int
	limited   [kinds]int // 429s, counted apart
	errSample []string
	elapsed   time.Duration
}

func (s *loadStats) add(kind int, d time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		s.lat[kind] = append(s.lat[kind], d)
	case strings.Contains(err.Error(), "429") || strings.Contains(strings.ToLower(err.Error()), "too many requests"):
		s.limited[kind]++
	default:
		s.errs[kind]++
		if len(s.errSample) < 5 {
			s.errSample = append(s.errSample, kindNames[kind]+": "+err.Error())
		}
	}
}

func (s *loadStats) total() (ok, errs, limited int) {
	for k := range kinds {
		ok += len(s.lat[k])
		errs += s.errs[k]
		limited += s.limited[k]
	}
	return
}

// loadClient is one of the concurrent clients: an MCP session or an
// a2a-go client.
type loadClient struct {
	kind int
	mcp  *mcp.ClientSession
	a2a  *a2aclient.Client
}

// connectLoadClients connects n clients to the daemon at base, a third
// of each kind.
func connectLoadClients(t testing.TB, base string, n int, tr http.RoundTripper) []*loadClient {
	t.Helper()
	r, err := doHTTP(context.Background(), http.DefaultClient, "GET", base+"/a2a/agents/alpha/.well-known/agent-card.json", nil, "", nil)
	if err != nil || r.Status != http.StatusOK {
		t.Fatalf("card: %v %v", r, err)
	}
	card, err := a2aedge.ParseCard(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: bearerTransport{key: crashKey, next: tr}}
	out := make([]*loadClient, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, 32)
	for i := range n {
		c := &loadClient{kind: i % kinds}
		out[i] = c
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			var err error
			if c.kind == kindMCP {
				c.mcp, err = mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil).Connect(context.Background(),
					&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
			} else {
				c.a2a, err = a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(hc))
			}
			if err != nil {
				mu.Lock()
				firstErr = errors.Join(firstErr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("connect load clients: %v", firstErr)
	}
	return out
}

func closeLoadClients(cs []*loadClient) {
	for _, c := range cs {
		if c.mcp != nil {
			_ = c.mcp.Close()
		}
		if c.a2a != nil {
			_ = c.a2a.Destroy()
		}
	}
}

// op runs one request of c's kind.
func (c *loadClient) op(ctx context.Context, n int) error {
	msg := fmt.Sprintf("load %d", n)
	switch c.kind {
	case kindMCP:
		res, err := c.mcp.CallTool(ctx, &mcp.CallToolParams{Name: "agentd_agent_alpha", Arguments: map[string]any{"message": msg}})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("tool error: %v", res.Content)
		}
		return nil
	case kindA2ASend:
		res, err := c.a2a.SendMessage(ctx, textMessage(msg))
		if err != nil {
			return err
		}
		if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted {
			return fmt.Errorf("send: %T %+v", res, res)
		}
		return nil
	default:
		var final a2a.TaskState
		for ev, err := range c.a2a.SendStreamingMessage(ctx, textMessage(msg)) {
			if err != nil {
				return err
			}
			switch e := ev.(type) {
			case *a2a.TaskStatusUpdateEvent:
				final = e.Status.State
			case *a2a.Task:
				final = e.Status.State
			}
		}
		if final != a2a.TaskStateCompleted {
			return fmt.Errorf("stream ended in state %q", final)
		}
		return nil
	}
}

// runLoad has every client loop on its kind of request for d, all
// starting together, and samples sample() every 250 ms meanwhile.
func runLoad(clients []*loadClient, d time.Duration, sample func()) *loadStats {
	st := &loadStats{}
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	var seq atomic.Int64
	for _, c := range clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				t0 := time.Now()
				err := c.op(ctx, int(seq.Add(1)))
				cancel()
				st.add(c.kind, time.Since(t0), err)
			}
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			st.elapsed = time.Since(start)
			return st
		case <-tick.C:
			sample()
		}
	}
}

// report checks a run and records its figures.
func (st *loadStats) report(t *testing.T, label string, clients int) {
	t.Helper()
	ok, errs, limited := st.total()
	if errs > 0 {
		t.Errorf("%s: %d errors beyond rate limiting, e.g. %v", label, errs, st.errSample)
	}
	if ok == 0 {
		t.Fatalf("%s: no request succeeded", label)
	}
	var all []time.Duration
	var per []string
	for k := range kinds {
		l := slices.Clone(st.lat[k])
		slices.Sort(l)
		all = append(all, l...)
		per = append(per, fmt.Sprintf("%s %d ok, p50 %s, p99 %s", kindNames[k], len(l), ms(percentile(l, 50)), ms(percentile(l, 99))))
	}
	slices.Sort(all)
	fig(t, areaLoad, label+": requests", "%d clients for %s: %d ok (%.0f/s), %d errors, %d rate-limited (429)", clients, st.elapsed.Round(100*time.Millisecond), ok, float64(ok)/st.elapsed.Seconds(), errs, limited)
	fig(t, areaLoad, label+": latency", "all: p50 %s, p99 %s, max %s; %s", ms(percentile(all, 50)), ms(percentile(all, 99)), ms(all[len(all)-1]), strings.Join(per, "; "))
}

// loadModel is the fake model of the load tests: an OpenAI-compatible
// endpoint streaming a canned two-chunk answer at once. It is not an
// llmtest server because those keep every request they receive, which
// the in-process test would count as the daemon's heap growing.
func loadModel(t testing.TB) (string, *connProxy) {
	t.Helper()
	const answer = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"o\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"k\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\n" +
		"data: [DONE]\n\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return proxyURL(t, srv.URL+"/v1")
}

// TestLoadInProcess is the CI load test: 50 clients for 5 s (two halves
// of 2.5 s) against a daemon in process, so that goroutines can be
// counted: after each half they must be back where they started, and the
// heap must not grow from one half to the next.
func TestLoadInProcess(t *testing.T) {
	track(t, areaLoad, false)
	const clients = 50
	half := 2500 * time.Millisecond
	modelURL, proxy := loadModel(t)
	p := startDaemon(t, daemonSpec{Key: crashKey, Quiet: true, TOML: binaryConfigBody("127.0.0.1:0", modelURL)})
	tr := loadTransport()
	closers := []func(){p.dropConns, proxy.DropConns, tr.CloseIdleConnections}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	// Warm up: every kind once.
	warm := connectLoadClients(t, p.URL, kinds, tr)
	runLoad(warm, 200*time.Millisecond, func() {})
	closeLoadClients(warm)
	base := baseline(closers...)
	baseHeap := heap()

	var afters []resources
	var heaps []uint64
	for i := range 2 {
		cs := connectLoadClients(t, p.URL, clients, tr)
		peak := 0
		st := runLoad(cs, half, func() { peak = max(peak, runtime.NumGoroutine()) })
		closeLoadClients(cs)
		st.report(t, fmt.Sprintf("in process, half %d", i+1), clients)
		after := settle(base, 5*time.Second, closers...)
		checkBaseline(t, fmt.Sprintf("after half %d", i+1), base, after)
		afters = append(afters, after)
		heaps = append(heaps, heap())
		fig(t, areaLoad, fmt.Sprintf("in process, half %d: goroutines", i+1), "%d before, %d peak, %d after", base.Goroutines, peak, after.Goroutines)
	}
	if heaps[1] > heaps[0]+heaps[0]/4+4<<20 {
		t.Errorf("heap grew from one half to the next: %d MiB → %d MiB", heaps[0]>>20, heaps[1]>>20)
	}
	fig(t, areaLoad, "in process: heap in use after GC", "%.1f MiB before, %.1f MiB after half 1, %.1f MiB after half 2", mib(baseHeap), mib(heaps[0]), mib(heaps[1]))
	fig(t, areaLoad, "in process: descriptors", "%d before, %d after half 1, %d after half 2", base.FDs, afters[0].FDs, afters[1].FDs)
}

// TestLoadSoak is the long load test (make soak): 500 clients for 60 s
// (two halves of 30 s) against the real binary. Its RSS, threads and
// descriptors are read from /proc; after the second half they must not
// have grown over the first.
func TestLoadSoak(t *testing.T) {
	track(t, areaLoad, true)
	clients := *soakClients
	half := *soakDuration / 2
	modelURL, proxy := loadModel(t)
	home := t.TempDir()
	addr := freeAddr(t)
	cfg := binaryConfig(t, home, addr, modelURL)
	d := startAgentd(t, cfg, home, addr)
	tr := loadTransport()
	type procRes struct {
		rss, threads int64
		fds          int
	}
	read := func() procRes {
		return procRes{rss: procStatus(d.Pid(), "VmRSS"), threads: procStatus(d.Pid(), "Threads"), fds: countFDs(d.Pid())}
	}
	// quiet drops idle connections and waits until the daemon's
	// descriptors are back within 4 of limit (30 s at most: a loaded
	// machine tears connections down slowly; a negative limit waits 3 s),
	// then 2 s more for memory.
	quiet := func(limit int) (procRes, time.Duration) {
		start := time.Now()
		for {
			tr.CloseIdleConnections()
			proxy.DropConns()
			if (limit < 0 && time.Since(start) > 3*time.Second) || (limit >= 0 && countFDs(d.Pid()) <= limit+4) || time.Since(start) > 30*time.Second {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		took := time.Since(start)
		time.Sleep(2 * time.Second)
		return read(), took
	}
	warm := connectLoadClients(t, d.URL, kinds, tr)
	runLoad(warm, time.Second, func() {})
	closeLoadClients(warm)
	base, _ := quiet(-1)

	var afters []procRes
	for i := range 2 {
		cs := connectLoadClients(t, d.URL, clients, tr)
		var peak procRes
		st := runLoad(cs, half, func() {
			r := read()
			peak = procRes{rss: max(peak.rss, r.rss), threads: max(peak.threads, r.threads), fds: max(peak.fds, r.fds)}
		})
		closeLoadClients(cs)
		st.report(t, fmt.Sprintf("binary, half %d", i+1), clients)
		after, took := quiet(base.fds)
		afters = append(afters, after)
		fig(t, areaLoad, fmt.Sprintf("binary, half %d: daemon RSS / threads / fds", i+1), "before %d MiB / %d / %d; peak %d MiB / %d / %d; after (descriptors back in %s) %d MiB / %d / %d",
			base.rss>>10, base.threads, base.fds, peak.rss>>10, peak.threads, peak.fds, took.Round(100*time.Millisecond), after.rss>>10, after.threads, after.fds)
	}
	a, b := afters[0], afters[1]
	if b.rss > a.rss+a.rss/4+16<<10 {
		t.Errorf("RSS grew from one half to the next: %d MiB → %d MiB", a.rss>>10, b.rss>>10)
	}
	if b.fds > base.fds+4 {
		t.Errorf("descriptors after the load: %d, baseline %d", b.fds, base.fds)
	}
	if b.threads > a.threads+4 {
		t.Errorf("threads grew from one half to the next: %d → %d", a.threads, b.threads)
	}
	if !d.stop(15 * time.Second) {
		t.Errorf("the daemon did not stop on SIGTERM within 15 s:\n%s", d.logText())
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }
