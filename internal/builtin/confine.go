package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrOutsideWorkspace is wrapped by Confine when a path would leave the
// workspace.
var ErrOutsideWorkspace = errors.New("path is outside the workspace")

// maxSymlinks bounds symlink resolution, as the kernel's ELOOP does.
const maxSymlinks = 40

// Confine resolves rel, a path relative to workspace, to an absolute path
// inside the workspace with every existing symlink resolved. It refuses
// absolute paths, ".." that climbs above the workspace, and symlinks
// (anywhere along the path, dangling or not) whose target lies outside
// it. Components that do not exist yet are kept as given, so the result
// also serves to create files. workspace must exist and be absolute.
//
// Confine checks; it cannot stop a symlink being swapped in after it
// returns. The file tools therefore do their I/O through os.Root as well.
func Confine(workspace, rel string) (string, error) {
	if !filepath.IsAbs(workspace) {
		return "", fmt.Errorf("confine path: workspace %q is not absolute", workspace)
	}
	if strings.IndexByte(rel, 0) >= 0 {
		return "", fmt.Errorf("%w: path contains a NUL byte", ErrOutsideWorkspace)
	}
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("%w: %q is absolute; give a path relative to the workspace", ErrOutsideWorkspace, rel)
	}
	root, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return "", fmt.Errorf("confine path: resolve workspace: %w", err)
	}
	lexical := filepath.Clean(workspace)

	cur := root
	pending := splitPath(rel)
	links := 0
	missing := false // once a component is missing, no later one can be a link
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if cur == root {
				return "", fmt.Errorf("%w: %q climbs above the workspace", ErrOutsideWorkspace, rel)
			}
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		if missing {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				missing = true
				cur = next
				continue
			}
			return "", fmt.Errorf("confine path %q: %w", rel, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", fmt.Errorf("confine path %q: too many levels of symbolic links", rel)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("confine path %q: %w", rel, err)
		}
		if filepath.IsAbs(target) {
			// An absolute link is fine if it names a place inside the
			// workspace, under its real or its configured path.
			t := filepath.Clean(target)
			inner, ok := relWithin(root, t)
			if !ok {
				inner, ok = relWithin(lexical, t)
			}
			if !ok {
				return "", fmt.Errorf("%w: %q is a symlink to %q", ErrOutsideWorkspace, relOf(root, next), target)
			}
			cur = root
			pending = append(splitPath(inner), pending...)
			continue
		}
		// A relative link resolves from the directory holding it.
		pending = append(splitPath(target), pending...)
	}
	if _, ok := relWithin(root, cur); !ok {
		return "", fmt.Errorf("%w: %q", ErrOutsideWorkspace, rel)
	}
	return cur, nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// relWithin returns p relative to dir when p is dir or beneath it.
func relWithin(dir, p string) (string, bool) {
	if p == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(p, prefix) {
		return "", false
	}
	return p[len(prefix):], true
}

// relOf names p relative to the workspace root for error messages.
func relOf(root, p string) string {
	if r, ok := relWithin(root, p); ok {
		return r
	}
	return p
}
