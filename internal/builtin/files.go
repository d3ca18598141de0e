package builtin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/tool"
)

const (
	// maxReadBytes caps what file_read returns in one call.
	maxReadBytes = 1 << 20
	// maxListEntries caps file_list output.
	maxListEntries = 1000
	// sniffBytes is how much of a file is inspected to call it binary.
	sniffBytes = 8192
)

// FileTools returns file_read, file_write and file_list, which work in the
// calling agent's workspace (tool.Call.Workspace).
func FileTools() []tool.Tool {
	return []tool.Tool{fileRead(), fileWrite(), fileList()}
}

// workspace creates the call's workspace if needed, confines rel to it
// and opens it as an os.Root. name is rel relative to the root, the form
// os.Root methods take. The caller closes root.
func workspace(c *tool.Call, rel string) (root *os.Root, name string, err error) {
	if c.Workspace == "" || !filepath.IsAbs(c.Workspace) {
		return nil, "", errors.New("this agent has no workspace directory")
	}
	if err := os.MkdirAll(c.Workspace, 0o700); err != nil {
		return nil, "", fmt.Errorf("create workspace: %w", err)
	}
	if rel == "" {
		rel = "."
	}
	abs, err := Confine(c.Workspace, rel)
	if err != nil {
		return nil, "", err
	}
	real, err := filepath.EvalSymlinks(c.Workspace)
	if err != nil {
		return nil, "", fmt.Errorf("resolve workspace: %w", err)
	}
	name, ok := relWithin(real, abs)
	if !ok {
		return nil, "", fmt.Errorf("%w: %q", ErrOutsideWorkspace, rel)
	}
	root, err = os.OpenRoot(real)
	if err != nil {
		return nil, "", fmt.Errorf("open workspace: %w", err)
	}
	return root, name, nil
}

// pathError turns a file-system error into a message without the
// workspace's absolute path.
func pathError(rel string, err error) tool.Result {
	switch {
	case errors.Is(err, ErrOutsideWorkspace):
		return errorf("refused: %v", err)
	case errors.Is(err, fs.ErrNotExist):
		return errorf("%s: no such file or directory", rel)
	case errors.Is(err, fs.ErrPermission):
		return errorf("%s: permission denied", rel)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return errorf("%s: %s failed: %v", rel, pe.Op, pe.Err)
	}
	return errorf("%s: %v", rel, err)
}

func fileRead() tool.Tool {
	return &funcTool{
		spec: tool.Spec{
			Name: "file_read",
			Description: "Read a text file from your workspace. Paths are relative to the workspace root. " +
				"Returns the file's text (at most 1 MB per call). For large files, use offset and limit " +
				"to read a range of lines. Binary files are reported, not shown.",
			InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the workspace root, e.g. \"src/main.go\"."},
    "offset": {"type": "integer", "minimum": 1, "description": "First line to return, counting from 1. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to return. Default: the whole file (up to 1 MB)."}
  },
  "required": ["path"],
  "additionalProperties": false
}`),
			Origin:   tool.OriginBuiltin,
			ReadOnly: true,
		},
		call: func(ctx context.Context, c *tool.Call) (tool.Result, error) {
			var args struct {
				Path   string `json:"path"`
				Offset int    `json:"offset"`
				Limit  int    `json:"limit"`
			}
			if err := decodeArgs(c.Args, &args); err != nil {
				return errorf("%v", err), nil
			}
			if args.Path == "" {
				return errorf("path is required"), nil
			}
			if args.Offset < 0 || args.Limit < 0 {
				return errorf("offset and limit must be positive"), nil
			}
			root, name, err := workspace(c, args.Path)
			if err != nil {
				return pathError(args.Path, err), nil
			}
			defer root.Close()
			f, err := root.Open(name)
			if err != nil {
				return pathError(args.Path, err), nil
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return pathError(args.Path, err), nil
			}
			if fi.IsDir() {
				return errorf("%s is a directory; use file_list", args.Path), nil
			}
			if !fi.Mode().IsRegular() {
				return errorf("%s is not a regular file", args.Path), nil
			}
			br := bufio.NewReaderSize(f, sniffBytes)
			head, _ := br.Peek(sniffBytes)
			if isBinary(head) {
				return errorf("%s is a binary file (%d bytes, %s); file_read shows text only",
					args.Path, fi.Size(), http.DetectContentType(head)), nil
			}
			if args.Offset == 0 && args.Limit == 0 {
				return readWhole(br, args.Path, fi.Size())
			}
			return readLines(br, args.Path, max(args.Offset, 1), args.Limit)
		},
	}
}

// isBinary calls content binary when it holds a NUL byte, as git and
// grep do; invalid UTF-8 alone is shown with replacement characters.
func isBinary(head []byte) bool {
	return bytes.IndexByte(head, 0) >= 0
}

func readWhole(r io.Reader, rel string, size int64) (tool.Result, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxReadBytes+1))
	if err != nil {
		return pathError(rel, err), nil
	}
	if len(data) == 0 {
		return tool.Result{Content: "(empty file)"}, nil
	}
	truncated := len(data) > maxReadBytes
	if truncated {
		data = trimToRune(data[:maxReadBytes])
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	if truncated {
		text += fmt.Sprintf("\n[truncated: the file is %d bytes; showing the first %d. Use offset and limit to read further.]",
			size, len(data))
	}
	return tool.Result{Content: text}, nil
}

func readLines(r *bufio.Reader, rel string, offset, limit int) (tool.Result, error) {
	var out strings.Builder
	line, shown := 0, 0
	more := false
	for {
		s, err := r.ReadString('\n')
		if s != "" {
			line++
			if line >= offset {
				if (limit > 0 && shown == limit) || out.Len()+len(s) > maxReadBytes {
					more = true
					break
				}
				out.WriteString(s)
				shown++
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return pathError(rel, err), nil
		}
	}
	if shown == 0 {
		if line < offset {
			return errorf("%s has %d lines; offset %d is past the end", rel, line, offset), nil
		}
		return errorf("%s: line %d is longer than %d bytes", rel, offset, maxReadBytes), nil
	}
	text := strings.ToValidUTF8(out.String(), "\uFFFD")
	if more {
		text += fmt.Sprintf("\n[showing lines %d-%d; more follow. Use offset %d to continue.]",
			offset, offset+shown-1, offset+shown)
	}
	return tool.Result{Content: text}, nil
}

// trimToRune drops a partial UTF-8 sequence at the end of b.
func trimToRune(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size > 1 {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

func fileWrite() tool.Tool {
	return &funcTool{
		spec: tool.Spec{
			Name: "file_write",
			Description: "Write a text file in your workspace, replacing it if it exists (or appending, with append=true). " +
				"Paths are relative to the workspace root; missing parent directories are created. " +
				"Returns the number of bytes written.",
			InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "File path relative to the workspace root, e.g. \"notes/todo.md\"."},
    "content": {"type": "string", "description": "The complete text to write."},
    "append": {"type": "boolean", "description": "Append to the file instead of replacing it. Default false."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`),
			Origin: tool.OriginBuiltin,
		},
		call: func(ctx context.Context, c *tool.Call) (tool.Result, error) {
			var args struct {
				Path    string  `json:"path"`
				Content *string `json:"content"`
				Append  bool    `json:"append"`
			}
			if err := decodeArgs(c.Args, &args); err != nil {
				return errorf("%v", err), nil
			}
			if args.Path == "" {
				return errorf("path is required"), nil
			}
			if args.Content == nil {
				return errorf("content is required (use \"\" for an empty file)"), nil
			}
			root, name, err := workspace(c, args.Path)
			if err != nil {
				return pathError(args.Path, err), nil
			}
			defer root.Close()
			if name == "." {
				return errorf("%s is the workspace directory, not a file", args.Path), nil
			}
			if dir := filepath.Dir(name); dir != "." {
				if err := root.MkdirAll(dir, 0o755); err != nil {
					return pathError(args.Path, err), nil
				}
			}
			if fi, err := root.Stat(name); err == nil && fi.IsDir() {
				return errorf("%s is a directory", args.Path), nil
			}
			flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if args.Append {
				flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			}
			f, err := root.OpenFile(name, flags, 0o644)
			if err != nil {
				return pathError(args.Path, err), nil
			}
			n, werr := f.WriteString(*args.Content)
			cerr := f.Close()
			if err := errors.Join(werr, cerr); err != nil {
				return pathError(args.Path, err), nil
			}
			verb := "wrote"
			if args.Append {
				verb = "appended"
			}
			return tool.Result{
				Content:    fmt.Sprintf("%s %d bytes to %s", verb, n, filepath.ToSlash(name)),
				Structured: structured(map[string]any{"path": filepath.ToSlash(name), "bytes": n}),
			}, nil
		},
	}
}

func fileList() tool.Tool {
	return &funcTool{
		spec: tool.Spec{
			Name: "file_list",
			Description: "List a directory in your workspace. Directories end with \"/\", symlinks show their target, " +
				"files show their size. Paths are relative to the workspace root, ready to pass to file_read. " +
				fmt.Sprintf("With recursive=true, lists the whole tree (at most %d entries).", maxListEntries),
			InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory relative to the workspace root. Default \".\" (the root)."},
    "recursive": {"type": "boolean", "description": "Also list subdirectories, depth first. Default false."}
  },
  "additionalProperties": false
}`),
			Origin:   tool.OriginBuiltin,
			ReadOnly: true,
		},
		call: func(ctx context.Context, c *tool.Call) (tool.Result, error) {
			var args struct {
				Path      string `json:"path"`
				Recursive bool   `json:"recursive"`
			}
			if err := decodeArgs(c.Args, &args); err != nil {
				return errorf("%v", err), nil
			}
			if args.Path == "" {
				args.Path = "."
			}
			root, name, err := workspace(c, args.Path)
			if err != nil {
				return pathError(args.Path, err), nil
			}
			defer root.Close()
			fi, err := root.Stat(name)
			if err != nil {
				return pathError(args.Path, err), nil
			}
			if !fi.IsDir() {
				return errorf("%s is not a directory; use file_read", args.Path), nil
			}
			return listDir(ctx, root, filepath.ToSlash(name), args.Recursive, maxListEntries)
		},
	}
}

func listDir(ctx context.Context, root *os.Root, dir string, recursive bool, limit int) (tool.Result, error) {
	fsys := root.FS()
	var lines []string
	capped := false
	add := func(p string, d fs.DirEntry) {
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := root.Readlink(p)
			if err != nil {
				target = "?"
			}
			lines = append(lines, p+" -> "+target)
		case d.IsDir():
			lines = append(lines, p+"/")
		default:
			size := int64(-1)
			if info, err := d.Info(); err == nil {
				size = info.Size()
			}
			lines = append(lines, fmt.Sprintf("%s (%d bytes)", p, size))
		}
	}
	if !recursive {
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return pathError(dir, err), nil
		}
		for _, d := range entries {
			if len(lines) == limit {
				capped = true
				break
			}
			add(path.Join(dir, d.Name()), d)
		}
	} else {
		errStop := errors.New("stop")
		err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == dir {
					return err
				}
				return nil // unreadable subdirectory: skip it
			}
			if p == dir {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if len(lines) == limit {
				capped = true
				return errStop
			}
			add(p, d)
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			return pathError(dir, err), nil
		}
	}
	if len(lines) == 0 {
		return tool.Result{Content: "(empty directory)"}, nil
	}
	text := strings.Join(lines, "\n")
	if capped {
		text += fmt.Sprintf("\n[listing stopped at %d entries; list a subdirectory to see more]", limit)
	}
	return tool.Result{Content: text}, nil
}
