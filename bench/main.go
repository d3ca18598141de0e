// Command bench runs agentd's side-by-side benchmarks: it builds agentd,
// starts it and the peers it is compared with on loopback (server-everything,
// supergateway, @a2a-js/sdk servers, a minimal go-sdk server, a fake
// OpenAI-compatible model), measures each scenario in interleaved rounds
// with bounded counts and time, stops every process it started, prints a
// table and writes results.json, chart.svg and README.md to -out.
//
//	go run ./bench -out docs/bench          # the full run (make bench)
//	go run ./bench -out /tmp/b -quick       # a fast sanity run
//	go run ./bench -out /tmp/b -only 1,4    # some scenarios
//
// The same binary also serves the bench's own peers (-role fake-llm,
// -role mcp-minimal), so they run as separate processes like the others.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// Settings bound the run. The defaults keep a full run under ten minutes
// on a two-core machine.
type Settings struct {
	Rounds      int           `json:"rounds"`
	Duration    time.Duration `json:"duration_ns"`
	Warmup      time.Duration `json:"warmup_ns"`
	MaxCalls    int           `json:"max_calls"`
	Concurrency []int         `json:"concurrency"`
	Streams     int           `json:"streams"`      // open A2A streams for the RSS growth
	Sessions    int           `json:"mcp_sessions"` // MCP sessions for the RSS growth
	ColdStarts  int           `json:"cold_starts"`
	MCPServers  int           `json:"mcp_servers"` // stdio servers for the idle RSS
	// SoakCalls gateway calls after SoakWarmup ones show memory, fd and
	// goroutine growth; SoakMax bounds the run's time.
	SoakCalls  int           `json:"soak_calls"`
	SoakWarmup int           `json:"soak_warmup"`
	SoakMax    time.Duration `json:"soak_max_ns"`
}

func defaultSettings() Settings {
	return Settings{
		Rounds: 3, Duration: 1500 * time.Millisecond, Warmup: 300 * time.Millisecond, MaxCalls: 100_000,
		Concurrency: []int{1, 16, 64}, Streams: 1000, Sessions: 1000, ColdStarts: 7, MCPServers: 10,
		SoakCalls: 100_000, SoakWarmup: 5000, SoakMax: 2 * time.Minute,
	}
}

func quickSettings() Settings {
	return Settings{
		Rounds: 1, Duration: 200 * time.Millisecond, Warmup: 50 * time.Millisecond, MaxCalls: 2000,
		Concurrency: []int{1, 16}, Streams: 50, Sessions: 50, ColdStarts: 2, MCPServers: 2,
		SoakCalls: 2000, SoakWarmup: 200, SoakMax: 30 * time.Second,
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "docs/bench", "directory for results.json, chart.svg and README.md")
	only := fs.String("only", "", "comma-separated scenario numbers to run (default all)")
	quick := fs.Bool("quick", false, "tiny counts: checks the bench works, numbers mean nothing")
	role := fs.String("role", "", "serve a peer instead of benchmarking: fake-llm or mcp-minimal")
	listen := fs.String("listen", "127.0.0.1:0", "with -role: address to listen on")
	dir := fs.String("dir", "", "with -role mcp-minimal: the workspace directory")
	render := fs.String("render", "", "rewrite the tables, chart.svg and README.md in -out from this results.json, without measuring")
	ab := fs.String("ab", "", "compare agentd at this checkout with agentd at this git commit on the MCP gateway, in one run (prints a table; writes nothing)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *role != "" {
		return serveRole(ctx, *role, *listen, *dir, stdout)
	}
	if *render != "" {
		return rerender(*render, *out, stdout)
	}
	set := defaultSettings()
	if *quick {
		set = quickSettings()
	}
	want := map[string]bool{}
	for s := range strings.SplitSeq(*only, ",") {
		if s = strings.TrimSpace(s); s != "" {
			want[s] = true
		}
	}

	started := time.Now()
	env, err := NewEnv(ctx, set, stderr)
	if err != nil {
		return err
	}
	if *ab != "" {
		defer env.Close()
		if *quick {
			set.Concurrency = []int{1}
		} else {
			set.Concurrency, set.Rounds = []int{1, 16}, abRounds
		}
		env.Settings = set
		return runAB(ctx, env, *ab, stdout)
	}
	// The one variable the bench reads: the PostgreSQL server of
	// scenario 6, as the tests name it (scripts/postgres.sh prints it).
	env.PostgresServer = os.Getenv("AGENTD_TEST_POSTGRES_URL")
	defer env.Close()
	// Every scenario needs agentd: a checkout that does not build fails
	// the run rather than every scenario.
	if _, err := env.Agentd(ctx); err != nil {
		return err
	}

	rep := &Report{Machine: env.Machine(ctx), Settings: set, Quick: *quick}
	for _, sc := range scenarios {
		if len(want) > 0 && !want[sc.ID] {
			continue
		}
		if ctx.Err() != nil {
			break
		}
		env.logf("scenario %s: %s", sc.ID, sc.Title)
		t0 := time.Now()
		res := &Scenario{ID: sc.ID, Title: sc.Title, About: sc.About, Available: true}
		if err := sc.Run(ctx, env, res); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted during scenario %s: %w", sc.ID, ctx.Err())
			}
			res.Available = false
			res.Reason = err.Error()
		}
		res.Seconds = time.Since(t0).Seconds()
		rep.Scenarios = append(rep.Scenarios, res)
		printScenario(stdout, res)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	crossNotes(rep)
	rep.Seconds = time.Since(started).Seconds()
	if err := rep.Write(*out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %s/results.json, chart.svg and README.md in %.0f s\n", strings.TrimSuffix(*out, "/"), rep.Seconds)
	return nil
}

// rerender writes the outputs again from an earlier run's results.json,
// for changes to the presentation: the numbers are the run's own.
func rerender(file, out string, stdout io.Writer) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	for _, s := range rep.Scenarios {
		printScenario(stdout, s)
	}
	return rep.Write(out)
}

// scenario is one benchmark. Run fills res; an error means the scenario
// could not be measured, and its text is the reason shown.
type scenario struct {
	ID, Title, About string
	Run              func(ctx context.Context, env *Env, res *Scenario) error
}

var scenarios = []scenario{
	{"1", "MCP gateway: tools/call echo of server-everything",
		"A go-sdk client calls server-everything's `echo` (a) directly over stdio, (b) through agentd, which reaches the same server over stdio " +
			"(`[[mcp_servers]]`): at `/mcp/gateway/everything` (the upstream's tools unprefixed) over an MCP 2025-11-25 session and over stateless " +
			"2026-07-28 requests, and at `/mcp` with `expose_tools` (`mcp_everything_echo`), (c) through supergateway (stdio → stateful " +
			"Streamable HTTP, 2025-11-25 sessions only) and mcp-proxy (stateful Streamable HTTP that also serves 2026-07-28, once per era), both forced onto " +
			"loopback, and (d) through the floor relay (bench/floorrelay: a minimal Go Streamable HTTP → stdio relay forwarding raw bytes with no policy), " +
			"each in front of its own server-everything. One client session per path; the concurrent callers share it.",
		runGateway},
	{"2", "MCP server near the limit: a built-in tool over Streamable HTTP",
		"The built-in `file_read` through agentd's `/mcp` (`expose_tools`, so the call passes the tool runner) against a minimal go-sdk server " +
			"(bench/mcpminimal.go) offering the same tool over Streamable HTTP with the same handler options agentd uses for session-less requests. " +
			"Both read the same small file below their workspace through an os.Root.",
		runMCPServer},
	{"3", "A2A: an instant agent against @a2a-js/sdk",
		"An a2a-go client sends `SendMessage` (blocking, the task must complete) and `SendStreamingMessage` to agentd's A2A endpoint of an agent " +
			"whose model is a fake OpenAI-compatible server answering at once (bench/fakellm.go, its own process), and to an @a2a-js/sdk + express server " +
			"(bench/a2a_llm_peer.mjs, on the pinned Node 22 for node:sqlite) that does the same work: its executor streams a chat completion from the " +
			"same fake model with the request agentd sends (Node's fetch, SSE parsed), publishes the events agentd sends for such an agent (the task " +
			"working, one text artifact, completed with the reply) and persists the turn as agentd does, in one transaction on a SQLite file with " +
			"agentd's tables and pragmas (WAL, synchronous=NORMAL): the conversation, the user's and the model's messages, the finished task. " +
			"For information, `SendMessage` also goes to an @a2a-js/sdk server whose executor publishes the same events from memory, with no model " +
			"call and no store (bench/a2a_peer.mjs), and to agentd's model-free `mcp_proxy` agent, whose task is one `echo` call to " +
			"server-everything through the tool pipeline.",
		runA2A},
	{"4", "Footprint: start-up, memory, binary",
		"Binary: the size of agentd built as `make build` builds it (`-trimpath -ldflags \"-s -w\"`). Cold start: exec of `agentd start` to the first 200 from " +
			"`/api/health`, with the store created by an earlier start. Idle memory: agentd's VmRSS one second after start, with no MCP server and with " +
			"server-everything instances connected over stdio. Growth: VmRSS before and after holding A2A streams open and after opening MCP sessions " +
			"(initialize + initialized, connections closed), divided by the count; the target's streams are tasks of the model-free mcp_proxy agent " +
			"waiting in server-everything's trigger-long-running-operation (no outgoing connection per stream), the LLM agent's streams (each waiting in " +
			"a model call) are shown beside. Long run: VmRSS, open fds (/proc/PID/fd), OS threads (/proc/PID/status) and goroutines (go_goroutines at " +
			"GET /metrics) after a gateway warm-up and after many more gateway calls at c=16.",
		runFootprint},
	{"5", "Agent loop overhead: one tool round trip",
		"`POST /api/agents/{name}/messages` at concurrency 1 for an agent whose fake model first calls `file_list` and then answers, and for one " +
			"whose model answers at once; the fake model is also called directly with the same streamed request. The tool turn minus the text turn " +
			"minus one model call is agentd's time for one tool round trip.",
		runLoop},
	{"6", "Store and scale-out: PostgreSQL vs SQLite, 1 vs 3 replicas",
		"Store contract operations called in process on the two backends (internal/store/sqlite on a fresh file, internal/store/postgres on a " +
			"fresh database of the server in AGENTD_TEST_POSTGRES_URL or on 127.0.0.1:5432, dropped at the end), interleaved. Then A2A `SendMessage` " +
			"to the instant agent of agentd on SQLite, of agentd on PostgreSQL, and of 1 and of 3 `agentd start` replicas sharing one PostgreSQL " +
			"database behind a round-robin reverse proxy without stickiness (in the bench process, like internal/daemon's TestReplicaSuite). " +
			"Cells are half as long and there is one round fewer than in scenarios 1–3.",
		runStore},
	{"7", "Telemetry: the cost of tracing on the gateway and A2A paths",
		"The same gateway `echo` calls (MCP 2025-11-25 session at `/mcp/gateway/everything`) and A2A `SendMessage` to the instant agent, against three agentd " +
			"instances that differ only in telemetry: all off (`[metrics] enabled = false`, no traces), the default (metrics on, tracing off), and " +
			"tracing on with every trace sampled (`sample_ratio = 1.0`), exporting over OTLP/HTTP to a receiver in the bench process that counts and " +
			"discards the spans. Cells are half as long and there is one round fewer than in scenarios 1–3.",
		runTracing},
}

// errNotAvailable marks a scenario (or row) that cannot run on this
// checkout yet; its message says why.
var errNotAvailable = errors.New("not available")

func notAvailable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errNotAvailable, fmt.Sprintf(format, args...))
}

// serveRole serves one of the bench's own peers until ctx ends, after
// printing "listening ADDR".
func serveRole(ctx context.Context, role, addr, dir string, stdout io.Writer) error {
	var h http.Handler
	switch role {
	case "fake-llm":
		h = fakeLLM{}
	case "mcp-minimal":
		if dir == "" {
			return errors.New("-role mcp-minimal needs -dir")
		}
		h = newMinimalMCP(dir)
	default:
		return fmt.Errorf("unknown -role %q (want fake-llm or mcp-minimal)", role)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "listening %s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	<-errc
	return nil
}
