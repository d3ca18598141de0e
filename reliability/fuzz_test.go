//go:build linux

package reliability

import (
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentd/agentd/internal/webui"
)

// fuzzAuthSeq numbers FuzzAuth's requests, for their client addresses.
var fuzzAuthSeq atomic.Uint64

// fuzzTarget is one native fuzz target found in the module.
type fuzzTarget struct {
	pkg, name, file string
}

var fuzzFuncRE = regexp.MustCompile(`(?m)^func (Fuzz[A-Za-z0-9_]*)\(`)

// findFuzzTargets lists every func FuzzX in the module's _test.go files.
func findFuzzTargets(t testing.TB) []fuzzTarget {
	t.Helper()
	root := repoRoot(t)
	var out []fuzzTarget
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range fuzzFuncRE.FindAllStringSubmatch(string(data), -1) {
			out = append(out, fuzzTarget{pkg: filepath.ToSlash(filepath.Dir(rel)), name: m[1], file: filepath.Base(rel)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b fuzzTarget) int {
		return strings.Compare(a.pkg+" "+a.name, b.pkg+" "+b.name)
	})
	return out
}

// fuzzRequirement is a decoder or matcher that must have a fuzz target:
// any of targets ("pkg FuzzName") covers it.
type fuzzRequirement struct {
	what    string
	owner   string // the package that owns the code
	targets []string
}

// fuzzRequirements: the list first, then what the inventory
// turned up.
var fuzzRequirements = []fuzzRequirement{
	{"config loading (config.toml, seed blocks)", "internal/config", []string{"internal/config FuzzLoad"}},
	{"config ${NAME} references in headers", "internal/config", []string{"internal/config FuzzExpandRefs"}},
	{"config key locations (file:line errors)", "internal/config", []string{"internal/config FuzzLocateKeys"}},
	{"stdio framing detection (newline / Content-Length)", "internal/jsonrpcwire", []string{"internal/jsonrpcwire FuzzReader"}},
	{"seed-legacy MCP: Content-Length frames and JSON-RPC ids", "internal/jsonrpcwire", []string{"internal/jsonrpcwire FuzzReader", "internal/jsonrpcwire FuzzScan"}},
	{"seed-legacy A2A (tasks/send params)", "internal/a2aedge", []string{"internal/a2aedge FuzzLegacyParams"}},
	{"A2A Agent Card parsing (1.0, 0.3, legacy)", "internal/a2aedge", []string{"internal/a2aedge FuzzParseCard"}},
	{"tool-name normalisation (MCP upstreams)", "internal/mcpclient", []string{"internal/mcpclient FuzzToolName"}},
	{"tool-name normalisation (A2A agents)", "internal/a2aedge", []string{"internal/a2aedge FuzzToolName"}},
	{"policy and capability matching", "internal/policy", []string{"internal/policy FuzzDecide"}},
	{"workspace path confinement", "internal/builtin", []string{"internal/builtin FuzzConfine"}},
	{"SSRF address classification", "internal/netguard", []string{"internal/netguard FuzzClassify"}},
	{"SSRF URL checks (odd spellings, names)", "internal/netguard", []string{"internal/netguard FuzzCheckURL"}},
	{"MCP client line framing and oversize detection", "internal/mcpclient", []string{"internal/mcpclient FuzzLineReader", "internal/mcpclient FuzzClassifyOversized"}},
	{"MCP upstream schema normalisation", "internal/mcpclient", []string{"internal/mcpclient FuzzNormalizeSchema"}},
	{"MCP upstream tasks read off the wire (capabilities, taskSupport, task handles)", "internal/mcpclient", []string{"internal/mcpclient FuzzTaskWatchObserve"}},
	{"gateway results passed on undecoded (isError read by a scan)", "internal/mcpclient", []string{"internal/mcpclient FuzzRawIsError"}},
	{"MCP server Origin policy", "internal/mcpserver", []string{"internal/mcpserver FuzzOriginPolicy"}},
	{"MCP server SSE parsing", "internal/jsonrpcwire", []string{"internal/jsonrpcwire FuzzSSE"}},
	{"MCP tools/call fast paths (requests read outside the SDK)", "internal/mcpserver", []string{"internal/mcpserver FuzzFastPathMatchesSDK"}},
	{"sealed MCP session ids (replicas)", "internal/mcpserver", []string{"internal/mcpserver FuzzOpenSessionID"}},
	{"auth middleware and public-path matching (whole daemon)", "reliability", []string{"reliability FuzzAuth"}},
	{"LLM stream accumulation and tool arguments (OpenAI)", "internal/llm/openai", []string{"internal/llm/openai FuzzAccumulatorFragments"}},
	{"LLM stream accumulation and tool arguments (Anthropic)", "internal/llm/anthropic", []string{"internal/llm/anthropic FuzzAccumulatorEvents"}},
	{"LLM stream accumulation and tool arguments (Gemini)", "internal/llm/gemini", []string{"internal/llm/gemini FuzzStream", "internal/llm/gemini FuzzFunctionCallArgs", "internal/llm/gemini FuzzToolArguments"}},
	{"ACP prompt content decoding", "internal/acpagent", []string{"internal/acpagent FuzzUserMessage"}},
	{"agent manifests from the agents directory (config.ParseManifestTOML)", "internal/config", []string{"internal/config FuzzParseManifestTOML", "internal/config FuzzManifest"}},
	{"runtime MCP server JSON (POST /api/mcp/servers → config.ValidateMCPServer)", "internal/config", []string{"internal/config FuzzValidateMCPServer", "internal/config FuzzMCPServerJSON"}},
	{"tool-call argument check and loop-guard digest (tool runner)", "internal/tool", []string{"internal/tool FuzzRunnerArguments", "internal/tool FuzzDigest", "internal/tool FuzzScopeCall"}},
}

// TestFuzzInventory lists the module's fuzz targets and checks the
// decoders and matchers that must have one. A missing target is a
// skipped subtest (with its owner), not a failure: owners add them.
func TestFuzzInventory(t *testing.T) {
	track(t, areaFuzz, false)
	targets := findFuzzTargets(t)
	have := map[string]bool{}
	var rows [][]string
	for _, ft := range targets {
		have[ft.pkg+" "+ft.name] = true
		rows = append(rows, []string{"`" + ft.pkg + "`", "`" + ft.name + "`", ft.file})
	}
	if len(targets) < 20 {
		t.Fatalf("only %d fuzz targets found: is the scan broken?", len(targets))
	}
	addTable(areaFuzz, "Fuzz targets in the module", []string{"package", "target", "file"}, rows)

	var cov [][]string
	covered := 0
	var missing []string
	for _, req := range fuzzRequirements {
		var found []string
		for _, tg := range req.targets {
			if have[tg] {
				found = append(found, "`"+strings.TrimPrefix(tg, req.owner+" ")+"`")
			}
		}
		if len(found) > 0 {
			covered++
			cov = append(cov, []string{req.what, "`" + req.owner + "`", strings.Join(found, ", ")})
			continue
		}
		missing = append(missing, req.what)
		cov = append(cov, []string{req.what, "`" + req.owner + "`", "**missing**"})
		t.Run("missing/"+req.what, func(t *testing.T) {
			track(t, areaFuzz, false)
			skipf(t, "no fuzz target for %s yet; reported to the lead for the owner of %s (expected one of: %s)", req.what, req.owner, strings.Join(req.targets, ", "))
		})
	}
	addTable(areaFuzz, "Decoders and matchers that must be fuzzed", []string{"decoder or matcher", "owner", "fuzz targets"}, cov)
	fig(t, areaFuzz, "Fuzz targets", "%d in %d packages", len(targets), countPkgs(targets))
	fig(t, areaFuzz, "Required decoders and matchers covered", "%d of %d; missing: %s", covered, len(fuzzRequirements), orNone(missing))
}

func countPkgs(ts []fuzzTarget) int {
	seen := map[string]bool{}
	for _, t := range ts {
		seen[t.pkg] = true
	}
	return len(seen)
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, "; ")
}

// cardPath reports whether path has the shape of an Agent Card path the
// daemon serves without a key (its own rule, restated independently).
func cardPath(path string) bool {
	if path == "/.well-known/agent-card.json" || path == "/.well-known/agent.json" {
		return true
	}
	return strings.HasPrefix(path, "/a2a/agents/") &&
		(strings.HasSuffix(path, "/.well-known/agent-card.json") || strings.HasSuffix(path, "/.well-known/agent.json"))
}

// FuzzAuth sends arbitrary methods, paths and Authorization headers to a
// whole daemon (every route registered) and checks that a request
// without the right key is refused with 401, unless its path is health or
// has an Agent Card's shape; and that such a request, when it succeeds,
// gets health, a card or a dashboard file (reads of "/" and the
// dashboard's assets), never anything else (a handler reached by a path
// crafted to look public).
func FuzzAuth(f *testing.F) {
	f.Add(uint8(0), "/api/agents", "")
	f.Add(uint8(1), "/a2a/agents/alpha/tasks/x%2F.well-known%2Fagent-card.json", "Bearer nope")
	f.Add(uint8(0), "/a2a/agents/alpha/v1/tasks/.well-known/agent.json", "")
	f.Add(uint8(0), "/a2a/agents/alpha/tasks/.well-known/agent-card.json", "")
	f.Add(uint8(1), "/a2a/agents/alpha%2F.well-known%2Fagent-card.json", "")
	f.Add(uint8(0), "/api/health/../agents", "")
	f.Add(uint8(0), "//api/agents", "bearer "+authKey+"x")
	f.Add(uint8(2), "/mcp", "Basic Zm9vOmJhcg==")
	f.Add(uint8(0), "/a2a/agents/../../api/agents/.well-known/agent-card.json", "")
	f.Add(uint8(0), "/api/sessions?x=/.well-known/agent-card.json", "")
	p := startDaemon(f, daemonSpec{Key: authKey, Quiet: true, TOML: authConfig("http://127.0.0.1:1/v1", false)})
	h := p.D.Handler()
	methods := []string{"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"}
	f.Fuzz(func(t *testing.T, m uint8, target, authz string) {
		if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, " \t\r\n#") {
			return
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return
		}
		if strings.ContainsAny(authz, "\r\n\x00") {
			return
		}
		method := methods[int(m)%len(methods)]
		// From a local client: a foreign Host is refused (421) before
		// credentials are looked at, which would hide what this checks.
		req := httptest.NewRequest(method, "http://127.0.0.1:4200/", http.NoBody)
		req.URL, req.RequestURI = u, target
		// Each request from an address of its own: wrong credentials
		// from one address are held back (429) after a burst, which is
		// right, but would hide the 401 path from the rest of the run.
		n := fuzzAuthSeq.Add(1)
		req.RemoteAddr = fmt.Sprintf("127.1.%d.%d:1234", (n/250)%250, n%250+1)
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		scheme, tok, _ := strings.Cut(strings.TrimSpace(authz), " ")
		if strings.EqualFold(scheme, "bearer") && strings.TrimSpace(tok) == authKey {
			return // authorised: anything goes
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusUnauthorized {
			return
		}
		// The dashboard's files load without the key (its login form
		// must), for reads only.
		dashboard := (method == "GET" || method == "HEAD") && (u.Path == "/" || strings.HasPrefix(u.Path, webui.Prefix))
		public := u.Path == "/api/health" || cardPath(u.Path) || dashboard
		if !public {
			t.Fatalf("%s %s with %q: %d without the key: %.300s", method, target, authz, rec.Code, rec.Body.String())
		}
		if rec.Code >= 200 && rec.Code < 300 && method != "HEAD" && method != "OPTIONS" {
			body := rec.Body.String()
			isHealth := u.Path == "/api/health" && strings.Contains(body, `"status"`)
			isCard := strings.Contains(body, `"supportedInterfaces"`) || strings.Contains(body, `"protocolVersion"`)
			// A dashboard file is one of the embedded assets, served
			// under the dashboard's CSP: never data.
			isUI := dashboard && rec.Header().Get("Content-Security-Policy") == webui.CSP
			if !isHealth && !isCard && !isUI {
				t.Fatalf("%s %s with %q: public-looking path served something else without the key: %d %.300s", method, target, authz, rec.Code, body)
			}
		}
	})
}
