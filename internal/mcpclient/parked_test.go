//lint:file-ignore SA1019 sampling (deprecated in 2026-07-28, alive in every earlier version) is relayed on purpose

package mcpclient

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// parkOne parks a call that asks its caller to elicit once and ends with
// the answer's action as its text.
func parkOne(t *testing.T, pk *parking, caps *mcp.ClientCapabilities) *parkedCall {
	t.Helper()
	p, err := pk.park(caps, "tools/call", func(ctx context.Context, c *Caller, _ func(string, float64, float64)) (mcp.Result, error) {
		r, err := c.Elicit(ctx, &mcp.ElicitParams{Message: "name?"})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.Action}}}, nil
	}, func(reqs mcp.InputRequestMap, state string) mcp.Result {
		return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParkedCallRounds(t *testing.T) {
	pk := newParking()
	defer pk.close()
	elicit := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
	p := parkOne(t, pk, elicit)
	ctx := context.Background()
	res, err := toolResult(pk.next(ctx, "srv", p))
	if err != nil || len(res.InputRequests) != 1 || res.RequestState == "" {
		t.Fatalf("first round: %+v, %v; want one input request and a state", res, err)
	}
	var key string
	for k := range res.InputRequests {
		key = k
	}
	state := res.RequestState

	for _, tc := range []struct {
		name, server, state, want string
	}{
		{"tampered", "srv", state + "x", "integrity"},
		{"another server's", "other", state, "integrity"},
		{"not a state", "srv", "garbage", "integrity"},
		{"empty", "srv", "", "integrity"},
	} {
		_, _, err := pk.resume(tc.server, "tools/call", tc.state)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s state: %v, want invalid params naming %q", tc.name, err, tc.want)
		}
	}

	if _, _, err := pk.resume("srv", "prompts/get", state); err == nil || !strings.Contains(err.Error(), "issued for tools/call") {
		t.Fatalf("a tool call's state resumed a prompts/get: %v", err)
	}
	q, up, err := pk.resume("srv", "tools/call", state)
	if err != nil || q != p || up != "" {
		t.Fatalf("resume: %v %q %v", q, up, err)
	}
	if _, _, err := pk.resume("srv", "tools/call", state); err == nil || !strings.Contains(err.Error(), "another request") {
		t.Errorf("second resume of an attached call: %v", err)
	}
	q.answer(mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept"}, "unasked": &mcp.ElicitResult{Action: "accept"}})
	res, err = toolResult(pk.next(ctx, "srv", q))
	if err != nil || res.InputRequests != nil || res.Content[0].(*mcp.TextContent).Text != "accept" {
		t.Fatalf("last round: %+v, %v; want the call's own result", res, err)
	}
	<-p.done
	if _, _, err := pk.resume("srv", "tools/call", state); err == nil || !strings.Contains(err.Error(), "ended") {
		t.Errorf("resume of an ended call: %v", err)
	}
}

// TestParkedCallUndeclaredKinds: what the client did not declare is
// answered for it at once, never handed out: an elicitation is declined.
func TestParkedCallUndeclaredKinds(t *testing.T) {
	pk := newParking()
	defer pk.close()
	p := parkOne(t, pk, &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}})
	res, err := toolResult(pk.next(context.Background(), "srv", p))
	if err != nil || res.InputRequests != nil || res.Content[0].(*mcp.TextContent).Text != "decline" {
		t.Fatalf("got %+v, %v; want the call to end with a declined elicitation", res, err)
	}
}

func TestParkedUpstreamState(t *testing.T) {
	pk := newParking()
	s := pk.sealUpstream("srv", "round=2;name=Alice")
	p, up, err := pk.resume("srv", "tools/call", s)
	if err != nil || p != nil || up != "round=2;name=Alice" {
		t.Fatalf("resume(%q) = %v, %q, %v", s, p, up, err)
	}
	if _, _, err := pk.resume("srv", "tools/call", strings.Replace(s, "u.", "p.", 1)); err == nil {
		t.Error("a state with its kind changed was accepted")
	}
}

// FuzzResumeState: no string resumes a call or yields an upstream state
// unless this daemon issued it, and none panics.
func FuzzResumeState(f *testing.F) {
	pk := newParking()
	f.Add(pk.sealUpstream("srv", "x"))
	f.Add("p.abc.1.zzz")
	f.Add("u..")
	f.Add("")
	f.Fuzz(func(t *testing.T, state string) {
		p, up, err := pk.resume("srv", "tools/call", state)
		if err == nil && !pk.issued("srv", state) {
			t.Fatalf("resume(%q) accepted a state not issued: %v %q", state, p, up)
		}
	})
}

// TestParkingWorkers: parked calls one after another run on one worker,
// which ends once idle for workerIdle; calls at once get workers of their
// own; close ends idle workers.
func TestParkingWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Workers are counted by the parking itself: the process's
		// goroutine count includes other tests' goroutines coming and
		// going (it once read 2 for 3 workers under -race in CI).
		pk := newParking()
		for range 5 {
			done := make(chan struct{})
			pk.run(func() { close(done) })
			<-done
			synctest.Wait()
			if n := int(pk.workers.Load()); n != 1 {
				t.Fatalf("%d workers after calls one after another, want 1 worker", n)
			}
		}
		time.Sleep(workerIdle)
		synctest.Wait()
		if n := int(pk.workers.Load()); n != 0 {
			t.Fatalf("%d workers after the worker was idle for %v, want 0", n, workerIdle)
		}

		release := make(chan struct{})
		for range 3 {
			pk.run(func() { <-release })
		}
		synctest.Wait()
		if n := int(pk.workers.Load()); n != 3 {
			t.Fatalf("%d workers for 3 calls at once, want 3 workers", n)
		}
		close(release)
		synctest.Wait()
		pk.close()
		if n := int(pk.workers.Load()); n != 0 {
			t.Fatalf("%d workers after close, want 0", n)
		}
		pk.close() // a second close is harmless
	})
}
