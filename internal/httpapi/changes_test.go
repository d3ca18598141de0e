package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/principal"
)

var (
	alice = &principal.Principal{Name: "alice"}
	admin = &principal.Principal{Name: "root", Admin: true}
)

// TestChangesDeliverWhatEachMaySee: a subscriber hears of the topics it
// asked for, and of owned changes only when it may see their owner.
func TestChangesDeliverWhatEachMaySee(t *testing.T) {
	for _, tc := range []struct {
		name   string
		who    *principal.Principal
		topics []string
		pub    Change
		heard  bool
	}{
		{"own run", alice, AllTopics, Change{Topic: TopicRuns, ID: "r1", Owner: "alice"}, true},
		{"another's run", alice, AllTopics, Change{Topic: TopicRuns, ID: "r2", Owner: "bob"}, false},
		{"admin hears another's run", admin, AllTopics, Change{Topic: TopicRuns, ID: "r2", Owner: "bob"}, true},
		{"unowned server state", alice, AllTopics, Change{Topic: TopicMCP, What: "failed", ID: "fs"}, true},
		{"topic not asked for", admin, []string{TopicApprovals}, Change{Topic: TopicRuns, ID: "r3"}, false},
		{"topic asked for", admin, []string{TopicApprovals}, Change{Topic: TopicApprovals, ID: "a1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewChanges(ChangesOptions{})
			s, reset, err := c.subscribe(tc.who, tc.topics, "")
			if err != nil || reset {
				t.Fatalf("subscribe: %v reset %v", err, reset)
			}
			c.Publish(tc.pub)
			got, _ := c.take(s)
			if heard := len(got) == 1 && got[0].ID == tc.pub.ID; heard != tc.heard {
				t.Fatalf("heard %v (%+v), want %v", heard, got, tc.heard)
			}
		})
	}
}

// TestChangesDropASlowSubscriber: a subscriber owed Buffer notices is
// dropped at the next one (its stream ends) rather than buffered without
// limit; repeats of one notice merge and never drop anyone.
func TestChangesDropASlowSubscriber(t *testing.T) {
	c := NewChanges(ChangesOptions{Buffer: 3})
	slow, _, _ := c.subscribe(admin, AllTopics, "")
	fast, _, _ := c.subscribe(admin, AllTopics, "")
	for range 100 {
		c.Publish(Change{Topic: TopicAudit, What: "ok", ID: "echo"})
	}
	if got, _ := c.take(slow); len(got) != 1 {
		t.Fatalf("100 repeats queued %d notices, want 1", len(got))
	}
	for i := range 4 {
		c.Publish(Change{Topic: TopicRuns, What: "started", ID: fmt.Sprint(i)})
		if i < 3 {
			c.take(fast)
		}
	}
	select {
	case <-slow.dropped:
	default:
		t.Fatal("a subscriber owed 4 notices with a buffer of 3 was not dropped")
	}
	select {
	case <-fast.dropped:
		t.Fatal("a subscriber that kept up was dropped")
	default:
	}
	if n := c.Subscribers(); n != 1 {
		t.Fatalf("%d subscribers left, want 1", n)
	}
}

// TestChangesResume: Last-Event-ID resumes with the notices missed while
// the history holds them; an id the history no longer covers, of another
// process, or malformed asks the client to read everything again.
func TestChangesResume(t *testing.T) {
	c := NewChanges(ChangesOptions{History: 4})
	s, _, _ := c.subscribe(admin, AllTopics, "")
	c.Publish(Change{Topic: TopicRuns, ID: "1"})
	got, _ := c.take(s)
	c.unsubscribe(s)
	last := c.idOf(got[0].seq)
	c.Publish(Change{Topic: TopicRuns, ID: "2"})
	c.Publish(Change{Topic: TopicMCP, ID: "fs"})

	s, reset, _ := c.subscribe(admin, AllTopics, last)
	missed, now := c.take(s)
	if reset || len(missed) != 2 || missed[0].ID != "2" || missed[1].ID != "fs" {
		t.Fatalf("resume from %s: reset %v, %+v", last, reset, missed)
	}
	c.unsubscribe(s)
	if s, reset, _ := c.subscribe(admin, AllTopics, now); reset || len(s.pending) != 0 {
		t.Fatalf("resume from the newest id %s: reset %v, %+v", now, reset, s.pending)
	}
	for i := range 5 {
		c.Publish(Change{Topic: TopicRuns, ID: fmt.Sprint("x", i)})
	}
	for _, id := range []string{now, "000000000000-1", "garbage", c.instance + "-999999"} {
		if _, reset, _ := c.subscribe(admin, AllTopics, id); !reset {
			t.Errorf("resume from %q: no reset", id)
		}
	}
}

// eventsServer serves GET /api/events of an API over c on loopback,
// reporting each time the handler returns.
func eventsServer(t *testing.T, c *Changes) (*httptest.Server, chan struct{}) {
	t.Helper()
	a := New(Options{Changes: c, Version: "test"})
	mux := http.NewServeMux()
	a.Register(mux)
	ended := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { ended <- struct{}{} }()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, ended
}

// sseEvent is one parsed server-sent event.
type sseEvent struct{ event, id, data string }

// readEvent reads the next event, skipping comments.
func readEvent(t *testing.T, br *bufio.Reader) (sseEvent, error) {
	t.Helper()
	var e sseEvent
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return e, err
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			if e.event != "" {
				return e, nil
			}
		case strings.HasPrefix(line, "event: "):
			e.event = line[7:]
		case strings.HasPrefix(line, "id: "):
			e.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			e.data = line[6:]
		}
	}
}

// TestEventsStream: over HTTP, the stream starts with hello (the health,
// so the page needs no request for it), carries each change with an id,
// refuses an unknown topic naming the parameter, and ends, after a
// "stopping" notice, when the hub closes.
func TestEventsStream(t *testing.T) {
	c := NewChanges(ChangesOptions{})
	srv, ended := eventsServer(t, c)

	resp, err := http.Get(srv.URL + "/api/events?topics=nope")
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Error Error }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 400 || e.Error.Field != "topics" || !strings.Contains(e.Error.Message, `"nope"`) {
		t.Fatalf("unknown topic: %d %+v", resp.StatusCode, e.Error)
	}
	<-ended

	resp, err = http.Get(srv.URL + "/api/events?topics=runs,mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	br := bufio.NewReader(resp.Body)
	hello, err := readEvent(t, br)
	var h Hello
	if err != nil || hello.event != "hello" || json.Unmarshal([]byte(hello.data), &h) != nil || h.Version != "test" || strings.Join(h.Topics, ",") != "runs,mcp" || h.Reset {
		t.Fatalf("hello: %+v %v", hello, err)
	}
	c.Publish(Change{Topic: TopicAudit, ID: "not asked for"})
	c.Publish(Change{Topic: TopicMCP, What: "failed", ID: "fs"})
	ev, err := readEvent(t, br)
	if err != nil || ev.event != "change" || ev.data != `{"topic":"mcp","what":"failed","id":"fs"}` || ev.id != c.instance+"-2" {
		t.Fatalf("change: %+v %v", ev, err)
	}
	c.Close()
	ev, err = readEvent(t, br)
	if err != nil || ev.data != `{"topic":"health","what":"stopping"}` {
		t.Fatalf("after Close: %+v %v", ev, err)
	}
	if _, err := readEvent(t, br); err == nil {
		t.Fatal("the stream goes on after Close")
	}
	<-ended
	resp2, err := http.Get(srv.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a stream opened after Close: %d", resp2.StatusCode)
	}
}

// TestEventsDropAClientThatDoesNotRead: a client that stops reading is
// dropped once its socket and its buffer are full: its handler returns
// (within the write timeout) instead of holding notices without bound.
func TestEventsDropAClientThatDoesNotRead(t *testing.T) {
	c := NewChanges(ChangesOptions{Buffer: 8, WriteTimeout: 200 * time.Millisecond})
	srv, ended := eventsServer(t, c)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A small receive buffer: the server's writes block sooner.
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /api/events HTTP/1.1\r\nHost: %s\r\n\r\n", srv.Listener.Addr())
	br := bufio.NewReader(conn)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "event: hello") {
			break
		}
	}
	// Not reading from here on.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	pad := strings.Repeat("x", 200)
	for i := 0; c.Subscribers() > 0; i++ {
		if ctx.Err() != nil {
			t.Fatalf("still subscribed after %d notices", i)
		}
		c.Publish(Change{Topic: TopicRuns, What: "started", ID: fmt.Sprint(pad, i)})
		if i%1000 == 999 {
			time.Sleep(time.Millisecond) // let the handler write and block
		}
	}
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("the handler of the dropped client did not return")
	}
}

// FuzzChangesRequest: the two things a client sends, the topics
// parameter and Last-Event-ID, never panic; accepted topics are known and
// distinct, a refusal names the parameter; an id resumes only when it is
// this hub's and its history covers it.
func FuzzChangesRequest(f *testing.F) {
	for _, s := range []string{"", "runs", "runs,mcp", " audit , a2a ", "runs,runs", "nope", ",", "runs,,mcp"} {
		f.Add(s, "")
	}
	f.Add("", "000000000000-1")
	f.Add("", "-")
	f.Add("", "abc-18446744073709551615")
	f.Fuzz(func(t *testing.T, topics, lastID string) {
		got, err := parseTopics(topics)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Field != "topics" || e.Status != http.StatusBadRequest {
				t.Fatalf("refusal %v does not name topics", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, tp := range got {
			if !slices.Contains(AllTopics, tp) || seen[tp] {
				t.Fatalf("parseTopics(%q) = %v", topics, got)
			}
			seen[tp] = true
		}
		c := NewChanges(ChangesOptions{History: 2})
		c.Publish(Change{Topic: TopicRuns, ID: "1"})
		s, reset, err := c.subscribe(admin, got, lastID)
		if err != nil {
			t.Fatal(err)
		}
		if lastID == "" && reset {
			t.Fatal("a first connection was told to reset")
		}
		if !reset && lastID != "" && !strings.HasPrefix(lastID, c.instance+"-") {
			t.Fatalf("resumed from another hub's id %q", lastID)
		}
		c.unsubscribe(s)
	})
}
