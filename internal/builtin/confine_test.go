package builtin

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture builds, under a fresh temp dir:
//
//	outside/secret.txt              a file the agent must never reach
//	ws/a.txt, ws/sub/b.txt          ordinary workspace content
//	ws/escape_dir  -> ../outside    relative link out
//	ws/escape_abs  -> <tmp>/outside absolute link out
//	ws/escape_file -> ../outside/secret.txt
//	ws/dangling_out -> ../outside/newfile (does not exist)
//	ws/inside_link -> sub           relative link in
//	ws/inside_abs  -> <ws>/sub      absolute link in
//	ws/sub/up      -> ..            back to the workspace root
//	ws/sub/upup    -> ../..         out
//	ws/loop1 <-> ws/loop2           a cycle
//	wslink -> ws                    the workspace seen through a link
type fixture struct {
	tmp, ws, outside, wsLink string
}

func newFixture(t testing.TB, dir string) fixture {
	t.Helper()
	fx := fixture{tmp: dir, ws: filepath.Join(dir, "ws"), outside: filepath.Join(dir, "outside"), wsLink: filepath.Join(dir, "wslink")}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(fx.ws, "sub"), 0o700))
	must(os.MkdirAll(fx.outside, 0o700))
	must(os.WriteFile(filepath.Join(fx.outside, "secret.txt"), []byte("top secret\n"), 0o600))
	must(os.WriteFile(filepath.Join(fx.ws, "a.txt"), []byte("line one\nline two\nline three\n"), 0o600))
	must(os.WriteFile(filepath.Join(fx.ws, "sub", "b.txt"), []byte("bee\n"), 0o600))
	links := map[string]string{
		"escape_dir":    "../outside",
		"escape_abs":    fx.outside,
		"escape_file":   "../outside/secret.txt",
		"dangling_out":  "../outside/newfile",
		"inside_link":   "sub",
		"inside_abs":    filepath.Join(fx.ws, "sub"),
		"sub/up":        "..",
		"sub/upup":      "../..",
		"loop1":         "loop2",
		"loop2":         "loop1",
		"sub/outsideup": "../../outside",
	}
	for name, target := range links {
		must(os.Symlink(target, filepath.Join(fx.ws, name)))
	}
	must(os.Symlink(fx.ws, fx.wsLink))
	return fx
}

func TestConfine(t *testing.T) {
	fx := newFixture(t, t.TempDir())
	real, err := filepath.EvalSymlinks(fx.ws)
	if err != nil {
		t.Fatal(err)
	}
	in := func(p string) string { return filepath.Join(real, p) }
	tests := []struct {
		name    string
		ws      string
		rel     string
		want    string // "" = refused
		outside bool   // the refusal must wrap ErrOutsideWorkspace
	}{
		{"plain file", fx.ws, "a.txt", in("a.txt"), false},
		{"empty is root", fx.ws, "", real, false},
		{"dot is root", fx.ws, ".", real, false},
		{"nested", fx.ws, "sub/b.txt", in("sub/b.txt"), false},
		{"dotdot inside", fx.ws, "sub/../a.txt", in("a.txt"), false},
		{"not yet existing", fx.ws, "new/dir/file.txt", in("new/dir/file.txt"), false},
		{"under a file", fx.ws, "a.txt/x", in("a.txt/x"), false},
		{"relative link inside", fx.ws, "inside_link/x.txt", in("sub/x.txt"), false},
		{"absolute link inside", fx.ws, "inside_abs/b.txt", in("sub/b.txt"), false},
		{"link to root", fx.ws, "sub/up/a.txt", in("a.txt"), false},
		{"dotdot after link", fx.ws, "inside_link/../a.txt", in("a.txt"), false},
		{"workspace through a link", fx.wsLink, "sub/b.txt", in("sub/b.txt"), false},
		{"trailing slash", fx.ws, "sub/", in("sub"), false},
		{"dotdot escape", fx.ws, "../outside/secret.txt", "", true},
		{"deep dotdot escape", fx.ws, "sub/../../outside", "", true},
		{"dotdot only", fx.ws, "..", "", true},
		{"absolute path", fx.ws, "/etc/passwd", "", true},
		{"absolute path inside", fx.ws, filepath.Join(fx.ws, "a.txt"), "", true},
		{"symlinked dir out", fx.ws, "escape_dir/secret.txt", "", true},
		{"symlinked dir itself", fx.ws, "escape_dir", "", true},
		{"new file under symlinked dir", fx.ws, "escape_dir/new.txt", "", true},
		{"new dirs under symlinked dir", fx.ws, "escape_dir/a/b/new.txt", "", true},
		{"symlinked file out", fx.ws, "escape_file", "", true},
		{"dangling link out", fx.ws, "dangling_out", "", true},
		{"absolute link out", fx.ws, "escape_abs/secret.txt", "", true},
		{"link climbing out", fx.ws, "sub/upup/outside/secret.txt", "", true},
		{"nested link out", fx.ws, "sub/outsideup/secret.txt", "", true},
		{"link out and back", fx.ws, "escape_dir/../ws/a.txt", "", true},
		{"nul byte", fx.ws, "a\x00b", "", true},
		{"symlink loop", fx.ws, "loop1", "", false},
		{"relative workspace", "ws", "a.txt", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Confine(tt.ws, tt.rel)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Confine(%q) = %q, want refusal", tt.rel, got)
				}
				if tt.outside != errors.Is(err, ErrOutsideWorkspace) {
					t.Errorf("errors.Is(err, ErrOutsideWorkspace) = %v: %v", !tt.outside, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Confine(%q): %v", tt.rel, err)
			}
			if got != tt.want {
				t.Errorf("Confine(%q) = %q, want %q", tt.rel, got, tt.want)
			}
		})
	}
}

// resolveExisting applies filepath.EvalSymlinks to the longest existing
// prefix of p and appends the rest: where the OS would really go.
func resolveExisting(p string) (string, error) {
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		} else if !errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), "not a directory") {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func FuzzConfine(f *testing.F) {
	for _, s := range []string{
		"a.txt", "", ".", "..", "../outside/secret.txt", "/etc/passwd", "sub/../a.txt",
		"escape_dir/secret.txt", "escape_dir/new.txt", "escape_file", "dangling_out", "escape_abs",
		"inside_link/x", "inside_abs/b.txt", "sub/up/up/a.txt", "sub/upup/outside", "loop1/x",
		"sub/outsideup/secret.txt", "a\x00b", "sub/./../sub//b.txt", "new/../../x", "....//",
	} {
		f.Add(s)
	}
	fx := newFixture(f, f.TempDir())
	real, err := filepath.EvalSymlinks(fx.ws)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		got, err := Confine(fx.ws, rel)
		if err != nil {
			return
		}
		where, err := resolveExisting(got)
		if err != nil {
			return // e.g. a loop created by the path itself; nothing was returned outside
		}
		if _, ok := relWithin(real, where); !ok {
			t.Fatalf("Confine(%q) = %q, which resolves to %q outside %q", rel, got, where, real)
		}
		if !filepath.IsAbs(got) {
			t.Fatalf("Confine(%q) = %q is not absolute", rel, got)
		}
	})
}
