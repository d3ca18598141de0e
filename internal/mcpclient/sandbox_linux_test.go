package mcpclient

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/config"
	"github.com/agentd/agentd/internal/sandbox"
)

const sandboxCanary = "AGENTD_MCP_CANARY=canary-51be0c"

// sandboxOptions confines stdio servers as the daemon does, with a fresh
// AGENTD_HOME holding a store file. It fails under AGENTD_INTEROP=1 (CI)
// when a mechanism is missing, else skips.
func sandboxOptions(t *testing.T) (Options, string) {
	t.Helper()
	mech := sandbox.Probe()
	if mech.LandlockABI < 6 || !mech.UserNS || (mech.Root && mech.PidsCgroup == "") {
		msg := fmt.Sprintf("sandbox mechanisms missing here: %v", mech.Problems)
		if os.Getenv("AGENTD_INTEROP") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	k, v, _ := strings.Cut(sandboxCanary, "=")
	t.Setenv(k, v)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "agentd.db"), []byte("secret conversations"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Home: home}
	o := testOptions(nil)
	o.Sandbox = &sandbox.Launcher{Mechanisms: mech}
	o.SandboxPolicy = cfg.MCPSandbox
	return o, home
}

func TestSandboxedEverythingStdio(t *testing.T) {
	p := interop(t)
	o, _ := sandboxOptions(t)
	m := newTestManager(t, o)
	err := m.Add(t.Context(), config.MCPServer{
		Name:        "everything",
		TimeoutSecs: 10,
		Transport:   config.MCPTransport{Type: TransportStdio, Command: p.node, Args: []string{p.everything}},
	})
	if err != nil {
		t.Fatal(err)
	}
	exerciseEverything(t, m, "everything")
	st, _ := status(m, "everything")
	if st.Sandbox == nil || !st.Sandbox.Confined || len(st.Sandbox.Missing) > 0 || st.Sandbox.Network != "any" {
		t.Errorf("sandbox status = %+v", st.Sandbox)
	}
}

func TestSandboxedFilesystemServerRootedAtSlashCannotReadHome(t *testing.T) {
	p := interop(t)
	o, home := sandboxOptions(t)
	m := newTestManager(t, o)
	err := m.Add(t.Context(), config.MCPServer{
		Name:        "fs",
		TimeoutSecs: 10,
		Transport:   config.MCPTransport{Type: TransportStdio, Command: p.node, Args: []string{p.filesystem, "/"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	waitConnected(t, m, "fs")
	// The system stays readable: the server works.
	if res := callText(t, m, "mcp_fs_read_text_file", map[string]string{"path": "/etc/hostname"}); strings.TrimSpace(res.Content) == "" {
		t.Errorf("read /etc/hostname = %q", res.Content)
	}
	for _, tc := range []struct{ tool, path, leak string }{
		{"mcp_fs_read_text_file", filepath.Join(home, "agentd.db"), "secret conversations"},
		{"mcp_fs_list_directory", home, "[FILE]"},
	} {
		tl, path := mustTool(t, m, tc.tool), tc.path
		res, err := callTool(t.Context(), tl, map[string]string{"path": path})
		if err == nil && (!res.IsError || strings.Contains(res.Content, tc.leak)) {
			t.Errorf("%s of %s = %+v", tl.Spec().Name, path, res)
		}
		if err == nil && !strings.Contains(res.Content, "EACCES") && !strings.Contains(res.Content, "ermission denied") {
			t.Errorf("%s of %s: want a permission error, got %q", tl.Spec().Name, path, res.Content)
		}
	}
}

func TestSandboxedServerNetworkAndSecrets(t *testing.T) {
	o, home := sandboxOptions(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	for _, tc := range []struct {
		network, want string
	}{
		{"none", "dial: "},
		{"loopback", "dial: "},
		{"any", "connected"},
	} {
		t.Run(tc.network, func(t *testing.T) {
			m := newTestManager(t, o)
			s := faultServer(t, "net", "")
			s.Sandbox = &config.SandboxProfile{Network: tc.network}
			if err := m.Add(t.Context(), s); err != nil {
				t.Fatal(err)
			}
			waitConnected(t, m, "net")
			if res := callText(t, m, "mcp_net_dial", map[string]string{"text": addr}); !strings.HasPrefix(res.Content, tc.want) {
				t.Errorf("dial %s under network %s = %q, want %q", addr, tc.network, res.Content, tc.want)
			}
			if res := callText(t, m, "mcp_net_read_file", map[string]string{"text": filepath.Join(home, "agentd.db")}); !strings.Contains(res.Content, "permission denied") {
				t.Errorf("read of the store = %q", res.Content)
			}
			if res := callText(t, m, "mcp_net_read_file", map[string]string{"text": fmt.Sprintf("/proc/%d/environ", os.Getpid())}); strings.Contains(res.Content, "canary") || !strings.Contains(res.Content, "permission denied") {
				t.Errorf("read of the daemon's environ = %q", res.Content)
			}
			res := callText(t, m, "mcp_net_environ", nil)
			if strings.Contains(res.Content, "canary") {
				t.Errorf("environment = %q", res.Content)
			}
			// HOME and TMPDIR: one private directory, not AGENTD_HOME.
			envOf := func(k string) string {
				for _, l := range strings.Split(res.Content, "\n") {
					if v, ok := strings.CutPrefix(l, k+"="); ok {
						return v
					}
				}
				return ""
			}
			if h := envOf("HOME"); h == "" || h != envOf("TMPDIR") || h == home {
				t.Errorf("HOME %q TMPDIR %q (AGENTD_HOME %q)", h, envOf("TMPDIR"), home)
			}
		})
	}
}
