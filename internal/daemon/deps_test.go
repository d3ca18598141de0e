package daemon

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

type pkgInfo struct {
	ImportPath string
	Doc        string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) []pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "github.com/agentd/agentd/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkgInfo
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestImportGraph enforces the architecture (docs/architecture.md): the
// core and the vocabulary import no protocol edge, no protocol or vendor
// SDK, and no composition root. The OpenTelemetry API (attribute, codes,
// metric, trace, semconv) is vocabulary they may use; its SDK, exporters
// and the package that holds them (internal/telemetry) are not. Each
// protocol edge depends on its own protocol's SDK only (checkEdgeSDKs).
func TestImportGraph(t *testing.T) {
	const mod = "github.com/agentd/agentd/internal/"
	core := []string{"agent", "tool", "policy", "auditlog", "principal", "llm", "store", "manifest", "netguard", "buildinfo", "jsonrpcwire"}
	forbidden := []string{
		mod + "daemon", mod + "cli", mod + "httpapi", mod + "mcpserver", mod + "mcpclient",
		mod + "a2aedge", mod + "acpagent", mod + "config", mod + "store/sqlite", mod + "store/postgres", mod + "llm/openai",
		mod + "llm/anthropic", mod + "llm/gemini", mod + "builtin",
		"github.com/modelcontextprotocol/", "github.com/a2aproject/", "github.com/coder/acp-go-sdk",
		"github.com/openai/", "github.com/anthropics/", "google.golang.org/genai", "modernc.org/", "github.com/jackc/",
		"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters/", "go.opentelemetry.io/proto/",
		"github.com/prometheus/", "google.golang.org/grpc",
	}
	// Exact: internal/telemetry/attrset is API-only vocabulary.
	forbiddenExact := []string{mod + "telemetry"}
	pkgs := listPackages(t)
	checkEdgeSDKs(t, pkgs)
	for _, p := range pkgs {
		name, ok := strings.CutPrefix(p.ImportPath, mod)
		if !ok || !isCore(name, core) || strings.HasSuffix(name, "test") {
			continue
		}
		for _, dep := range p.Deps {
			for _, f := range forbiddenExact {
				if dep == f {
					t.Errorf("core package %s depends on %s", p.ImportPath, dep)
				}
			}
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f) && (strings.HasSuffix(f, "/") || strings.HasPrefix(dep, f+"/")) {
					t.Errorf("core package %s depends on %s", p.ImportPath, dep)
				}
			}
		}
	}
}

// checkEdgeSDKs: an edge speaks one protocol, so it depends on that
// protocol's SDK and no other; bridge, which joins A2A and MCP, is the one
// package that may depend on both. What an edge reaches through another
// package it may import (acpagent connects an editor's MCP servers with
// mcpclient) is that package's to answer for.
func checkEdgeSDKs(t *testing.T, pkgs []pkgInfo) {
	const mod = "github.com/agentd/agentd/internal/"
	sdks := map[string]string{
		"a2a": "github.com/a2aproject/",
		"mcp": "github.com/modelcontextprotocol/",
		"acp": "github.com/coder/acp-go-sdk",
	}
	edges := map[string]struct {
		speaks []string
		via    []string // edges it may import, with their SDKs
	}{
		"a2aedge":   {speaks: []string{"a2a"}},
		"mcpclient": {speaks: []string{"mcp"}},
		"mcpserver": {speaks: []string{"mcp"}, via: []string{"mcpclient"}},
		"acpagent":  {speaks: []string{"acp"}, via: []string{"mcpclient"}},
		"bridge":    {speaks: []string{"a2a", "mcp"}, via: []string{"a2aedge", "mcpclient"}},
	}
	deps := map[string][]string{}
	for _, p := range pkgs {
		deps[p.ImportPath] = p.Deps
	}
	seen := 0
	for _, p := range pkgs {
		name, _ := strings.CutPrefix(p.ImportPath, mod)
		e, ok := edges[name]
		if !ok {
			continue
		}
		seen++
		through := map[string]bool{}
		for _, v := range e.via {
			through[mod+v] = true
			for _, d := range deps[mod+v] {
				through[d] = true
			}
		}
		for proto, prefix := range sdks {
			if slices.Contains(e.speaks, proto) {
				continue
			}
			for _, dep := range p.Deps {
				if strings.HasPrefix(dep, prefix) && !through[dep] {
					t.Errorf("edge %s depends on %s: it may speak only %v", p.ImportPath, dep, e.speaks)
					break // one line per SDK is enough
				}
			}
		}
	}
	if seen != len(edges) {
		t.Errorf("found %d of the %d edges %v: update checkEdgeSDKs", seen, len(edges), edges)
	}
}

func isCore(name string, core []string) bool {
	for _, c := range core {
		if name == c {
			return true
		}
	}
	return false
}

// TestNoTelemetryGlobals: no agentd package imports the root otel
// package, where the global providers and propagator live: providers are
// injected by the composition root, never registered globally.
func TestNoTelemetryGlobals(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, imp := range p.Imports {
			if imp == "go.opentelemetry.io/otel" {
				t.Errorf("%s imports go.opentelemetry.io/otel (global providers); take a provider in its options instead", p.ImportPath)
			}
		}
	}
}

// TestPackageDocs checks that every package has a doc comment.
func TestPackageDocs(t *testing.T) {
	for _, p := range listPackages(t) {
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("package %s has no doc comment", p.ImportPath)
		}
	}
}

// TestDaemonLinksNoCgoPackage: no dependency of the binary outside the
// standard library uses cgo. One that did (libcap/psx, through
// go-landlock) made the daemon an externally linked cgo binary whose
// start touches three times the file-backed pages (idle RSS 22 MB
// against 9 MB), and a static CGO_ENABLED=0 build is what the image
// ships.
func TestDaemonLinksNoCgoPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{if .CgoFiles}}{{.ImportPath}}{{end}}{{end}}", "github.com/agentd/agentd/cmd/agentd").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if cgo := strings.Fields(string(out)); len(cgo) > 0 {
		t.Errorf("packages with cgo files in the daemon's dependencies: %v", cgo)
	}
}
