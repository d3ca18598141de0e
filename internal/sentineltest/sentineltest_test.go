package sentineltest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCoreIsComplete finds every exported Err* variable declared in the
// core and vocabulary packages and checks that Core lists it.
func TestCoreIsComplete(t *testing.T) {
	// TestImportGraph's core list, but jsonrpcwire, whose framing error
	// only ever reaches the MCP transports that read with it.
	pkgs := []string{"agent", "tool", "policy", "auditlog", "principal", "llm", "store", "manifest", "netguard", "buildinfo"}
	var found []string
	for _, pkg := range pkgs {
		files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("package %s: no sources (%v)", pkg, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, spec := range g.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
							found = append(found, pkg+"."+n.Name)
						}
					}
				}
			}
		}
	}
	var listed []string
	for _, s := range Core() {
		listed = append(listed, s.Name)
	}
	slices.Sort(found)
	slices.Sort(listed)
	if !slices.Equal(found, listed) {
		t.Errorf("core sentinels in the sources:\n  %v\nlisted by Core:\n  %v", found, listed)
	}
}
