package builtin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/tool"
)

func toolByName(t *testing.T, tools []tool.Tool, name string) tool.Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

func call(t *testing.T, tl tool.Tool, ws string, args any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Call(t.Context(), &tool.Call{Agent: "tester", Workspace: ws, Args: raw, Progress: func(string, float64, float64) {}})
	if err != nil {
		t.Fatalf("%s: Go error: %v", tl.Spec().Name, err)
	}
	return res
}

// escapes are paths every file tool must refuse, whatever the operation.
var escapes = []string{
	"../outside/secret.txt",
	"sub/../../outside/secret.txt",
	"/etc/passwd",
	"escape_dir/secret.txt",
	"escape_dir/new.txt",
	"escape_dir/deep/new.txt",
	"escape_file",
	"dangling_out",
	"escape_abs/secret.txt",
	"sub/upup/outside/secret.txt",
	"sub/outsideup/new.txt",
}

func TestFileRead(t *testing.T) {
	fx := newFixture(t, t.TempDir())
	read := toolByName(t, FileTools(), "file_read")
	big := strings.Repeat("0123456789abcdef\n", (maxReadBytes/17)+5000)
	if err := os.WriteFile(filepath.Join(fx.ws, "big.txt"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fx.ws, "bin.dat"), []byte{0x7f, 'E', 'L', 'F', 0, 0, 1, 2}, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fx.ws, "empty.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    map[string]any
		want    string // exact content, when set
		contain string // substring, when set
		isErr   bool
	}{
		{"whole file", map[string]any{"path": "a.txt"}, "line one\nline two\nline three\n", "", false},
		{"through inside link", map[string]any{"path": "inside_link/b.txt"}, "bee\n", "", false},
		{"offset", map[string]any{"path": "a.txt", "offset": 2}, "line two\nline three\n", "", false},
		{"offset and limit", map[string]any{"path": "a.txt", "offset": 2, "limit": 1}, "", "line two\n\n[showing lines 2-2; more follow. Use offset 3", false},
		{"limit only", map[string]any{"path": "a.txt", "limit": 1}, "", "line one\n", false},
		{"offset past end", map[string]any{"path": "a.txt", "offset": 10}, "", "past the end", true},
		{"empty", map[string]any{"path": "empty.txt"}, "(empty file)", "", false},
		{"missing", map[string]any{"path": "nope.txt"}, "", "no such file", true},
		{"directory", map[string]any{"path": "sub"}, "", "is a directory", true},
		{"binary", map[string]any{"path": "bin.dat"}, "", "binary file", true},
		{"big file capped", map[string]any{"path": "big.txt"}, "", "[truncated: the file is", false},
		{"no path", map[string]any{}, "", "path is required", true},
		{"symlink loop", map[string]any{"path": "loop1"}, "", "symbolic links", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, read, fx.ws, tt.args)
			if res.IsError != tt.isErr {
				t.Errorf("IsError = %v: %s", res.IsError, res.Content)
			}
			if tt.want != "" && res.Content != tt.want {
				t.Errorf("content %q, want %q", res.Content, tt.want)
			}
			if tt.contain != "" && !strings.Contains(res.Content, tt.contain) {
				t.Errorf("content %.200q lacks %q", res.Content, tt.contain)
			}
			if len(res.Content) > maxReadBytes+200 {
				t.Errorf("content is %d bytes, over the cap", len(res.Content))
			}
		})
	}
	for _, p := range escapes {
		t.Run("escape "+p, func(t *testing.T) {
			res := call(t, read, fx.ws, map[string]any{"path": p})
			if !res.IsError || strings.Contains(res.Content, "top secret") {
				t.Fatalf("read %q: %+v", p, res)
			}
			if !strings.Contains(res.Content, "refused") && !strings.Contains(res.Content, "outside") {
				t.Errorf("unclear refusal: %s", res.Content)
			}
		})
	}
}

func TestFileWrite(t *testing.T) {
	fx := newFixture(t, t.TempDir())
	write := toolByName(t, FileTools(), "file_write")
	tests := []struct {
		name    string
		args    map[string]any
		file    string // file to check afterwards, relative to ws
		want    string
		contain string
		isErr   bool
	}{
		{"new file", map[string]any{"path": "out.txt", "content": "hello"}, "out.txt", "hello", "wrote 5 bytes to out.txt", false},
		{"replace", map[string]any{"path": "a.txt", "content": "new"}, "a.txt", "new", "wrote 3 bytes", false},
		{"append", map[string]any{"path": "a.txt", "content": "+more", "append": true}, "a.txt", "new+more", "appended 5 bytes", false},
		{"creates parents", map[string]any{"path": "x/y/z.txt", "content": "deep"}, "x/y/z.txt", "deep", "wrote 4 bytes", false},
		{"through inside link", map[string]any{"path": "inside_link/c.txt", "content": "c"}, "sub/c.txt", "c", "wrote 1 bytes", false},
		{"empty content", map[string]any{"path": "e.txt", "content": ""}, "e.txt", "", "wrote 0 bytes", false},
		{"missing content", map[string]any{"path": "m.txt"}, "", "", "content is required", true},
		{"directory", map[string]any{"path": "sub", "content": "x"}, "", "", "is a directory", true},
		{"workspace root", map[string]any{"path": ".", "content": "x"}, "", "", "workspace directory", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, write, fx.ws, tt.args)
			if res.IsError != tt.isErr {
				t.Fatalf("IsError = %v: %s", res.IsError, res.Content)
			}
			if !strings.Contains(res.Content, tt.contain) {
				t.Errorf("content %q lacks %q", res.Content, tt.contain)
			}
			if tt.file != "" {
				got, err := os.ReadFile(filepath.Join(fx.ws, tt.file))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tt.want {
					t.Errorf("%s holds %q, want %q", tt.file, got, tt.want)
				}
			}
		})
	}
	for _, p := range escapes {
		t.Run("escape "+p, func(t *testing.T) {
			res := call(t, write, fx.ws, map[string]any{"path": p, "content": "pwned"})
			if !res.IsError {
				t.Fatalf("write %q succeeded: %s", p, res.Content)
			}
			secret, _ := os.ReadFile(filepath.Join(fx.outside, "secret.txt"))
			if string(secret) != "top secret\n" {
				t.Fatalf("outside file changed: %q", secret)
			}
			entries, _ := os.ReadDir(fx.outside)
			if len(entries) != 1 {
				t.Fatalf("outside dir gained entries: %v", entries)
			}
		})
	}
	t.Run("creates the workspace", func(t *testing.T) {
		ws := filepath.Join(t.TempDir(), "fresh", "ws")
		res := call(t, write, ws, map[string]any{"path": "f.txt", "content": "x"})
		if res.IsError {
			t.Fatal(res.Content)
		}
		fi, err := os.Stat(ws)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("workspace mode %v, want 0700", fi.Mode().Perm())
		}
	})
	t.Run("no workspace", func(t *testing.T) {
		res := call(t, write, "", map[string]any{"path": "f.txt", "content": "x"})
		if !res.IsError || !strings.Contains(res.Content, "no workspace") {
			t.Fatalf("%+v", res)
		}
	})
}

func TestFileList(t *testing.T) {
	fx := newFixture(t, t.TempDir())
	list := toolByName(t, FileTools(), "file_list")
	tests := []struct {
		name     string
		args     map[string]any
		contain  []string
		lacks    []string
		isErr    bool
		maxLines int
	}{
		{"root", map[string]any{}, []string{"a.txt (29 bytes)", "sub/", "escape_dir -> ../outside"}, []string{"sub/b.txt"}, false, 0},
		{"subdir", map[string]any{"path": "sub"}, []string{"sub/b.txt (4 bytes)", "sub/up -> .."}, []string{"a.txt"}, false, 0},
		{"recursive", map[string]any{"path": "sub", "recursive": true}, []string{"sub/b.txt", "sub/upup -> ../.."}, []string{"secret"}, false, 0},
		{"recursive root", map[string]any{"recursive": true}, []string{"a.txt", "sub/b.txt", "escape_dir -> ../outside"}, []string{"escape_dir/secret.txt"}, false, 0},
		{"file", map[string]any{"path": "a.txt"}, []string{"not a directory"}, nil, true, 0},
		{"missing", map[string]any{"path": "nope"}, []string{"no such file"}, nil, true, 0},
		{"escape dir", map[string]any{"path": "escape_dir"}, []string{"outside the workspace"}, []string{"secret.txt"}, true, 0},
		{"escape dotdot", map[string]any{"path": ".."}, []string{"outside the workspace"}, nil, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, list, fx.ws, tt.args)
			if res.IsError != tt.isErr {
				t.Fatalf("IsError = %v: %.300s", res.IsError, res.Content)
			}
			for _, s := range tt.contain {
				if !strings.Contains(res.Content, s) {
					t.Errorf("listing lacks %q:\n%.500s", s, res.Content)
				}
			}
			for _, s := range tt.lacks {
				if strings.Contains(res.Content, s) {
					t.Errorf("listing has %q", s)
				}
			}
			if n := strings.Count(res.Content, "\n") + 1; tt.maxLines > 0 && n > tt.maxLines {
				t.Errorf("%d lines, want at most %d", n, tt.maxLines)
			}
		})
	}
}

func TestListCap(t *testing.T) {
	ws := t.TempDir()
	for i := range 12 {
		dir := filepath.Join(ws, fmt.Sprintf("d%d", i%3))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, recursive := range []bool{false, true} {
		for _, limit := range []int{2, 5, 100} {
			t.Run(fmt.Sprintf("recursive=%v,limit=%d", recursive, limit), func(t *testing.T) {
				res, err := listDir(t.Context(), root, ".", recursive, limit)
				if err != nil {
					t.Fatal(err)
				}
				total := 3
				if recursive {
					total = 15
				}
				lines := strings.Split(res.Content, "\n")
				capped := strings.HasPrefix(lines[len(lines)-1], "[listing stopped at")
				if capped != (total > limit) {
					t.Errorf("capped = %v for %d entries, limit %d:\n%s", capped, total, limit, res.Content)
				}
				if want := min(total, limit) + map[bool]int{true: 1}[capped]; len(lines) != want {
					t.Errorf("%d lines, want %d:\n%s", len(lines), want, res.Content)
				}
			})
		}
	}
}
