//go:build linux

package reliability

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	"github.com/agentd/agentd/internal/a2aedge"
	"github.com/agentd/agentd/internal/llm/llmtest"
)

const crashKey = "crash-test-key"

// binaryConfig writes the config of the real-binary tests: one A2A- and
// MCP-exposed agent on a fake model, limits out of the way.
func binaryConfig(t testing.TB, home, addr, modelURL string) string {
	t.Helper()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(binaryConfigBody(addr, modelURL)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// binaryConfigBody is the text of binaryConfig's file.
func binaryConfigBody(addr, modelURL string) string {
	return fmt.Sprintf(`listen = %q
api_key = %q
log_level = "warn"

[providers.fake]
kind = "openai"
base_url = %q

[[agents]]
name = "alpha"
description = "Alpha, for reliability tests."
provider = "fake"
model = "reliability-model"

[agents.expose]
a2a = true
mcp = true

[a2a]
enabled = true
max_tasks = 100000

[limits]
rate_per_sec = 1000000
burst = 1000000
`, addr, crashKey, modelURL)
}

// bearerTransport adds the API key to every request.
type bearerTransport struct {
	key  string
	next http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// loadTransport is a transport for many concurrent clients on loopback.
func loadTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0
	tr.MaxIdleConnsPerHost = 1024
	tr.Proxy = nil
	return tr
}

// a2aClient connects an a2a-go client with the API key to base's agent.
func a2aClient(t testing.TB, base, agent, key string, tr http.RoundTripper) *a2aclient.Client {
	t.Helper()
	r, err := doHTTP(context.Background(), http.DefaultClient, "GET", base+"/a2a/agents/"+agent+"/.well-known/agent-card.json", nil, "", nil)
	if err != nil || r.Status != http.StatusOK {
		t.Fatalf("public card: %v %v", r, err)
	}
	card, err := a2aedge.ParseCard(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: bearerTransport{key: key, next: tr}}
	cl, err := a2aclient.NewFromCard(context.Background(), card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func textMessage(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))}
}

// chatStream is one streamed chat message held open.
type chatStream struct {
	message   string
	sessionID string // from the session event; "" if none came
	started   bool   // a text event arrived: the model is answering
	final     bool   // the run finished before the kill
}

// openChatStream posts msg with Accept: text/event-stream and reads
// events until the model has started answering, then hands the rest of
// the stream to a goroutine of g that reads it to its end.
func openChatStream(ctx context.Context, g *group, hc *http.Client, base, msg string, cs *chatStream, ready func()) error {
	body, _ := json.Marshal(map[string]string{"message": msg})
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/api/agents/alpha/messages", strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+crashKey)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return fmt.Errorf("stream %q: %d %s", msg, resp.StatusCode, b)
	}
	br := bufio.NewReader(resp.Body)
	var event string
	signalled := false
	read := func() error {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return nil // the daemon died: expected
			}
			line = strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(line, "event:"):
				event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
			case strings.HasPrefix(line, "data:"):
				switch event {
				case "session":
					var ev struct {
						SessionID string `json:"session_id"`
					}
					_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data:")), &ev)
					cs.sessionID = ev.SessionID
				case "text":
					cs.started = true
				case "final", "error":
					cs.final = true
				}
				if cs.started && !signalled {
					signalled = true
					ready()
				}
			}
		}
	}
	g.Go(func() error {
		defer resp.Body.Close()
		err := read()
		if !signalled {
			ready()
		}
		return err
	})
	return nil
}

// TestCrashKill9 kills the real binary with A2A tasks and chat sessions
// in flight, restarts it on the same home, and accounts for every task
// and every user message: finished work as it finished, work in flight
// failed with a reason (tasks) or kept without an invented answer
// (sessions).
func TestCrashKill9(t *testing.T) {
	track(t, areaCrash, false)
	if testing.Short() {
		skipf(t, "builds and runs the agentd binary (not with -short)")
	}
	const (
		done     = 10  // finished before the kill, of each kind
		inflight = 100 // in flight at the kill, of each kind
		burst    = 20  // chat messages sent while the kill happens
	)
	model := llmtest.NewOpenAIServer(t, func(r *llmtest.Request) llmtest.Reply {
		if strings.HasPrefix(r.LastUserText(), "slow") {
			// Two minutes of streaming: still running when the process dies.
			return llmtest.Reply{Text: strings.Repeat("s", 1200), Chunks: 1200, Delay: 100 * time.Millisecond}
		}
		return llmtest.Reply{Text: "quick answer to " + r.LastUserText()}
	})
	home := t.TempDir()
	addr := freeAddr(t)
	cfg := binaryConfig(t, home, addr, model.URL)
	first := startAgentd(t, cfg, home, addr)
	base := first.URL
	tr := loadTransport()
	hc := &http.Client{Transport: tr}
	cl := a2aClient(t, base, "alpha", crashKey, tr)
	ctx := context.Background()

	// Finished work.
	type sent struct {
		id   a2a.TaskID
		text string
	}
	var doneTasks []sent
	var doneSessions []string
	for i := range done {
		text := fmt.Sprintf("quick task %d", i)
		res, err := cl.SendMessage(ctx, textMessage(text))
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("quick task: %s", task.Status.State)
		}
		doneTasks = append(doneTasks, sent{task.ID, text})
		r, err := doHTTP(ctx, hc, "POST", base+"/api/agents/alpha/messages", map[string]string{"message": fmt.Sprintf("quick chat %d", i)}, crashKey, nil)
		if err != nil || r.Status != http.StatusOK {
			t.Fatalf("quick chat: %v %v", r, err)
		}
		var m messageReply
		decodeJSON(t, r.Body, &m)
		doneSessions = append(doneSessions, m.SessionID)
	}

	// Work in flight: tasks accepted (ReturnImmediately) and streams whose
	// model has started answering.
	slowTasks := make([]sent, inflight)
	g := &group{limit: make(chan struct{}, 16)}
	for i := range inflight {
		g.Go(func() error {
			text := fmt.Sprintf("slow task %d", i)
			req := textMessage(text)
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
			res, err := cl.SendMessage(ctx, req)
			if err != nil {
				return err
			}
			task, ok := res.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateWorking {
				return fmt.Errorf("slow task %d: %T %+v", i, res, res)
			}
			slowTasks[i] = sent{task.ID, text}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	streams := make([]*chatStream, inflight+burst)
	readers := &group{}
	var ready sync.WaitGroup
	ready.Add(inflight)
	for i := range inflight {
		streams[i] = &chatStream{message: fmt.Sprintf("slow chat %d", i)}
		var once sync.Once
		if err := openChatStream(ctx, readers, hc, base, streams[i].message, streams[i], func() { once.Do(ready.Done) }); err != nil {
			t.Fatal(err)
		}
	}
	waitOrFail(t, &ready, 60*time.Second, "in-flight streams to start")

	// The burst: messages still arriving while the process is killed.
	var burstSent atomic.Int32
	burstG := &group{}
	for i := range burst {
		streams[inflight+i] = &chatStream{message: fmt.Sprintf("slow burst %d", i)}
		burstG.Go(func() error {
			burstSent.Add(1)
			// Errors are expected: the daemon dies under these requests.
			_ = openChatStream(ctx, readers, hc, base, streams[inflight+i].message, streams[inflight+i], func() {})
			return nil
		})
		if i == burst/2 {
			first.kill()
		}
		// Spread over a few ms, so that some are answered and some not.
		time.Sleep(2 * time.Millisecond)
	}
	_ = burstG.Wait()
	_ = readers.Wait()
	tr.CloseIdleConnections()
	for _, s := range streams[:inflight] {
		if s.final {
			t.Fatalf("stream %q finished before the kill: the model is not slow enough", s.message)
		}
	}

	start := time.Now()
	second := startAgentd(t, cfg, home, addr)
	restart := time.Since(start)
	cl = a2aClient(t, base, "alpha", crashKey, tr)

	// Tasks.
	var tasksOK, tasksFailedWithReason, tasksLost, tasksWrong int
	for _, s := range doneTasks {
		got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: s.id})
		switch {
		case err != nil:
			tasksLost++
			t.Errorf("finished task %s lost: %v", s.id, err)
		case got.Status.State != a2a.TaskStateCompleted || a2aedge.ResultText(got) != "quick answer to "+s.text:
			tasksWrong++
			t.Errorf("finished task %s after restart: %s %q", s.id, got.Status.State, a2aedge.ResultText(got))
		default:
			tasksOK++
		}
	}
	for _, s := range slowTasks {
		got, err := cl.GetTask(ctx, &a2a.GetTaskRequest{ID: s.id})
		switch {
		case err != nil:
			tasksLost++
			t.Errorf("in-flight task %s lost: %v", s.id, err)
		case got.Status.State != a2a.TaskStateFailed || got.Status.Message == nil || !strings.Contains(got.Status.Message.Parts[0].Text(), "agentd stopped while this task was"):
			tasksWrong++
			t.Errorf("in-flight task %s after restart: %s %+v", s.id, got.Status.State, got.Status.Message)
		case len(got.History) == 0 || got.History[0].Parts[0].Text() != s.text:
			tasksWrong++
			t.Errorf("in-flight task %s lost its message: %+v", s.id, got.History)
		default:
			tasksFailedWithReason++
		}
	}
	list, err := cl.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if list.TotalSize != done+inflight {
		t.Errorf("tasks listed after restart: %d, want %d", list.TotalSize, done+inflight)
	}

	// Sessions.
	session := func(id string) (msgs []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	}, err error) {
		r, err := doHTTP(ctx, hc, "GET", base+"/api/sessions/"+id, nil, crashKey, nil)
		if err != nil {
			return nil, err
		}
		if r.Status != http.StatusOK {
			return nil, fmt.Errorf("%d %s", r.Status, r.Body)
		}
		var s struct {
			Messages []struct {
				Role  string `json:"role"`
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(r.Body, &s); err != nil {
			return nil, err
		}
		return s.Messages, nil
	}
	var sessOK, sessLost, sessWrong, burstEvent, burstKept int
	for i, id := range doneSessions {
		msgs, err := session(id)
		want := fmt.Sprintf("quick chat %d", i)
		switch {
		case err != nil:
			sessLost++
			t.Errorf("finished session %s: %v", id, err)
		case len(msgs) != 2 || msgs[0].Parts[0].Text != want || msgs[1].Parts[0].Text != "quick answer to "+want:
			sessWrong++
			t.Errorf("finished session %s after restart: %+v", id, msgs)
		default:
			sessOK++
		}
	}
	for i, s := range streams {
		isBurst := i >= inflight
		if s.sessionID == "" {
			if !isBurst {
				t.Errorf("stream %q got no session event", s.message)
			}
			continue
		}
		if isBurst {
			burstEvent++
		}
		msgs, err := session(s.sessionID)
		switch {
		case err != nil:
			sessLost++
			t.Errorf("session %s of %q, announced to the client, lost: %v", s.sessionID, s.message, err)
		case len(msgs) == 0 || msgs[0].Role != "user" || msgs[0].Parts[0].Text != s.message:
			sessLost++
			t.Errorf("session %s of %q lost its user message: %+v", s.sessionID, s.message, msgs)
		case len(msgs) != 1:
			// The model never finished: no answer may have been invented.
			sessWrong++
			t.Errorf("session %s of %q has %d messages after the crash, want only the user's", s.sessionID, s.message, len(msgs))
		default:
			if isBurst {
				burstKept++
			} else {
				sessOK++
			}
		}
	}
	// The daemon works after the restart.
	if r, err := doHTTP(ctx, hc, "POST", base+"/api/agents/alpha/messages", map[string]string{"message": "after the restart"}, crashKey, nil); err != nil || r.Status != http.StatusOK {
		t.Errorf("chat after restart: %v %v", r, err)
	}
	if !second.stop(10 * time.Second) {
		t.Error("the restarted daemon did not stop on SIGTERM within 10 s")
	}
	restartLog := second.logText()
	for _, proc := range []*agentdProc{first, second} {
		if strings.Contains(proc.logText(), crashKey) {
			t.Error("the daemon's log holds its API key")
		}
	}
	if !strings.Contains(restartLog, "left unfinished") {
		t.Errorf("the restart did not log the tasks it failed:\n%s", restartLog)
	}

	fig(t, areaCrash, "A2A tasks", "%d finished + %d in flight at the kill: %d found, %d lost, %d with a wrong state", done, inflight, tasksOK+tasksFailedWithReason+tasksWrong, tasksLost, tasksWrong)
	fig(t, areaCrash, "A2A tasks in flight after restart", "%d of %d failed with the restart reason and their message kept", tasksFailedWithReason, inflight)
	fig(t, areaCrash, "Chat sessions", "%d finished + %d streaming at the kill: %d found intact, %d lost, %d wrong", done, inflight, sessOK, sessLost, sessWrong)
	fig(t, areaCrash, "Chat messages sent during the kill", "%d sent, %d got a session event, %d of those kept their user message", burstSent.Load(), burstEvent, burstKept)
	fig(t, areaCrash, "Restart on the same home", "healthy %s after start; the in-flight tasks were failed before serving, and the log says how many", restart.Round(10*time.Millisecond))
}

// group runs goroutines and returns the first error of any (what
// errgroup does, without the dependency); limit, if set, bounds how many
// run at once.
type group struct {
	wg    sync.WaitGroup
	limit chan struct{}
	mu    sync.Mutex
	err   error
}

func (g *group) Go(f func() error) {
	if g.limit != nil {
		g.limit <- struct{}{}
	}
	g.wg.Go(func() {
		if g.limit != nil {
			defer func() { <-g.limit }()
		}
		if err := f(); err != nil {
			g.mu.Lock()
			if g.err == nil {
				g.err = err
			}
			g.mu.Unlock()
		}
	})
}

// Wait waits for every goroutine and returns the first error.
func (g *group) Wait() error {
	g.wg.Wait()
	return g.err
}

// waitOrFail waits for wg, failing t after timeout.
func waitOrFail(t testing.TB, wg *sync.WaitGroup, timeout time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}
