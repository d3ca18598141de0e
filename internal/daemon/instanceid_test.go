package daemon

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/config"
)

// TestInstanceIDOnLogsAndMetrics: the daemon's log records carry
// service.instance.id, the same id as target_info on /metrics.
func TestInstanceIDOnLogsAndMetrics(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte("[metrics]\npublic = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(config.LoadOptions{Path: path, Home: home, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	var buf syncBuffer
	d, err := New(context.Background(), cfg, Options{Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := d.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, ln) }()
	defer func() {
		cancel()
		<-served
		d.Close()
	}()
	id := d.Telemetry.InstanceID()
	if id == "" {
		t.Fatal("no instance id")
	}

	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `service_instance_id="`+id+`"`) {
		t.Errorf("/metrics has no target_info with service_instance_id %q", id)
	}

	var records int
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		records++
		if rec["service.instance.id"] != id {
			t.Errorf("record without service.instance.id %s: %s", id, line)
		}
	}
	if records == 0 {
		t.Fatal("the daemon logged nothing")
	}
}
