package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// maxReleaseMiB bounds the stripped linux/amd64 release binary (the
// Makefile's flags: CGO_ENABLED=0, -trimpath, -s -w, GOTAGS). It was
// 57.2 MiB when set; docs/size.md says where the bytes go and why the
// issue's 40 MiB is out of reach with the vendors' SDKs as released. The
// headroom is for ordinary growth: losing the linker's dead-method
// elimination again costs 10 MiB and fails here, as does a new
// dependency of that weight.
const maxReleaseMiB = 60

// TestReleaseBinary builds agentd as `make release` does and checks two
// things the size depends on:
//
//   - no function that looks methods up by a computed name
//     (reflect.Value.Method or MethodByName, the linker's <ReflectMethod>
//     mark; text/template has one) is reachable: one such call makes the
//     linker keep every exported method of every type the program can
//     reach, 10 MiB of agentd's binary. On failure it prints the chain
//     that reaches the call, as github.com/aarzilli/whydeadcode would.
//   - on linux/amd64, the stripped binary is at most maxReleaseMiB.
func TestReleaseBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agentd: not in -short")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tags := makeVar(t, filepath.Join(root, "Makefile"), "GOTAGS")
	if !strings.Contains(tags, "grpcnotrace") {
		// Without it grpc imports golang.org/x/net/trace, whose init
		// registers pages rendered with html/template.
		t.Fatalf("Makefile GOTAGS = %q: want grpcnotrace among them", tags)
	}
	bin := filepath.Join(t.TempDir(), "agentd")
	cmd := exec.Command("go", "build", "-tags", tags, "-trimpath", "-ldflags", "-s -w -dumpdep", "-o", bin, "./cmd/agentd")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	deps, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := readDumpdep(t, deps)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("go build: %v (output: %s)", err, strings.Join(g.other, "\n"))
	}
	if len(g.edges) < 10000 || !g.usedInIface {
		// A changed format would let the check pass blindly.
		t.Fatalf("-dumpdep printed %d symbols with edges, usedInIface marks %v: has the linker's format changed?", len(g.edges), g.usedInIface)
	}
	for _, chain := range g.reachable() {
		// Printed as whydeadcode does: the function, then what reaches it.
		slices.Reverse(chain)
		t.Errorf("the linker keeps every exported method: %s looks methods up by name and is reachable:\n\t%s",
			chain[0], strings.Join(chain, "\n\t<- "))
	}

	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Logf("size limit set for linux/amd64, not checked on %s/%s", runtime.GOOS, runtime.GOARCH)
		return
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	mib := float64(fi.Size()) / (1 << 20)
	t.Logf("stripped binary: %.1f MiB (limit %d MiB)", mib, maxReleaseMiB)
	if mib > maxReleaseMiB {
		t.Errorf("stripped binary is %.1f MiB, over %d MiB: scripts/size.sh shows which module grew", mib, maxReleaseMiB)
	}
}

// makeVar returns the value of `NAME := value` in a Makefile.
func makeVar(t *testing.T, path, name string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\s*[:?]?=\s*(.*?)\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s sets no %s", path, name)
	}
	return string(m[1])
}

// depGraph is the linker's reachability graph as -dumpdep prints it:
// one "from -> to" line per edge, each symbol possibly followed by marks
// such as <ReflectMethod> or <UsedInIface>. "_" is the root.
type depGraph struct {
	edges         map[string][]string
	reflectMethod map[string]bool
	usedInIface   bool
	other         []string // lines that are not edges (build output)
}

var mark = regexp.MustCompile(` <[A-Za-z]+>$`)

func readDumpdep(t *testing.T, r io.Reader) *depGraph {
	t.Helper()
	g := &depGraph{edges: map[string][]string{}, reflectMethod: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		from, to, ok := strings.Cut(sc.Text(), " -> ")
		if !ok {
			g.other = append(g.other, sc.Text())
			continue
		}
		from, to = g.symbol(from), g.symbol(to)
		g.edges[from] = append(g.edges[from], to)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return g
}

// symbol strips a symbol's marks, noting <ReflectMethod>.
func (g *depGraph) symbol(s string) string {
	for {
		m := mark.FindString(s)
		if m == "" {
			return s
		}
		s = strings.TrimSuffix(s, m)
		switch m {
		case " <ReflectMethod>":
			g.reflectMethod[s] = true
		case " <UsedInIface>":
			g.usedInIface = true
		}
	}
}

// reachable returns, for each reachable function marked <ReflectMethod>,
// the shortest chain from the root to it (the linker prints the edges
// of what it keeps, so all it prints is reachable).
func (g *depGraph) reachable() [][]string {
	parent := map[string]string{"_": ""}
	queue := []string{"_"}
	var found [][]string
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if g.reflectMethod[s] {
			var chain []string
			for x := s; x != ""; x = parent[x] {
				chain = append(chain, x)
			}
			// root first
			for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
				chain[i], chain[j] = chain[j], chain[i]
			}
			found = append(found, chain)
		}
		for _, n := range g.edges[s] {
			if _, seen := parent[n]; !seen {
				parent[n] = s
				queue = append(queue, n)
			}
		}
	}
	return found
}

// TestDumpdepChain holds the parser to the chain that disabled the
// linker's method elimination before (cobra's SetVersionTemplate), as
// go1.26's -dumpdep printed it, trimmed to that chain and a side branch.
func TestDumpdepChain(t *testing.T) {
	const dump = `# github.com/agentd/agentd/cmd/agentd
_ -> _rt0_amd64_linux
_rt0_amd64_linux -> main.main
main.main -> github.com/agentd/agentd/internal/cli.Main
github.com/agentd/agentd/internal/cli.Main -> github.com/agentd/agentd/internal/cli.(*env).rootCmd
github.com/agentd/agentd/internal/cli.(*env).rootCmd -> github.com/agentd/agentd/internal/cli.(*env).rootCmd.(*Command).SetVersionTemplate.tmpl.func4
github.com/agentd/agentd/internal/cli.(*env).rootCmd.(*Command).SetVersionTemplate.tmpl.func4 -> text/template.(*Template).Execute
text/template.(*Template).Execute -> text/template.(*state).evalFieldChain
text/template.(*state).evalFieldChain -> text/template.(*state).evalField <ReflectMethod>
text/template.(*state).evalField <ReflectMethod> -> reflect.Value.MethodByName
type:reflect.Value <UsedInIface> -> reflect.(*Value).Method
unreached.func <ReflectMethod> -> reflect.Value.MethodByName
`
	g := readDumpdep(t, strings.NewReader(dump))
	got := g.reachable()
	want := []string{"_", "_rt0_amd64_linux", "main.main", "github.com/agentd/agentd/internal/cli.Main",
		"github.com/agentd/agentd/internal/cli.(*env).rootCmd",
		"github.com/agentd/agentd/internal/cli.(*env).rootCmd.(*Command).SetVersionTemplate.tmpl.func4",
		"text/template.(*Template).Execute", "text/template.(*state).evalFieldChain", "text/template.(*state).evalField"}
	if len(got) != 1 || !slices.Equal(got[0], want) {
		t.Fatalf("chains %q, want one: %q", got, want)
	}
	if !g.usedInIface || len(g.other) != 1 {
		t.Fatalf("usedInIface %v, other lines %q", g.usedInIface, g.other)
	}
}
