package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Machine describes where the run happened, and the versions compared.
type Machine struct {
	CPU    string            `json:"cpu"`
	Cores  int               `json:"cores"`
	Memory string            `json:"memory,omitempty"`
	Kernel string            `json:"kernel"`
	OS     string            `json:"os"`
	Go     string            `json:"go"`
	Node   string            `json:"node"`
	Date   string            `json:"date"`
	Peers  map[string]string `json:"versions"`
}

// Machine gathers the machine's description.
func (e *Env) Machine(ctx context.Context) Machine {
	m := Machine{
		Cores: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version(),
		Date: time.Now().UTC().Format(time.RFC3339), Peers: map[string]string{},
		CPU: "unknown", Kernel: "unknown", Node: "not installed",
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				m.Memory = strings.TrimSpace(v)
				break
			}
		}
	}
	if e.nodeErr == nil {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(cctx, e.Node, "--version").Output(); err == nil {
			m.Node = strings.TrimSpace(string(out))
		}
		for name, dir := range map[string]string{
			"server-everything": "@modelcontextprotocol/server-everything",
			"supergateway":      "supergateway",
			"mcp-proxy":         "mcp-proxy",
			"@a2a-js/sdk":       "@a2a-js/sdk",
			"express":           "express",
		} {
			if v := packageVersion(filepath.Join(e.Modules, dir, "package.json")); v != "" {
				m.Peers[name] = v
			}
		}
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			switch d.Path {
			case "github.com/modelcontextprotocol/go-sdk":
				m.Peers["go-sdk"] = d.Version
			case "github.com/a2aproject/a2a-go/v2":
				m.Peers["a2a-go"] = d.Version
			}
		}
	}
	return m
}

func packageVersion(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &p)
	return p.Version
}
