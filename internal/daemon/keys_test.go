package daemon

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentd/agentd/internal/httpapi"
	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
	"github.com/agentd/agentd/internal/store/postgres/pgtest"
)

// keysConfig has the operator's key, an admin principal and an ordinary
// one; extra is appended.
const keysConfig = `listen = "127.0.0.1:0"
api_key_env = "ADMIN_KEY"

[[principals]]
name = "ops"
key_env = "OPS_KEY"
admin = true

[[principals]]
name = "ci-bot"
key_env = "CI_KEY"
agents = ["*"]
tools = ["agent_list"]
`

var keysEnv = map[string]string{"ADMIN_KEY": "k-admin", "OPS_KEY": "k-ops", "CI_KEY": "k-ci"}

// keyClient calls one daemon's API with a bearer key ("" for none).
type keyClient struct {
	t    *testing.T
	base string
}

func (c keyClient) do(key, method, path, body string) (int, []byte) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// mint mints a key for name as key's principal and returns the answer.
func (c keyClient) mint(key, name, label string) httpapi.MintedKey {
	c.t.Helper()
	code, b := c.do(key, "POST", "/api/principals/"+name+"/keys", fmt.Sprintf(`{"label":%q}`, label))
	var m httpapi.MintedKey
	if code != 201 || json.Unmarshal(b, &m) != nil || m.Key == "" || m.ID == "" {
		c.t.Fatalf("mint a key for %s: %d %s", name, code, b)
	}
	return m
}

// TestPrincipalRoutesAuthorization: the principals routes are an
// admin's: the operator's key and an admin principal pass, an ordinary
// principal gets 403 (and its attempts to mint or revoke are audited),
// no key or a wrong one 401. Admission is the one every route has.
func TestPrincipalRoutesAuthorization(t *testing.T) {
	d, srv := testDaemon(t, keysConfig, keysEnv)
	c := keyClient{t, srv.URL}
	minted := c.mint("k-admin", "ci-bot", "for the matrix")
	routes := []struct{ method, path, body string }{
		{"GET", "/api/principals", ""},
		{"GET", "/api/principals/ci-bot", ""},
		{"POST", "/api/principals/ci-bot/keys", `{"label":"x"}`},
		{"DELETE", "/api/principals/ci-bot/keys/key_0000000000000000", ""},
	}
	for _, who := range []struct {
		name, key string
		want      []int
	}{
		{"anonymous", "", []int{401, 401, 401, 401}},
		{"wrong key", "agentd_wrong", []int{401, 401, 401, 401}},
		{"ci-bot (config key)", "k-ci", []int{403, 403, 403, 403}},
		{"ci-bot (minted key)", minted.Key, []int{403, 403, 403, 403}},
		{"ops (admin principal)", "k-ops", []int{200, 200, 201, 404}},
		{"admin (operator's key)", "k-admin", []int{200, 200, 201, 404}},
	} {
		for i, r := range routes {
			if code, b := c.do(who.key, r.method, r.path, r.body); code != who.want[i] {
				t.Errorf("%s: %s %s = %d %s, want %d", who.name, r.method, r.path, code, b, who.want[i])
			}
		}
	}
	// Each refused attempt to mint or revoke is in the audit log, with who tried.
	recs, err := d.Audit.QueryAudit(t.Context(), store.AuditFilter{Principal: "ci-bot", Decision: "deny"})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]int{}
	for _, r := range recs {
		tools[r.Tool]++
	}
	if tools[httpapi.AuditMintKey] != 2 || tools[httpapi.AuditRevokeKey] != 2 {
		t.Errorf("refused attempts audited: %v, want 2 mints and 2 revocations", tools)
	}
}

// TestPrincipalRoutesKeyless: a daemon without credentials lists its
// one principal, local, to the loopback user (an admin), and mints
// nothing for it.
func TestPrincipalRoutesKeyless(t *testing.T) {
	_, srv := testDaemon(t, `listen = "127.0.0.1:0"`, nil)
	c := keyClient{t, srv.URL}
	code, b := c.do("", "GET", "/api/principals", "")
	var list struct {
		Principals []httpapi.PrincipalInfo `json:"principals"`
		Total      int                     `json:"total"`
	}
	if code != 200 || json.Unmarshal(b, &list) != nil || list.Total != 1 || list.Principals[0].Name != "local" || list.Principals[0].Mintable {
		t.Fatalf("GET /api/principals: %d %s", code, b)
	}
	if code, b := c.do("", "POST", "/api/principals/local/keys", `{}`); code != 400 || !strings.Contains(string(b), "[[principals]]") {
		t.Errorf("mint for local: %d %s, want 400 naming [[principals]]", code, b)
	}
}

// TestMintedKeyRoundTrip: an admin mints a key for ci-bot; the key is in
// that answer only (the store keeps its SHA-256, the lists and the audit
// log its id); it acts as ci-bot on the API and the dashboard; revoked,
// it is refused by the very next request, its dashboard session ends,
// and both acts are audited with who did them.
func TestMintedKeyRoundTrip(t *testing.T) {
	d, srv := testDaemon(t, keysConfig, keysEnv)
	c := keyClient{t, srv.URL}
	m := c.mint("k-ops", "ci-bot", "laptop")
	if !strings.HasPrefix(m.Key, "agentd_") || m.Principal != "ci-bot" || m.Label != "laptop" || m.CreatedBy != "ops" || m.RevokedAt != nil {
		t.Fatalf("minted: %+v", m)
	}

	// Only the hash is stored.
	ks, err := d.Store.ListAPIKeys(t.Context(), "ci-bot")
	if err != nil || len(ks) != 1 || ks[0].Hash != sha256.Sum256([]byte(m.Key)) {
		t.Fatalf("stored keys: %+v %v", ks, err)
	}
	_ = d.Audit.Flush(t.Context())
	for _, f := range []string{"agentd.db", "agentd.db-wal"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(d.Config().StorePath()), f))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(m.Key)) {
			t.Errorf("the key is written in %s", f)
		}
	}

	// The key is ci-bot, with ci-bot's rights.
	if code, b := c.do(m.Key, "GET", "/api/ui/session", ""); code != 200 || !strings.Contains(string(b), `"principal": "ci-bot"`) {
		t.Errorf("session with the minted key: %d %s", code, b)
	}
	if code, b := c.do(m.Key, "POST", "/api/tools/agent_list/call", `{}`); code != 200 {
		t.Errorf("ci-bot's tool with the minted key: %d %s", code, b)
	}
	if code, _ := c.do(m.Key, "POST", "/api/agents", `{"name":"x","provider":"p","model":"m"}`); code != 403 {
		t.Errorf("ci-bot creating an agent with the minted key: %d, want 403", code)
	}

	// The dashboard logs in with it too.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	req, _ := http.NewRequest("POST", srv.URL+httpapi.UIPath+"login", strings.NewReader(fmt.Sprintf(`{"key":%q}`, m.Key)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("dashboard login with the minted key: %d", resp.StatusCode)
	}
	cookieGet := func() int {
		resp, err := browser.Get(srv.URL + "/api/sessions")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := cookieGet(); got != 200 {
		t.Fatalf("dashboard session of the minted key: %d", got)
	}

	// Listed without the key or its hash.
	code, b := c.do("k-admin", "GET", "/api/principals/ci-bot", "")
	var p httpapi.PrincipalInfo
	if code != 200 || json.Unmarshal(b, &p) != nil || p.LiveKeys != 1 || len(p.Keys) != 1 || p.Keys[0].ID != m.ID || !p.Mintable {
		t.Fatalf("GET /api/principals/ci-bot: %d %s", code, b)
	}
	if strings.Contains(string(b), m.Key) || strings.Contains(string(b), fmt.Sprintf("%x", sha256.Sum256([]byte(m.Key)))) {
		t.Errorf("the principal's answer shows the key or its hash: %s", b)
	}

	// Revoked: the next request is refused, and the dashboard session ends.
	if code, b := c.do("k-admin", "DELETE", "/api/principals/ci-bot/keys/"+m.ID, ""); code != 204 {
		t.Fatalf("revoke: %d %s", code, b)
	}
	if code, _ := c.do(m.Key, "GET", "/api/sessions", ""); code != 401 {
		t.Errorf("the revoked key: %d, want 401", code)
	}
	if got := cookieGet(); got != 401 {
		t.Errorf("the revoked key's dashboard session: %d, want 401", got)
	}
	if code, _ := c.do("k-admin", "DELETE", "/api/principals/ci-bot/keys/"+m.ID, ""); code != 404 {
		t.Errorf("revoking twice: %d, want 404", code)
	}
	if code, _ := c.do("k-ci", "GET", "/api/sessions", ""); code != 200 {
		t.Errorf("ci-bot's configured key after the revocation: %d, want 200", code)
	}
	code, b = c.do("k-admin", "GET", "/api/principals/ci-bot", "")
	if err := json.Unmarshal(b, &p); code != 200 || err != nil || p.LiveKeys != 0 || p.Keys[0].RevokedAt == nil || p.Keys[0].RevokedBy != "admin" {
		t.Errorf("after the revocation: %d %s", code, b)
	}

	// Both acts are audited, as the admin's, naming the key but never showing it.
	code, b = c.do("k-admin", "GET", "/api/audit?tool=principals.*_key", "")
	var audit struct {
		Records []httpapi.AuditRecord `json:"records"`
	}
	if code != 200 || json.Unmarshal(b, &audit) != nil || len(audit.Records) != 2 {
		t.Fatalf("audit of the key: %d %s", code, b)
	}
	for i, want := range []struct{ tool, by string }{{httpapi.AuditRevokeKey, "admin"}, {httpapi.AuditMintKey, "ops"}} {
		r := audit.Records[i]
		if r.Tool != want.tool || r.Principal != want.by || r.Outcome != "ok" || !strings.Contains(r.Detail, m.ID) {
			t.Errorf("audit record %d: %+v, want %s by %s naming %s", i, r, want.tool, want.by, m.ID)
		}
	}
	if strings.Contains(string(b), m.Key) {
		t.Error("the audit log shows the key")
	}
}

// TestMintValidation: a bad label or an unknown principal is refused
// with the field or the name, and the operator's own admin is not
// mintable.
func TestMintValidation(t *testing.T) {
	_, srv := testDaemon(t, keysConfig, keysEnv)
	c := keyClient{t, srv.URL}
	for _, tc := range []struct {
		path, body string
		want       int
		says       string
	}{
		{"/api/principals/ci-bot/keys", `{"label":"` + strings.Repeat("x", 65) + `"}`, 400, `"field": "label"`},
		{"/api/principals/ci-bot/keys", `{"label":"a\u0007b"}`, 400, "control characters"},
		{"/api/principals/ci-bot/keys", `{"labl":"x"}`, 400, `"field": "labl"`},
		{"/api/principals/nobody/keys", `{}`, 404, `no principal \"nobody\"`},
		{"/api/principals/admin/keys", `{}`, 400, "[[principals]]"},
	} {
		if code, b := c.do("k-admin", "POST", tc.path, tc.body); code != tc.want || !strings.Contains(string(b), tc.says) {
			t.Errorf("POST %s %s: %d %s, want %d saying %s", tc.path, tc.body, code, b, tc.want, tc.says)
		}
	}
}

// TestMintedKeyOfRemovedPrincipal: a reload that removes a principal
// from the config leaves its minted keys nobody's: refused at once.
func TestMintedKeyOfRemovedPrincipal(t *testing.T) {
	d, srv := testDaemon(t, keysConfig, keysEnv)
	c := keyClient{t, srv.URL}
	m := c.mint("k-admin", "ci-bot", "")
	if code, _ := c.do(m.Key, "GET", "/api/sessions", ""); code != 200 {
		t.Fatalf("minted key before the reload: %d", code)
	}
	next := *d.Config()
	next.Principals = next.Principals[:1] // ops only
	if _, err := d.Reload(t.Context(), &next); err != nil {
		t.Fatal(err)
	}
	if code, _ := c.do(m.Key, "GET", "/api/sessions", ""); code != 401 {
		t.Errorf("minted key of a removed principal: %d, want 401", code)
	}
}

// TestMintedKeysAcrossReplicas: two replicas on one PostgreSQL store. A
// key minted on one works on the other; revoked on the other, the first
// refuses it on the very next request (nothing is cached, nothing waits
// for a notification).
func TestMintedKeysAcrossReplicas(t *testing.T) {
	dbURL := pgtest.Database(t, os.LookupEnv)
	sum := sha256.Sum256([]byte("k-ci"))
	extra := fmt.Sprintf("[[principals]]\nname = \"ci-bot\"\nkey_sha256 = \"%x\"\nagents = [\"alpha\"]\n", sum)
	_, a := serveReplica(t, "http://127.0.0.1:1", dbURL, extra)
	_, b := serveReplica(t, "http://127.0.0.1:1", dbURL, extra)
	ca, cb := keyClient{t, a}, keyClient{t, b}
	m := ca.mint(a2aTestKey, "ci-bot", "replicated")
	for round := range 3 {
		if code, body := cb.do(m.Key, "GET", "/api/sessions", ""); code != 200 {
			t.Fatalf("round %d: the key minted on A, used on B: %d %s", round, code, body)
		}
		if code, _ := ca.do(m.Key, "GET", "/api/sessions", ""); code != 200 {
			t.Fatalf("round %d: the key on A: %d", round, code)
		}
	}
	if code, body := cb.do(a2aTestKey, "DELETE", "/api/principals/ci-bot/keys/"+m.ID, ""); code != 204 {
		t.Fatalf("revoke on B: %d %s", code, body)
	}
	if code, _ := ca.do(m.Key, "GET", "/api/sessions", ""); code != 401 {
		t.Errorf("the key revoked on B, used on A at once: %d, want 401", code)
	}
	if code, _ := cb.do(m.Key, "GET", "/api/sessions", ""); code != 401 {
		t.Errorf("the key revoked on B, used on B: %d, want 401", code)
	}
}

// TestPrincipalRoutesMatchOpenAPI validates the principals routes' real
// answers, and the audit log's filtered answer, against the document.
func TestPrincipalRoutesMatchOpenAPI(t *testing.T) {
	_, srv := testDaemon(t, keysConfig, keysEnv)
	doc := fetchOpenAPI(t, srv.URL)
	c := keyClient{t, srv.URL}
	m := c.mint("k-admin", "ci-bot", "schema")
	for _, tc := range []struct {
		key, method, path, body, doc string
		want                         int
	}{
		{"k-admin", "GET", "/api/principals?limit=2", "", "/api/principals", 200},
		{"k-admin", "GET", "/api/principals?limit=0", "", "/api/principals", 400},
		{"k-ci", "GET", "/api/principals", "", "/api/principals", 403},
		{"", "GET", "/api/principals", "", "/api/principals", 401},
		{"k-admin", "GET", "/api/principals/ci-bot", "", "/api/principals/{name}", 200},
		{"k-admin", "GET", "/api/principals/admin", "", "/api/principals/{name}", 200},
		{"k-admin", "GET", "/api/principals/nobody", "", "/api/principals/{name}", 404},
		{"k-admin", "POST", "/api/principals/ci-bot/keys", `{"label":"second"}`, "/api/principals/{name}/keys", 201},
		{"k-admin", "POST", "/api/principals/ci-bot/keys", `{}`, "/api/principals/{name}/keys", 201},
		{"k-admin", "POST", "/api/principals/ci-bot/keys", `{"label":"` + strings.Repeat("é", 65) + `"}`, "/api/principals/{name}/keys", 400},
		{"k-admin", "DELETE", "/api/principals/ops/keys/" + m.ID, "", "/api/principals/{name}/keys/{id}", 404}, // another's key
		{"k-admin", "GET", "/api/audit?tool=principals.*&principal=admin", "", "/api/audit", 200},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			code, b := c.do(tc.key, tc.method, tc.path, tc.body)
			if code != tc.want {
				t.Fatalf("%d %s, want %d", code, b, tc.want)
			}
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("answer is not JSON: %v: %.200s", err, b)
			}
			if err := doc.schemaFor(t, tc.method, tc.doc, code).Validate(v); err != nil {
				t.Errorf("the answer does not match the document: %v\n%s", err, b)
			}
		})
	}
	// The revocation's 204 has no body, as documented.
	if code, b := c.do("k-admin", "DELETE", "/api/principals/ci-bot/keys/"+m.ID, ""); code != 204 || len(b) != 0 {
		t.Errorf("revoke: %d %q", code, b)
	}
}

// TestAuditToolAndPrincipalFilters: /api/audit's tool filter takes a
// substring or a * and ? pattern, ignoring case, and its principal
// filter an exact name (an admin's; others see their own whatever they
// ask).
func TestAuditToolAndPrincipalFilters(t *testing.T) {
	d, srv := testDaemon(t, keysConfig, keysEnv)
	c := keyClient{t, srv.URL}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, r := range []struct{ tool, who string }{
		{"mcp_github_create_issue", "ci-bot"}, {"mcp_github_list_prs", "ops"}, {"shell_exec", "ci-bot"},
		{"file_read", "ops"}, {"mcp_fs_file_read", "admin"},
	} {
		if _, err := d.Store.AppendAudit(t.Context(), store.AuditRecord{Time: at.Add(time.Duration(i) * time.Minute), Agent: "a", Tool: r.tool, Decision: "allow", Outcome: "ok", Principal: r.who}); err != nil {
			t.Fatal(err)
		}
	}
	query := func(key, q string) []string {
		t.Helper()
		code, b := c.do(key, "GET", "/api/audit?"+q, "")
		var out struct {
			Records []httpapi.AuditRecord `json:"records"`
			Total   int                   `json:"total"`
		}
		if code != 200 || json.Unmarshal(b, &out) != nil || out.Total != len(out.Records) {
			t.Fatalf("GET /api/audit?%s: %d %s", q, code, b)
		}
		var got []string
		for _, r := range out.Records {
			got = append(got, r.Tool+"/"+r.Principal)
		}
		return got
	}
	for _, tc := range []struct {
		key, q string
		want   string
	}{
		{"k-admin", "tool=github", "[mcp_github_list_prs/ops mcp_github_create_issue/ci-bot]"},
		{"k-admin", "tool=GitHub_L", "[mcp_github_list_prs/ops]"},
		{"k-admin", "tool=file_read", "[mcp_fs_file_read/admin file_read/ops]"},
		{"k-admin", "tool=file_*", "[file_read/ops]"},
		{"k-admin", "tool=*_exec", "[shell_exec/ci-bot]"},
		{"k-admin", "tool=mcp_*_?ist_prs", "[mcp_github_list_prs/ops]"},
		{"k-admin", "tool=mcp_%25", "[]"}, // % is literal
		{"k-admin", "principal=ci-bot", "[shell_exec/ci-bot mcp_github_create_issue/ci-bot]"},
		{"k-admin", "principal=ci-bot&tool=github", "[mcp_github_create_issue/ci-bot]"},
		{"k-admin", "principal=ci", "[]"}, // exact
		{"k-ci", "principal=ops", "[shell_exec/ci-bot mcp_github_create_issue/ci-bot]"},
		{"k-ci", "tool=file", "[]"},
	} {
		if got := fmt.Sprint(query(tc.key, tc.q)); got != tc.want {
			t.Errorf("%s as %s: %s, want %s", tc.q, tc.key, got, tc.want)
		}
	}
}

// BenchmarkKeyAdmission is the cost of a minted key: the same request
// (GET /api/runs, answered from memory) with a configured key and with a
// minted one, which admission looks up in the store, SQLite or
// PostgreSQL.
func BenchmarkKeyAdmission(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		d, srv := testDaemon(b, keysConfig+"\n[limits]\nrate_per_sec = 1000000\nburst = 1000000\n", keysEnv)
		benchKeys(b, d, srv.URL, "k-ci")
	})
	b.Run("postgres", func(b *testing.B) {
		sum := sha256.Sum256([]byte("k-ci"))
		d, base := serveReplica(b, "http://127.0.0.1:1", pgtest.Database(b, os.LookupEnv),
			fmt.Sprintf("[[principals]]\nname = \"ci-bot\"\nkey_sha256 = \"%x\"\n", sum))
		benchKeys(b, d, base, "k-ci")
	})
}

func benchKeys(b *testing.B, d *Daemon, base, configured string) {
	k, hash, err := principal.NewKey()
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Store.CreateAPIKey(b.Context(), store.APIKey{ID: "key_bench", Principal: "ci-bot", Hash: hash, CreatedBy: "admin"}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ name, key string }{{"configured", configured}, {"minted", k}} {
		b.Run(c.name, func(b *testing.B) {
			req, _ := http.NewRequest("GET", base+"/api/runs", nil)
			req.Header.Set("Authorization", "Bearer "+c.key)
			for b.Loop() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatalf("%d", resp.StatusCode)
				}
			}
		})
	}
}
