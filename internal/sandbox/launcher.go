package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Launcher starts confined programs according to the configured mode.
// It is built once by the daemon and shared.
type Launcher struct {
	// Mechanisms is Probe's answer.
	Mechanisms Mechanisms
	// BestEffort starts a program whose policy cannot be fully enforced
	// here; otherwise Command refuses it (ErrUnavailable).
	BestEffort bool
	// Off confines nothing at all.
	Off bool
	// Refused, when set, is told each refusal: a program not started
	// because its policy cannot be enforced ("start"), or an access the
	// sandbox denied that a program reported ("read", "write").
	Refused func(ctx context.Context, program, kind string)
}

// Plan says how a policy would run here: confined (with what is not
// enforced), or unconfined.
func (l *Launcher) Plan(p Policy) (Enforced, bool) {
	if l == nil || l.Off || p.Off {
		return Enforced{Missing: []string{"everything: the sandbox is off for this program"}}, false
	}
	return l.Mechanisms.Enforce(p), true
}

// Command builds the command that runs path with args (args[0]
// included) and exactly env under p, for the named program ("shell_exec",
// "mcp server x"). It refuses, in required mode, a policy this machine
// cannot fully enforce, naming what is missing.
func (l *Launcher) Command(ctx context.Context, program string, p Policy, path string, args, env []string) (*Cmd, error) {
	enf, confined := l.Plan(p)
	if !confined {
		if err := p.Check(); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, path)
		cmd.Args = args
		cmd.Env = env
		if cmd.Env == nil {
			cmd.Env = []string{}
		}
		return plainCmd(cmd, enf), nil
	}
	if len(enf.Missing) > 0 && !l.BestEffort {
		if l.Refused != nil {
			l.Refused(ctx, program, "start")
		}
		return nil, fmt.Errorf("%w for %s: this machine cannot enforce %s; set [sandbox] mode = \"best_effort\" to run it with what can be enforced, or mode = \"off\" for this program", ErrUnavailable, program, strings.Join(enf.Missing, "; "))
	}
	return Command(ctx, l.Mechanisms, p, path, args, env)
}

// Refusal is an access a confined program reported denied that its
// policy does not grant: the sandbox's doing.
type Refusal struct {
	Op   string // read or write
	Path string
}

func (r Refusal) String() string {
	return "permission denied by the sandbox: " + r.Op + " " + r.Path
}

// deniedLine matches the way coreutils, shells, and most programs report
// a refused path: "...: /some/path: Permission denied", or with the path
// in quotes, "cannot open '/x'", "can't create /x".
var deniedLine = regexp.MustCompile(`(?:^|[\s:'"‘])(/[^\s:'"’]*)['"’]?(?:: [^:\n]*)?: (?:Permission denied|Operation not permitted)`)

// writeHint marks a line as a refused write rather than a read.
var writeHint = regexp.MustCompile(`(?i)\b(?:creat|writ|touch|mkdir|remove|rm:|cannot move|directory nonexistent|can't create)`)

// Explain finds, in a program's output, the paths it reports denied
// that p does not grant, at most max of them: those are the sandbox's
// refusals (a denial on a granted path is the file's own permissions).
func Explain(p Policy, output string, max int) []Refusal {
	var out []Refusal
	seen := map[Refusal]bool{}
	for _, line := range strings.Split(output, "\n") {
		if len(out) >= max {
			break
		}
		m := deniedLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		path := filepath.Clean(m[1])
		write := writeHint.MatchString(line)
		if p.Covers(path, write) {
			continue
		}
		r := Refusal{Op: "read", Path: path}
		if write {
			r.Op = "write"
		}
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// ProgramRead is what a program needs to read beside the system
// directories to run at all: for the executable and each argument that
// names an existing file, its package's root (the directory holding the
// outermost node_modules, or a Python virtualenv's root), else the
// file's own directory. Directories given as arguments are not granted
// (server-filesystem's roots are its data, not its code), and neither is
// anything a denied path would overlap: Check reports that.
func ProgramRead(path string, args []string, dir string) []string {
	var out []string
	add := func(p string) {
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return
		}
		fi, err := os.Stat(real)
		if err != nil || fi.IsDir() {
			return
		}
		root := packageRoot(real)
		for _, o := range out {
			if o == root {
				return
			}
		}
		out = append(out, root)
	}
	add(path)
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		add(a)
	}
	return out
}

func packageRoot(file string) string {
	d := filepath.Dir(file)
	if i := strings.Index(d, "/node_modules"); i > 0 && (len(d) == i+len("/node_modules") || d[i+len("/node_modules")] == '/') {
		return d[:i]
	}
	for p := d; p != "/" && p != "."; p = filepath.Dir(p) {
		if _, err := os.Stat(filepath.Join(p, "pyvenv.cfg")); err == nil {
			return p
		}
	}
	return d
}
