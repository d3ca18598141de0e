package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchFile is the file scenario 2 reads through file_read, and
// benchFileText its content.
const (
	benchFile     = "bench.txt"
	benchFileText = "agentd benchmark file\nsecond line\n"
)

// newMinimalMCP returns the smallest reasonable go-sdk server offering a
// file_read tool with agentd's schema and semantics over dir, served over
// Streamable HTTP with the same handler options agentd's /mcp uses for
// session-less requests. It is the "near the limit" reference for agentd's
// own MCP server.
func newMinimalMCP(dir string) http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench-minimal", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "file_read",
		Description: "Read a text file from the workspace.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","minimum":1},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil || args.Path == "" {
			return toolErr("path is required"), nil
		}
		text, err := readConfined(dir, args.Path)
		if err != nil {
			return toolErr(err.Error()), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
}

// readConfined reads rel below dir the way agentd's file tools do:
// resolve the workspace, then open through an os.Root so the path
// cannot leave it.
func readConfined(dir, rel string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	clean := filepath.Clean(rel)
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%q is outside the workspace", rel)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, err := root.Open(clean)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", rel)
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func toolErr(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}, IsError: true}
}
