package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/agentd/agentd/internal/jsonrpcwire"
)

// HTTP header names of the Streamable HTTP transport.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	// statelessVersion is the first protocol version without sessions.
	statelessVersion = "2026-07-28"
)

// precheck answers, before the SDK sees them, the messages it would
// reject with plain text on the initialize-era paths: malformed JSON
// (-32700), and requests for methods no MCP server has (-32601, in a 200
// response as JSON-RPC over HTTP expects; 404 under 2026-07-28, as
// SEP-2575 says). Unknown notifications are accepted and dropped, as
// JSON-RPC says. The messages match the stdio transport's. It reports
// whether to go on.
func precheck(w http.ResponseWriter, body []byte, modern, tasks bool) bool {
	if !json.Valid(body) {
		writeHTTPError(w, http.StatusBadRequest, errNotJSON)
		return false
	}
	f := jsonrpcwire.Scan(body)
	id, method := f.ID, f.Method
	if !f.Complete || method == "" || knownMethod(method) || tasks && taskMethod(method) {
		return true // batches, responses and known methods go on
	}
	if len(id) == 0 || string(id) == "null" {
		w.WriteHeader(http.StatusAccepted)
		return false
	}
	status := http.StatusOK
	if modern {
		status = http.StatusNotFound
	}
	writeJSON(w, status, errorResponse(id, &protocolError{errMethodNotFound, fmt.Sprintf("method not found: %q", method)}))
	return false
}

// knownMethod reports whether m is a client-to-server method of any
// protocol version the SDK serves.
func knownMethod(m string) bool {
	switch m {
	case "initialize", "ping", "server/discover", "subscriptions/listen",
		"tools/list", "tools/call",
		"resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe",
		"prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
		"notifications/initialized", "notifications/cancelled", "notifications/progress",
		"notifications/roots/list_changed":
		return true
	}
	return false
}

// readBody reads at most limit bytes of r's body into buf. When the body is
// larger, it answers 413 with a JSON-RPC error carrying the request's id
// when its first bytes show it.
func readBody(w http.ResponseWriter, r *http.Request, buf *bytes.Buffer, limit int64) ([]byte, bool) {
	err := jsonrpcwire.ReadBody(buf, r.Body, r.ContentLength, limit)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		err = &jsonrpcwire.TooLargeError{Limit: limit, Head: buf.Bytes()[:min(buf.Len(), jsonrpcwire.HeadMax)]}
	}
	var tl *jsonrpcwire.TooLargeError
	switch {
	case errors.As(err, &tl):
		writeJSON(w, http.StatusRequestEntityTooLarge, errorResponse(jsonrpcwire.ScanID(tl.Head), tl))
		return nil, false
	case err != nil:
		writeHTTPError(w, http.StatusBadRequest, &protocolError{errInvalidRequest, "cannot read the request body"})
		return nil, false
	}
	return buf.Bytes(), true
}

// bufferPool recycles request body buffers.
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) get() *bytes.Buffer {
	if buf, ok := b.p.Get().(*bytes.Buffer); ok {
		return buf
	}
	return new(bytes.Buffer)
}

// put returns buf to the pool unless it grew large: one big message
// should not pin megabytes for the process's life.
func (b *bufferPool) put(buf *bytes.Buffer) {
	if buf.Cap() > 1<<20 {
		return
	}
	buf.Reset()
	b.p.Put(buf)
}

// hasInitialize reports whether body holds an initialize request (alone or
// in a batch). The substring test keeps the common case to one scan.
func hasInitialize(body []byte) bool {
	if !bytes.Contains(body, []byte(`"initialize"`)) {
		return false
	}
	t := bytes.TrimSpace(body)
	if len(t) > 0 && t[0] == '[' {
		var many []struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(t, &many) != nil {
			return false
		}
		for _, m := range many {
			if m.Method == "initialize" {
				return true
			}
		}
		return false
	}
	f := jsonrpcwire.Scan(t)
	return f.Complete && f.Method == "initialize"
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// corsHeaders lets browser clients (the MCP Inspector's web UI) on an
// allowed origin use the endpoint.
func corsHeaders(w http.ResponseWriter, origin string) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, Last-Event-ID, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name")
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version")
	h.Set("Access-Control-Max-Age", "600")
}

// originPolicy decides which browser origins may call the endpoint: any
// loopback origin (a local web UI), and the configured ones. A request
// without Origin is not from a browser page and is not checked here; DNS
// rebinding through a Host header is refused by the SDK handler.
type originPolicy struct {
	extra map[string]bool
}

func newOriginPolicy(extra []string) originPolicy {
	p := originPolicy{extra: map[string]bool{}}
	for _, o := range extra {
		if n, ok := normalizeOrigin(o); ok {
			p.extra[n] = true
		}
	}
	return p
}

func (p originPolicy) allowed(origin string) bool {
	n, ok := normalizeOrigin(origin)
	if !ok {
		return false
	}
	if p.extra[n] {
		return true
	}
	u, err := url.Parse(n)
	if err != nil {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

// normalizeOrigin lower-cases scheme and host and drops a default port and
// a trailing slash; "null" and anything but http(s) is refused.
func normalizeOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", false
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

func isLoopbackHost(h string) bool {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
