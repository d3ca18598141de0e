package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/manifest"
)

func TestEnvLookups(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY": "sk-openai",
		"AGENTD_KEY":     "from-env",
		"EMPTY":          "",
	}
	home := t.TempDir()
	cfg, err := Load(LoadOptions{Home: home, LookupEnv: fakeEnv(env)})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		env    string
		want   string
		wantOK bool
	}{
		{"set", "OPENAI_API_KEY", "sk-openai", true},
		{"unset", "ANTHROPIC_API_KEY", "", false},
		{"empty counts as unset", "EMPTY", "", false},
		{"no name", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cfg.LookupSecret(tt.env)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("LookupSecret(%q) = %q, %v; want %q, %v", tt.env, got, ok, tt.want, tt.wantOK)
			}
		})
	}

	// The environment is the one given to Load, not the process's.
	t.Setenv("ANTHROPIC_API_KEY", "real-env")
	if _, ok := cfg.LookupSecret("ANTHROPIC_API_KEY"); ok {
		t.Error("LookupSecret read the process environment instead of LoadOptions.LookupEnv")
	}
	// A Config built by hand falls back to the process environment.
	if v, ok := (&Config{}).LookupSecret("ANTHROPIC_API_KEY"); !ok || v != "real-env" {
		t.Errorf("hand-built Config LookupSecret = %q, %v", v, ok)
	}
}

func TestPostgresURL(t *testing.T) {
	const url = "postgres://agentd:pw-LEAK@db:5432/agentd"
	for _, tt := range []struct {
		name, body string
		env        map[string]string
		want       string // "" = an error naming wantVar
		wantVar    string
	}{
		{"default variable", "[store]\nbackend = \"postgres\"\n", map[string]string{"AGENTD_POSTGRES_URL": url}, url, ""},
		{"own variable", "[store]\nbackend = \"postgres\"\nurl_env = \"TEAM_DB\"\n", map[string]string{"TEAM_DB": url, "AGENTD_POSTGRES_URL": "other"}, url, ""},
		{"unset", "[store]\nbackend = \"postgres\"\n", nil, "", "AGENTD_POSTGRES_URL"},
		{"empty counts as unset", "[store]\nbackend = \"postgres\"\nurl_env = \"TEAM_DB\"\n", map[string]string{"TEAM_DB": ""}, "", "TEAM_DB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, "config.toml")
			if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(LoadOptions{Path: path, Home: home, LookupEnv: fakeEnv(tt.env)})
			if err != nil {
				t.Fatal(err)
			}
			got, err := cfg.PostgresURL()
			if tt.want != "" {
				if err != nil || got.Reveal() != tt.want {
					t.Fatalf("PostgresURL() = %q, %v; want the URL", got.Reveal(), err)
				}
				if strings.Contains(fmt.Sprint(got), "LEAK") {
					t.Errorf("the URL prints as %v", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantVar+" is not set") || !strings.Contains(err.Error(), "store.url_env") {
				t.Fatalf("PostgresURL() error = %v, want one naming store.url_env and %s", err, tt.wantVar)
			}
		})
	}
}

func TestAPIKeyValue(t *testing.T) {
	env := fakeEnv(map[string]string{"AGENTD_KEY": "from-env"})
	tests := []struct {
		name string
		body string
		want string
	}{
		{"none", "", ""},
		{"literal", `api_key = "literal-key"`, "literal-key"},
		{"from env", `api_key_env = "AGENTD_KEY"`, "from-env"},
		{"env unset", `api_key_env = "MISSING_KEY"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			writeFile(t, path, tt.body)
			cfg, err := Load(LoadOptions{Path: path, Home: t.TempDir(), LookupEnv: env})
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.APIKeyValue(); got != tt.want {
				t.Errorf("APIKeyValue = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExpandHeaders(t *testing.T) {
	cfg := &Config{lookupEnv: fakeEnv(map[string]string{"TOKEN": "t0k", "ORG": "acme", "EMPTY": ""})}
	tests := []struct {
		name    string
		in      map[string]string
		want    map[string]string
		wantErr string
	}{
		{"nil", nil, nil, ""},
		{"plain and refs", map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Org": "${ORG}-${ORG}", "X-Plain": "a $b {c}"},
			map[string]string{"Authorization": "Bearer t0k", "X-Org": "acme-acme", "X-Plain": "a $b {c}"}, ""},
		{"missing variable", map[string]string{"Authorization": "Bearer ${NOPE}"}, nil, `header "Authorization": environment variable NOPE is not set`},
		{"empty variable", map[string]string{"X": "${EMPTY}"}, nil, "EMPTY is not set"},
		{"unterminated", map[string]string{"X": "${TOKEN"}, nil, "unterminated"},
		{"bad name", map[string]string{"X": "${A-B}"}, nil, "environment variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cfg.ExpandHeaders(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "t0k") || strings.Contains(err.Error(), "acme") {
					t.Errorf("error leaks a value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("ExpandHeaders = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRedactHeaders(t *testing.T) {
	in := map[string]string{
		"Authorization": "Bearer ${TOKEN}",
		"X-Ref":         "${A}${B}",
		"X-Expanded":    "Bearer t0k",
		"X-Mixed":       "abc${TOKEN}",
		"X-Empty":       "",
	}
	want := map[string]string{
		"Authorization": "Bearer ${TOKEN}",
		"X-Ref":         "${A}${B}",
		"X-Expanded":    "[redacted]",
		"X-Mixed":       "[redacted]",
		"X-Empty":       "",
	}
	got := RedactHeaders(in)
	if !maps.Equal(got, want) {
		t.Errorf("RedactHeaders = %v, want %v", got, want)
	}
	if in["X-Expanded"] != "Bearer t0k" {
		t.Error("RedactHeaders modified its input")
	}
	if RedactHeaders(nil) != nil {
		t.Error("RedactHeaders(nil) != nil")
	}
}

func TestPaths(t *testing.T) {
	cfg := &Config{Home: "/srv/agentd"}
	tests := []struct {
		name  string
		agent string
		ws    string
		want  string
	}{
		{"default is the agent name", "coder", "", "/srv/agentd/workspaces/coder"},
		{"relative", "coder", "shared/src", "/srv/agentd/workspaces/shared/src"},
		{"absolute", "coder", "/home/me/project/", "/home/me/project"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cfg.WorkspaceDir(tt.agent, manifest.Manifest{Name: tt.agent, Workspace: tt.ws})
			if got != filepath.FromSlash(tt.want) {
				t.Errorf("WorkspaceDir = %q, want %q", got, tt.want)
			}
		})
	}
	if got := cfg.StorePath(); got != filepath.FromSlash("/srv/agentd/agentd.db") {
		t.Errorf("StorePath = %q", got)
	}
	f, tr := false, true
	for _, c := range []struct {
		enabled *bool
		want    bool
	}{{nil, true}, {&tr, true}, {&f, false}} {
		if got := cfg.MCPServerEnabled(MCPServer{Enabled: c.enabled}); got != c.want {
			t.Errorf("MCPServerEnabled(%v) = %v", c.enabled, got)
		}
	}
}

// FuzzExpandRefs: expansion never panics and a successful expansion
// leaves no ${ behind; a value RedactHeaders keeps reveals only
// variable names.
func FuzzExpandRefs(f *testing.F) {
	for _, s := range []string{"Bearer ${TOKEN}", "${A}${B}", "${", "$${A}}", "${A-B}", "a$b{c}", "${}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := expandRefs(s, func(string) (string, bool) { return "v", true })
		if err == nil && strings.Contains(out, "${") {
			t.Errorf("expandRefs(%q) = %q still holds ${", s, out)
		}
		switch red := RedactHeaders(map[string]string{"H": s})["H"]; {
		case red == "" && s != "":
			t.Errorf("RedactHeaders(%q) dropped the value", s)
		case red != "" && red != "[redacted]" && (red != s || !envRefOnlyRE.MatchString(s) || err != nil):
			t.Errorf("RedactHeaders kept %q", s)
		}
	})
}
