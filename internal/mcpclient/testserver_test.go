//lint:file-ignore SA1019 upstream log messages (deprecated in 2026-07-28, alive in every earlier version) are forwarded on purpose

package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fault-injection server: the test binary re-executed with
// testServerArg runs a go-sdk MCP server on stdio, so that crashes,
// garbage and hangs happen in a real subprocess.
const testServerArg = "mcpclient-test-server"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == testServerArg {
		os.Exit(runTestServer(os.Args[2:]))
	}
	if len(os.Args) > 2 && os.Args[1] == conformanceClientArg {
		os.Exit(runConformanceClient(os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

// stdoutWriter serialises writes to stdout and injects the faults of a
// mode: "garbage" writes non-JSON lines between messages, "drip" writes
// every message a few bytes at a time.
type stdoutWriter struct {
	mu   sync.Mutex
	w    io.Writer
	mode string
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch s.mode {
	case "garbage":
		if _, err := io.WriteString(s.w, "server starting... not json\n\n"); err != nil {
			return 0, err
		}
	case "drip":
		for i := 0; i < len(p); i += 16 {
			if _, err := s.w.Write(p[i:min(i+16, len(p))]); err != nil {
				return i, err
			}
			time.Sleep(time.Millisecond)
		}
		return len(p), nil
	}
	return s.w.Write(p)
}

// raw writes bytes to stdout outside the protocol.
func (s *stdoutWriter) raw(b string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	io.WriteString(s.w, b)
}

func runTestServer(args []string) int {
	fs := flag.NewFlagSet("test-server", flag.ContinueOnError)
	mode := fs.String("mode", "normal", "normal, garbage, drip, collide, raw")
	httpAddr := fs.String("http", "", "serve HTTP on this address instead of stdio")
	kind := fs.String("kind", "streamable", "HTTP flavour: streamable, json, stateless, sse")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *httpAddr != "" {
		return runHTTPServer(*httpAddr, *kind)
	}
	if *mode == "raw" {
		return runRawServer(os.Stdin, os.Stdout)
	}
	out := &stdoutWriter{w: os.Stdout, mode: *mode}
	srv := newTestServer(*mode, out)
	err := srv.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: nopCloser{out}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		return 1
	}
	return 0
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type textArgs struct {
	Text string `json:"text"`
}
type sizeArgs struct {
	Bytes int `json:"bytes"`
}
type progressArgs struct {
	Steps      int `json:"steps"`
	IntervalMS int `json:"interval_ms"`
}
type nameArgs struct {
	Name string `json:"name"`
}
type msArgs struct {
	MS int `json:"ms"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// newTestServer builds the fault-injection server. out is nil in
// process (HTTP tests): the stdio-only tools are then left out.
func newTestServer(mode string, out *stdoutWriter) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "faults", Version: "1.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echoes text"}, func(ctx context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		return text(a.Text), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "hang", Description: "reports progress once on arrival, then never returns"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		// The progress notification tells a test the call is in the
		// server (see callArrived): the server is another process.
		if token := req.Params.GetProgressToken(); token != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Message: "arrived"})
		}
		<-ctx.Done()
		// WithoutCancel keeps the request's log level (2026-07-28 carries
		// it per request).
		_ = req.Session.Log(context.WithoutCancel(ctx), &mcp.LoggingMessageParams{Level: "warning", Data: "hang cancelled"})
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "slow", Description: "sleeps ms"}, func(ctx context.Context, req *mcp.CallToolRequest, a msArgs) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		return text("slept"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "big", Description: "returns bytes of text"}, func(ctx context.Context, req *mcp.CallToolRequest, a sizeArgs) (*mcp.CallToolResult, any, error) {
		return text(strings.Repeat("x", a.Bytes)), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "big_log", Description: "sends an oversized log message, then answers"}, func(ctx context.Context, req *mcp.CallToolRequest, a sizeArgs) (*mcp.CallToolResult, any, error) {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: strings.Repeat("y", a.Bytes)})
		return text("logged"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "progress", Description: "reports progress steps"}, func(ctx context.Context, req *mcp.CallToolRequest, a progressArgs) (*mcp.CallToolResult, any, error) {
		token := req.Params.GetProgressToken()
		for i := 1; i <= a.Steps; i++ {
			select {
			case <-time.After(time.Duration(a.IntervalMS) * time.Millisecond):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			if token != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(a.Steps), Message: fmt.Sprintf("step %d", i)})
			}
		}
		return text(fmt.Sprintf("done after %d steps", a.Steps)), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "log", Description: "logs text"}, func(ctx context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "test", Data: a.Text})
		return text("logged"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "add_tool", Description: "adds a tool"}, func(ctx context.Context, req *mcp.CallToolRequest, a nameArgs) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(srv, &mcp.Tool{Name: a.Name, Description: "added at run time"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text("i am " + a.Name), nil, nil
		})
		return text("added"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "structured", Description: "returns structured content"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return nil, map[string]any{"city": "Oslo", "temp": 3}, nil
	})
	addCallerTools(srv)
	if mode == "collide" {
		for _, n := range []string{"a_b", "a-b", "A_B"} {
			mcp.AddTool(srv, &mcp.Tool{Name: n, Description: "collides"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				return text("called " + n), nil, nil
			})
		}
	}
	if out == nil {
		return srv
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "environ", Description: "lists the environment"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		env := os.Environ()
		slices.Sort(env)
		return text(strings.Join(env, "\n")), nil, nil
	})
	// dial and read_file probe what a sandboxed server can reach.
	mcp.AddTool(srv, &mcp.Tool{Name: "dial", Description: "opens a TCP connection to text (host:port)"}, func(ctx context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		c, err := net.DialTimeout("tcp", a.Text, 2*time.Second)
		if err != nil {
			return text("dial: " + err.Error()), nil, nil
		}
		c.Close()
		return text("connected"), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "read_file", Description: "reads the file named by text"}, func(ctx context.Context, req *mcp.CallToolRequest, a textArgs) (*mcp.CallToolResult, any, error) {
		b, err := os.ReadFile(a.Text)
		if err != nil {
			return text("read: " + err.Error()), nil, nil
		}
		return text(string(b)), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "crash", Description: "exits mid-call"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "corrupt", Description: "writes a broken message, then hangs"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		out.raw(`{"jsonrpc":"2.0","id":` + "\n")
		<-ctx.Done()
		return nil, nil, ctx.Err()
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "spawn", Description: "starts a grandchild that outlives the call"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		b, _ := json.Marshal(cmd.Process.Pid)
		return text(string(b)), nil, nil
	})
	return srv
}

// runRawServer is a hand-written JSON-RPC loop, for messages the go-sdk
// server would take seconds to encode (tens of megabytes) and for field
// orders it never writes. Tools: echo, big (id before result), big_tail
// (id after result, as Node servers write), big_notify (an oversized
// notification, then a normal answer).
func runRawServer(in io.Reader, stdout io.Writer) int {
	dec := json.NewDecoder(in)
	out := bufio.NewWriterSize(stdout, 1<<20)
	reply := func(id json.RawMessage, result string) {
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
		out.Flush()
	}
	for {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
				Name            string `json:"name"`
				Arguments       struct {
					Bytes int    `json:"bytes"`
					Text  string `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if err := dec.Decode(&req); err != nil {
			return 0
		}
		if req.ID == nil {
			continue // a notification
		}
		switch req.Method {
		case "initialize":
			// The oldest version the client must still speak.
			reply(req.ID, `{"protocolVersion":"2024-11-05","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case "ping":
			reply(req.ID, `{}`)
		case "tools/list":
			reply(req.ID, `{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"big","inputSchema":{"type":"object"}},{"name":"big_tail","inputSchema":{"type":"object"}},{"name":"big_notify","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			n := req.Params.Arguments.Bytes
			switch req.Params.Name {
			case "echo":
				b, _ := json.Marshal(req.Params.Arguments.Text)
				reply(req.ID, `{"content":[{"type":"text","text":`+string(b)+`}]}`)
			case "big":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, req.ID)
				out.Write(bytes.Repeat([]byte("x"), n))
				out.WriteString("\"}]}}\n")
				out.Flush()
			case "big_tail":
				out.WriteString(`{"result":{"content":[{"type":"text","text":"`)
				out.Write(bytes.Repeat([]byte("x"), n))
				fmt.Fprintf(out, `"}]},"jsonrpc":"2.0","id":%s}`+"\n", req.ID)
				out.Flush()
			case "big_notify":
				out.WriteString(`{"method":"notifications/message","params":{"level":"info","data":"`)
				out.Write(bytes.Repeat([]byte("y"), n))
				out.WriteString(`"},"jsonrpc":"2.0"}` + "\n")
				reply(req.ID, `{"content":[{"type":"text","text":"after the notification"}]}`)
			default:
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unknown tool"}}`+"\n", req.ID)
				out.Flush()
			}
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", req.ID)
			out.Flush()
		}
	}
}

// runHTTPServer serves the fault server over HTTP (see httpHandler) and
// prints "LISTEN addr" once it listens. POST /forget replaces the handler,
// so that every session it had is unknown (a restarted server).
func runHTTPServer(addr, kind string) int {
	srv := newTestServer("normal", nil)
	var seen sync.Map
	mcp.AddTool(srv, &mcp.Tool{Name: "seen_auth", Description: "Authorization headers seen"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		var all []string
		seen.Range(func(k, _ any) bool { all = append(all, k.(string)); return true })
		slices.Sort(all)
		return text(strings.Join(all, "\n")), nil, nil
	})
	var h atomic.Pointer[http.Handler]
	renew := func() {
		handler := httpHandler(srv, kind)
		h.Store(&handler)
	}
	renew()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("LISTEN", ln.Addr())
	err = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/forget" {
			renew()
			return
		}
		seen.Store(r.Header.Get("Authorization"), true)
		(*h.Load()).ServeHTTP(w, r)
	}))
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// httpHandler serves srv as kind: "streamable", "json" (streamable
// answering application/json), "stateless" (the 2026-07-28 protocol) or
// "sse" (the legacy transport).
func httpHandler(srv *mcp.Server, kind string) http.Handler {
	get := func(*http.Request) *mcp.Server { return srv }
	switch kind {
	case "sse":
		return mcp.NewSSEHandler(get, nil)
	case "json":
		return mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{JSONResponse: true})
	case "stateless":
		return mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Stateless: true})
	}
	return mcp.NewStreamableHTTPHandler(get, nil)
}

// addCallerTools adds the tools that ask their client for something while
// they run: ask (elicitation/create) and sample (sampling/createMessage)
// as requests of the server's own, which only initialize-era links carry;
// ask_input as input requests (SEP-2322) for whatever the call's
// capabilities allow, answered as "name=..., greeting=..., roots=N".
func addCallerTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "ask", Description: "asks the user for a name"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: nameSchema()})
		if err != nil {
			return nil, nil, err
		}
		return text(fmt.Sprintf("%s %v", res.Action, res.Content["name"])), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "sample", Description: "asks the client's model"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "say hi"}}}})
		if err != nil {
			return nil, nil, err
		}
		return text("model said " + res.Content.(*mcp.TextContent).Text), nil, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "ask_input", Description: "asks for input in its result"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if ans := req.Params.InputResponses; len(ans) > 0 {
			if req.Params.RequestState != "state-1" {
				return nil, nil, fmt.Errorf("request state %q, want state-1", req.Params.RequestState)
			}
			var parts []string
			if e, ok := ans["name"].(*mcp.ElicitResult); ok {
				parts = append(parts, fmt.Sprintf("name=%v", e.Content["name"]))
			}
			if m, ok := ans["greeting"].(*mcp.CreateMessageWithToolsResult); ok && len(m.Content) == 1 {
				parts = append(parts, "greeting="+m.Content[0].(*mcp.TextContent).Text)
			}
			if r, ok := ans["roots"].(*mcp.ListRootsResult); ok {
				parts = append(parts, fmt.Sprintf("roots=%d", len(r.Roots)))
			}
			return text(strings.Join(parts, ", ")), nil, nil
		}
		caps := req.ClientCapabilities()
		reqs := mcp.InputRequestMap{}
		if caps != nil && caps.Elicitation != nil {
			reqs["name"] = &mcp.ElicitParams{Message: "Your name?", RequestedSchema: nameSchema()}
		}
		if caps != nil && caps.Sampling != nil {
			reqs["greeting"] = &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "greet"}}}}
		}
		if caps != nil && caps.RootsV2 != nil {
			reqs["roots"] = &mcp.ListRootsParams{}
		}
		if len(reqs) == 0 {
			return text("no input asked"), nil, nil
		}
		return &mcp.CallToolResult{InputRequests: reqs, RequestState: "state-1"}, nil, nil
	})
}

func nameSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}, Required: []string{"name"}}
}
