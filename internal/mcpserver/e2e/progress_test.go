package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/store"
)

// TestGatewayProgressBeforeResult calls server-everything's
// trigger-long-running-operation through /mcp/gateway/everything with the
// TypeScript SDK's client, over a stdio and an HTTP upstream: every
// progress notification the upstream sends reaches the client, in order,
// before the result. The upstream writes its last notification right
// before its result; agentd's client used to hand the result over before
// its handler had forwarded that notification, which then found its call
// gone (issue 30, item 1: 4 of 5 steps in 7 of 7 runs over HTTP).
func TestGatewayProgressBeforeResult(t *testing.T) {
	nodeBin := node(t)
	everything := nodeModule(t, "@modelcontextprotocol/server-everything/dist/index.js")
	links := []struct {
		name      string
		transport func(t *testing.T) string
	}{
		{"stdio", func(t *testing.T) string {
			return fmt.Sprintf("[mcp_servers.transport]\ntype = \"stdio\"\ncommand = %q\nargs = [%q, \"stdio\"]\n", nodeBin, everything)
		}},
		{"http", func(t *testing.T) string {
			addr := freeAddr(t)
			_, port, _ := strings.Cut(addr, ":")
			cmd := exec.Command(nodeBin, everything, "streamableHttp")
			cmd.Env = []string{"PORT=" + port, "PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				_ = cmd.Wait()
			})
			waitListening(t, addr)
			return fmt.Sprintf("allow_private = true\n[mcp_servers.transport]\ntype = \"http\"\nurl = \"http://%s/mcp\"\n", addr)
		}},
	}
	const runs, steps = 6, 5
	for _, link := range links {
		t.Run(link.name, func(t *testing.T) {
			d, url := startGatewayDaemon(t, link.transport(t))
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, nodeBin, "mcp-progress-client.mjs", url, "trigger-long-running-operation", strconv.Itoa(runs), strconv.Itoa(steps))
			cmd.Dir = nodeModule(t, "..")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("mcp-progress-client.mjs: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
			}
			got := map[string]struct {
				Progress []float64
				Text     string
				Errors   []string
			}{}
			for line := range bytes.Lines(out) {
				var s struct {
					Step     string
					Progress []float64
					Text     string
					Errors   []string
				}
				if err := json.Unmarshal(line, &s); err != nil {
					t.Fatalf("bad line %q: %v", line, err)
				}
				got[s.Step] = struct {
					Progress []float64
					Text     string
					Errors   []string
				}{s.Progress, s.Text, s.Errors}
			}
			want := []float64{1, 2, 3, 4, 5}
			for run := range runs {
				r, ok := got[fmt.Sprintf("run%d", run)]
				if !ok || !strings.Contains(r.Text, "completed") {
					t.Fatalf("run %d: no result: %s", run, out)
				}
				if !slices.Equal(r.Progress, want) {
					t.Errorf("run %d: progress before the result = %v, want %v", run, r.Progress, want)
				}
			}
			if e := got["errors"].Errors; len(e) > 0 {
				t.Errorf("client errors (a late progress notification finds no handler): %q", e)
			}

			// The call the client cancelled is audited as cancelled, by
			// the client (issue 30, item 4).
			var rec *store.AuditRecord
			deadline := time.Now().Add(10 * time.Second)
			for rec == nil {
				recs, err := d.Audit.QueryAudit(ctx, store.AuditFilter{})
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range recs {
					if r.Outcome != "ok" {
						rec = &recs[i]
					}
				}
				if rec == nil && time.Now().After(deadline) {
					t.Fatalf("no audit record of the cancelled call: %+v", recs)
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("audit of the cancelled call: %+v", *rec)
			if rec.Outcome != "cancelled" || rec.Detail != "cancelled by the MCP client (notifications/cancelled)" {
				t.Errorf("cancelled call audited as %q %q, want cancelled by the client", rec.Outcome, rec.Detail)
			}
		})
	}
}
