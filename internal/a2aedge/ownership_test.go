package a2aedge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/agentd/agentd/internal/principal"
	"github.com/agentd/agentd/internal/store"
)

// Keys of the principals the ownership tests use.
const (
	keyBob   = "k-bob"
	keyAlice = "k-alice"
	keyCarol = "k-carol"
	keyAdmin = "k-admin"
)

// sharedPrincipals: bob and alice share every agent; carol may run beta
// only; admin is an admin.
func sharedPrincipals() map[string]*principal.Principal {
	return map[string]*principal.Principal{
		keyBob:   {Name: "bob", Agents: []string{"*"}},
		keyAlice: {Name: "alice", Agents: []string{"*"}},
		keyCarol: {Name: "carol", Agents: []string{"beta"}},
		keyAdmin: {Name: "admin", Admin: true, Agents: []string{"*"}, Tools: []string{"*"}},
	}
}

// call sends an HTTP request with a bearer key and returns status and body.
func (f *fixture) call(key, method, path, body string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// auditOf returns the audit records of the danger tool.
func (f *fixture) auditOf(toolName string) []store.AuditRecord {
	f.t.Helper()
	recs, err := f.db.QueryAudit(context.Background(), store.AuditFilter{Tool: toolName})
	if err != nil {
		f.t.Fatal(err)
	}
	return recs
}

// TestCrossPrincipalJSClient: bob and alice share agent alpha, both
// through @a2a-js/sdk's client. Alice cannot get, cancel, resubscribe to,
// read or add push configs of, or answer the approval of bob's task, nor
// continue his context; each lists only their own tasks; bob's webhook
// token never reaches her. Bob's run keeps waiting, and when an admin
// answers, the audit says the admin approved bob's call.
func TestCrossPrincipalJSClient(t *testing.T) {
	node, dir := nodePeer(t)
	var mu sync.Mutex
	var hooks []string // Authorization and token headers the webhook got
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hooks = append(hooks, r.Header.Get("X-A2A-Notification-Token")+r.Header.Get("Authorization"))
		mu.Unlock()
	}))
	defer hook.Close()
	f := newFixture(t, interopScript, fixtureOptions{principals: sharedPrincipals()})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "a2a-cross-principal.mjs", f.endpoint("alpha"), keyBob, keyAlice, hook.URL+"/hook")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\nstdout: %s\nstderr: %s", err, stdout, stderr.String())
	}
	t.Logf("client steps:\n%s", stdout)
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("bad line %q: %v", sc.Text(), err)
		}
		steps[m["step"].(string)] = m
	}
	bob := steps["bob"]
	if bob["askingState"] != "TASK_STATE_INPUT_REQUIRED" || bob["doneState"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("bob's tasks: %v\nstderr: %s", bob, stderr.String())
	}
	asking := a2a.TaskID(bob["asking"].(string))
	refused := func(name string, v any) {
		t.Helper()
		m, _ := v.(map[string]any)
		if m == nil || m["ok"] != false {
			t.Errorf("alice's %s on bob's task was not refused: %v", name, v)
		}
	}
	refused("get", steps["get"]["asking"])
	refused("get of a finished task", steps["get"]["done"])
	refused("cancel", steps["cancel"])
	refused("resubscribe", steps["resubscribe"])
	refused("push config get", steps["push"]["get"])
	refused("push config list", steps["push"]["list"])
	refused("push config create", steps["push"]["create"])
	refused("approval answer", steps["answer"])
	refused("approval answer naming the task alone", steps["answerTask"])
	if !strings.Contains(fmt.Sprint(steps["answerTask"]["error"]), "task not found") {
		t.Errorf("alice's answer naming bob's task: %v, want task not found", steps["answerTask"])
	}
	refused("approval answer by stream", steps["answerStream"])
	refused("message in bob's context", steps["context"])
	if kinds, _ := steps["answerStream"]["kinds"].([]any); len(kinds) != 0 {
		t.Errorf("alice's answer stream yielded %v", kinds)
	}
	for _, step := range []string{"get", "cancel", "resubscribe", "push", "answer", "answerTask", "answerStream", "context", "list"} {
		if b, _ := json.Marshal(steps[step]); strings.Contains(string(b), "bob-webhook-secret") {
			t.Errorf("bob's webhook token reached alice in %s: %s", step, b)
		}
	}
	list := steps["list"]
	if got := fmt.Sprint(list["alice"]); got != fmt.Sprint([]any{list["own"]}) {
		t.Errorf("alice lists %v, want only her own %v", got, list["own"])
	}
	wantBob := []string{bob["done"].(string), string(asking)}
	slices.Sort(wantBob)
	if got := fmt.Sprint(list["bob"]); got != fmt.Sprint(wantBob) {
		t.Errorf("bob lists %v, want %v", got, wantBob)
	}
	if steps["after"]["state"] != "TASK_STATE_INPUT_REQUIRED" || f.danger.Load() != 0 {
		t.Fatalf("bob's task after alice: %v, danger ran %d times", steps["after"], f.danger.Load())
	}

	// An admin may answer; the audit record is bob's call, approved by
	// the admin.
	code, b := f.call(keyAdmin, "POST", "/a2a/agents/alpha", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"a1","role":"ROLE_USER","taskId":%q,"parts":[{"text":"yes"}]}}}`, asking))
	if code != 200 || strings.Contains(b, `"error"`) {
		t.Fatalf("admin's answer: %d %s", code, b)
	}
	f.waitTask(asking, a2a.TaskStateCompleted)
	if f.danger.Load() != 1 {
		t.Fatalf("danger ran %d times after the admin's approval", f.danger.Load())
	}
	recs := f.auditOf("danger")
	if len(recs) != 1 || recs[0].Principal != "bob" || recs[0].Decision != "approved" || recs[0].Detail != "approved by admin" {
		t.Fatalf("audit of danger: %+v", recs)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range hooks {
		if strings.Contains(h, "alice") {
			t.Errorf("alice's webhook was called: %q", h)
		}
	}
}

// TestLegacyRoutesOwnership: the seed's routes (and the HTTP+JSON
// bindings) answer alike. Alice's
// GET and cancel of bob's task find nothing; her tasks/send naming his
// task (on the legacy route, and on another agent's JSON-RPC endpoint)
// starts a task of her own instead of answering his approval; a 0.3
// message/send on his task is refused. Carol, who may run beta only, gets
// 403 for alpha (not 200 with a failed task) and sees beta alone in the
// agent list. Bob answers his own approval, and the audit says so.
func TestLegacyRoutesOwnership(t *testing.T) {
	f := newFixture(t, interopScript, fixtureOptions{principals: sharedPrincipals()})
	send := func(key, path, params string) (int, map[string]any) {
		t.Helper()
		code, b := f.call(key, "POST", path, `{"jsonrpc":"2.0","id":1,"method":"tasks/send","params":`+params+`}`)
		var m map[string]any
		_ = json.Unmarshal([]byte(b), &m)
		if r, ok := m["result"].(map[string]any); ok {
			m = r // the JSON-RPC endpoint's envelope
		}
		return code, m
	}
	code, bobTask := send(keyBob, "/a2a/tasks/send", `{"message":{"role":"user","parts":[{"type":"text","text":"approve me"}]}}`)
	if code != 200 || bobTask["status"] != "inputRequired" {
		t.Fatalf("bob's send: %d %v", code, bobTask)
	}
	id := bobTask["id"].(string)
	if code, b := f.call(keyAlice, "GET", "/a2a/tasks/"+id, ""); code != http.StatusNotFound {
		t.Errorf("alice's GET of bob's task: %d %s", code, b)
	}
	if code, b := f.call(keyAlice, "POST", "/a2a/tasks/"+id+"/cancel", ""); code != http.StatusNotFound {
		t.Errorf("alice's cancel of bob's task: %d %s", code, b)
	}
	yes := fmt.Sprintf(`{"id":%q,"agent":"alpha","message":{"role":"user","parts":[{"type":"text","text":"yes"}]}}`, id)
	for _, path := range []string{"/a2a/tasks/send", "/a2a/agents/beta", "/a2a/agents/alpha"} {
		code, got := send(keyAlice, path, yes)
		if got["id"] == id {
			t.Errorf("alice's tasks/send on %s answered bob's task: %d %v", path, code, got)
		}
	}
	code, b := f.call(keyAlice, "POST", "/a2a/agents/alpha", fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","taskId":%q,"parts":[{"kind":"text","text":"yes"}]}}}`, id))
	if !strings.Contains(b, `"error"`) {
		t.Errorf("alice's 0.3 message/send on bob's task: %d %s", code, b)
	}
	// The HTTP+JSON bindings, 1.0 and 0.3, answer alike.
	for _, tc := range []struct{ method, path string }{
		{"GET", "/a2a/agents/alpha/tasks/" + id},
		{"POST", "/a2a/agents/alpha/tasks/" + id + ":cancel"},
		{"GET", "/a2a/agents/alpha/tasks/" + id + "/pushNotificationConfigs"},
		{"GET", "/a2a/agents/alpha/v1/tasks/" + id},
		{"POST", "/a2a/agents/alpha/v1/tasks/" + id + ":cancel"},
	} {
		if code, b := f.call(keyAlice, tc.method, tc.path, ""); code != http.StatusNotFound {
			t.Errorf("alice's %s %s: %d %s", tc.method, tc.path, code, b)
		}
	}
	if code, b := f.call(keyAlice, "GET", "/a2a/agents/alpha/tasks", ""); code != 200 || strings.Contains(b, id) {
		t.Errorf("alice's REST list: %d %s", code, b)
	}
	if code, b := f.call(keyBob, "GET", "/a2a/agents/alpha/tasks/"+id, ""); code != 200 || !strings.Contains(b, id) {
		t.Errorf("bob's REST get: %d %s", code, b)
	}
	if st := f.waitTask(a2a.TaskID(id), a2a.TaskStateInputRequired); st == nil || f.danger.Load() != 0 {
		t.Fatalf("bob's task after alice: danger ran %d times", f.danger.Load())
	}

	// Carol may not run alpha: 403 on every legacy way in.
	for _, tc := range []struct{ path, params string }{
		{"/a2a/tasks/send", `{"agent":"alpha","message":{"parts":[{"type":"text","text":"hello"}]}}`},
		{"/a2a/tasks/send", `{"message":{"parts":[{"type":"text","text":"hello"}]}}`}, // the default agent
		{"/a2a/agents/beta", `{"agent":"alpha","message":{"parts":[{"type":"text","text":"hello"}]}}`},
	} {
		code, got := send(keyCarol, tc.path, tc.params)
		if code != http.StatusForbidden {
			t.Errorf("carol's tasks/send on %s with %s: %d %v", tc.path, tc.params, code, got)
		}
	}
	if code, got := send(keyCarol, "/a2a/tasks/send", `{"agent":"beta","message":{"parts":[{"type":"text","text":"hello"}]}}`); code != 200 || got["status"] != "completed" {
		t.Errorf("carol's tasks/send to beta: %d %v", code, got)
	}
	code, b = f.call(keyCarol, "GET", "/a2a/agents", "")
	var list struct {
		Agents []struct {
			Name string `json:"name"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(b), &list); code != 200 || err != nil || len(list.Agents) != 1 || list.Agents[0].Name != "beta" {
		t.Errorf("carol's agent list: %d %s", code, b)
	}
	if code, b := f.call(keyBob, "GET", "/a2a/agents", ""); code != 200 || !strings.Contains(b, `"alpha"`) || !strings.Contains(b, `"beta"`) {
		t.Errorf("bob's agent list: %d %s", code, b)
	}

	// Bob answers his own question.
	if code, got := send(keyBob, "/a2a/tasks/send", yes); code != 200 || got["id"] != id || got["status"] != "completed" {
		t.Fatalf("bob's answer: %d %v", code, got)
	}
	if recs := f.auditOf("danger"); len(recs) != 1 || recs[0].Principal != "bob" || recs[0].Detail != "approved by bob" {
		t.Fatalf("audit of danger: %+v", recs)
	}
}

// TestExternalAgentRights: /api/a2a's external-agent routes spend the
// daemon's credential for an agent, so each needs the principal's
// a2a_agents right, and a remote task is read or cancelled only by the
// principal that sent it. Sending to a URL and discovery are for admins.
func TestExternalAgentRights(t *testing.T) {
	remote := newFixture(t, interopScript, fixtureOptions{})
	keys := sharedPrincipals()
	keys[keyAlice].A2AAgents = []string{"remote*"}
	keys[keyCarol].A2AAgents = []string{"*"}
	local := newFixture(t, nil, fixtureOptions{principals: keys, external: []ExternalAgent{
		{Name: "remote", URL: remote.endpoint("beta"), AllowPrivate: true},
	}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if a := local.client.Agents(); len(a) == 1 && a[0].Discovered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("remote never discovered: %+v", local.client.Agents())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, b := local.call(keyBob, "POST", "/api/a2a/send", `{"agent":"remote","message":"hello"}`); code != http.StatusForbidden || !strings.Contains(b, "a2a_agents") {
		t.Errorf("bob's send without the right: %d %s", code, b)
	}
	code, b := local.call(keyAlice, "POST", "/api/a2a/send", `{"agent":"remote","message":"hello"}`)
	var sent APISendResponse
	if err := json.Unmarshal([]byte(b), &sent); code != 200 || err != nil || sent.Task == nil {
		t.Fatalf("alice's send: %d %s", code, b)
	}
	id := string(sent.Task.ID)
	for _, tc := range []struct {
		who, key, method, path string
		want                   int
	}{
		{"bob, no right", keyBob, "GET", "/api/a2a/tasks/" + id + "?agent=remote", http.StatusForbidden},
		{"bob, no right", keyBob, "POST", "/api/a2a/tasks/" + id + "/cancel?agent=remote", http.StatusForbidden},
		{"bob, by id", keyBob, "GET", "/api/a2a/tasks/" + id, http.StatusNotFound},
		{"carol, not hers", keyCarol, "GET", "/api/a2a/tasks/" + id + "?agent=remote", http.StatusNotFound},
		{"carol, not hers", keyCarol, "POST", "/api/a2a/tasks/" + id + "/cancel?agent=remote", http.StatusNotFound},
		{"carol, by id", keyCarol, "GET", "/api/a2a/tasks/" + id, http.StatusNotFound},
		{"alice, hers", keyAlice, "GET", "/api/a2a/tasks/" + id + "?agent=remote", http.StatusOK},
		{"alice, hers by id", keyAlice, "GET", "/api/a2a/tasks/" + id, http.StatusOK},
		{"admin", keyAdmin, "GET", "/api/a2a/tasks/" + id + "?agent=remote", http.StatusOK},
	} {
		if code, b := local.call(tc.key, tc.method, tc.path, ""); code != tc.want {
			t.Errorf("%s: %s %s = %d, want %d (%s)", tc.who, tc.method, tc.path, code, tc.want, b)
		}
	}
	// A URL instead of a configured agent, and discovery: admins only.
	url := remote.endpoint("beta")
	if code, b := local.call(keyCarol, "POST", "/api/a2a/send", fmt.Sprintf(`{"agent":%q,"message":"hello"}`, url)); code != http.StatusForbidden {
		t.Errorf("carol's send to a URL: %d %s", code, b)
	}
	for _, body := range []string{fmt.Sprintf(`{"url":%q,"allow_private":true}`, url), fmt.Sprintf(`{"url":%q}`, "https://agents.example")} {
		if code, b := local.call(keyCarol, "POST", "/api/a2a/discover", body); code != http.StatusForbidden {
			t.Errorf("carol's discover %s: %d %s", body, code, b)
		}
	}
	if code, b := local.call(keyAdmin, "POST", "/api/a2a/discover", fmt.Sprintf(`{"url":%q,"allow_private":true}`, url)); code != 200 || !strings.Contains(b, `"name"`) {
		t.Errorf("admin's discover: %d %s", code, b)
	}
	// The list of external agents: those the principal may use.
	if code, b := local.call(keyBob, "GET", "/api/a2a/agents", ""); code != 200 || strings.Contains(b, "remote") {
		t.Errorf("bob's external agents: %d %s", code, b)
	}
	if code, b := local.call(keyAlice, "GET", "/api/a2a/agents", ""); code != 200 || !strings.Contains(b, `"remote"`) {
		t.Errorf("alice's external agents: %d %s", code, b)
	}
}
