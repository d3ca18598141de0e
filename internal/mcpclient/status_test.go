package mcpclient

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestOnStatusChanged: a status watcher hears of a server connecting, of
// its process dying and coming back (the reconnect counted; the drop in
// between may be coalesced away, which is why the daemon's feed compares
// reconnect counts), and of its removal; each time Status already says
// so when it is called.
func TestOnStatusChanged(t *testing.T) {
	m := newTestManager(t, testOptions(nil))
	var mu sync.Mutex
	var seen []string // "state/reconnects", or "gone"
	m.OnStatusChanged(func() {
		st, ok := status(m, "faults")
		v := "gone"
		if ok {
			v = st.State + "/" + strconv.Itoa(st.Reconnects)
		}
		mu.Lock()
		if len(seen) == 0 || seen[len(seen)-1] != v {
			seen = append(seen, v)
		}
		mu.Unlock()
	})
	heard := func(v string) func() bool {
		return func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, s := range seen {
				if s == v {
					return true
				}
			}
			return false
		}
	}
	if err := m.Add(t.Context(), faultServer(t, "faults", "normal")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "connected/0", heard("connected/0"))
	if _, err := callTool(t.Context(), mustTool(t, m, "mcp_faults_crash"), map[string]any{}); err == nil {
		t.Fatal("the crash call succeeded")
	}
	waitFor(t, 10*time.Second, "connected/1 after the crash", heard("connected/1"))
	if err := m.Remove(t.Context(), "faults"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the removal", heard("gone"))
}
