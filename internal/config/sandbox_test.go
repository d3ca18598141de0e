package config

import (
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/manifest"
	"github.com/agentd/agentd/internal/sandbox"
)

func TestSandboxValidation(t *testing.T) {
	tests := []struct {
		name, body, want string // want "" = valid
	}{
		{"defaults", "", ""},
		{"full", "[sandbox]\nmode = \"best_effort\"\nread = [\"/srv\"]\n[sandbox.shell]\nnetwork = \"loopback\"\nmemory_mb = 512\n[sandbox.agents.coder]\nnetwork = \"any\"\nconnect_tcp = [443]\nwrite = [\"~/repos\"]\n", ""},
		{"bad mode", "[sandbox]\nmode = \"strict\"\n", `config.toml:2: sandbox.mode: "strict" is not one of required, best_effort, off`},
		{"bad network", "[sandbox.shell]\nnetwork = \"lan\"\n", `config.toml:2: sandbox.shell.network: "lan" is not one of none, loopback, any`},
		{"relative path", "[sandbox]\n\nwrite = [\"data\"]\n", `config.toml:3: sandbox.write[0]: "data" must be an absolute path`},
		{"ports need any", "[sandbox.agents.coder]\nconnect_tcp = [443]\n", "sandbox.agents.coder.connect_tcp: needs network = \"any\""},
		{"port range", "[sandbox.agents.coder]\nnetwork = \"any\"\nconnect_tcp = [0]\n", "sandbox.agents.coder.connect_tcp[0]: 0 is not a TCP port"},
		{"limit", "[sandbox.shell]\nmax_procs = -2\n", "sandbox.shell.max_procs: must be positive, 0 for the default or -1 for no limit"},
		{"per-server mode", "[[mcp_servers]]\nname = \"fs\"\n[mcp_servers.transport]\ntype = \"stdio\"\ncommand = \"x\"\n[mcp_servers.sandbox]\nmode = \"on\"\n", `mcp_servers[0].sandbox.mode: "on" is not one of off`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadString(t, tt.body)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestSandboxPolicies(t *testing.T) {
	c := &Config{Home: "/var/lib/agentd", Agents: []manifest.Manifest{{Name: "coder"}, {Name: "writer"}}}
	c.Sandbox.Shell = SandboxProfile{MemoryMB: 100}
	c.Sandbox.Agents = map[string]SandboxProfile{"coder": {Network: "any", MaxProcs: -1, Write: []string{"/srv/repos"}}}
	ws := c.WorkspaceDir("coder", c.Agents[0])

	coder := c.ShellSandbox("coder", ws)
	if coder.Network != sandbox.NetworkAny || coder.MaxProcs != 0 || coder.MemoryBytes != 100<<20 || coder.CPUSeconds != DefaultShellCPUSecs {
		t.Errorf("coder = %+v", coder)
	}
	coder.Write = append(coder.Write, ws)
	if err := coder.Check(); err != nil {
		t.Errorf("coder's own workspace refused: %v", err)
	}
	other := c.WorkspaceDir("writer", c.Agents[1])
	coder.Write = append(coder.Write, other)
	if err := coder.Check(); err == nil {
		t.Error("coder may write writer's workspace")
	}
	writer := c.ShellSandbox("writer", other)
	if writer.Network != sandbox.NetworkNone || writer.MaxProcs != DefaultShellMaxProcs {
		t.Errorf("writer = %+v", writer)
	}

	srv := c.MCPSandbox(MCPServer{Name: "fs", Transport: MCPTransport{Type: "stdio", Command: "/bin/sh", Args: []string{"/"}}}, "/bin/sh")
	if srv.Network != sandbox.NetworkAny || srv.CPUSeconds != 0 || srv.MaxProcs != DefaultMCPMaxProcs {
		t.Errorf("server = %+v", srv)
	}
	for _, r := range srv.Read {
		if r == "/" {
			t.Errorf("a directory argument was granted: %v", srv.Read)
		}
	}
	if err := srv.Check(); err != nil {
		t.Errorf("server policy: %v", err)
	}
	c.Sandbox.Mode = SandboxOff
	if !c.MCPSandbox(MCPServer{Name: "fs"}, "/bin/sh").Off {
		t.Error("mode off did not reach the server policy")
	}
}
