package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestProviderEndpoint(t *testing.T) {
	type want struct {
		url, from, where, shown string
	}
	fileWithOpenAI := "[providers.openai]\napi_key_env = \"OPENAI_API_KEY\"\nbase_url = \"http://127.0.0.1:9000/v1\"\n"
	corp := "[providers.corp]\nkind = \"openai\"\n\n[providers.claude]\nkind = \"anthropic\"\nbase_url = \"https://proxy.example.com\"\n"
	tests := []struct {
		name     string
		body     string // config.toml; "" = no file (the built-in providers)
		env      map[string]string
		provider string
		want     want
	}{
		{"vendor default openai", "", nil, "openai",
			want{"", FromVendor, "", "https://api.openai.com/v1"}},
		{"vendor default anthropic", "", nil, "anthropic",
			want{"", FromVendor, "", "https://api.anthropic.com"}},
		{"vendor default gemini", "", nil, "gemini",
			want{"", FromVendor, "", "https://generativelanguage.googleapis.com/"}},
		{"OPENAI_BASE_URL", "", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}, "openai",
			want{"http://127.0.0.1:8080/v1", FromEnv, "OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"}},
		{"ANTHROPIC_BASE_URL", "", map[string]string{"ANTHROPIC_BASE_URL": "https://llm-proxy.internal"}, "anthropic",
			want{"https://llm-proxy.internal", FromEnv, "ANTHROPIC_BASE_URL", "https://llm-proxy.internal"}},
		{"GOOGLE_GEMINI_BASE_URL", "", map[string]string{"GOOGLE_GEMINI_BASE_URL": "http://localhost:7000/"}, "gemini",
			want{"http://localhost:7000/", FromEnv, "GOOGLE_GEMINI_BASE_URL", "http://localhost:7000/"}},
		{"another vendor's variable does not apply", "", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}, "anthropic",
			want{"", FromVendor, "", "https://api.anthropic.com"}},
		{"an empty variable counts as unset", "", map[string]string{"OPENAI_BASE_URL": ""}, "openai",
			want{"", FromVendor, "", "https://api.openai.com/v1"}},
		{"the built-in ollama keeps its base_url", "", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}, "ollama",
			want{"http://127.0.0.1:11434/v1", FromConfig, "built-in default", "http://127.0.0.1:11434/v1"}},
		{"base_url in the file wins over the variable", fileWithOpenAI, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}, "openai",
			want{"http://127.0.0.1:9000/v1", FromConfig, "FILE:3", "http://127.0.0.1:9000/v1"}},
		{"any provider of the kind without base_url", corp, map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}, "corp",
			want{"http://127.0.0.1:8080/v1", FromEnv, "OPENAI_BASE_URL", "http://127.0.0.1:8080/v1"}},
		{"base_url of a named provider", corp, map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"}, "claude",
			want{"https://proxy.example.com", FromConfig, "FILE:6", "https://proxy.example.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			opts := LoadOptions{Home: home, LookupEnv: fakeEnv(tt.env)}
			file := filepath.Join(home, "config.toml")
			if tt.body != "" {
				writeFile(t, file, tt.body)
				opts.Path = file
			}
			cfg, err := Load(opts)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			ep, ok := cfg.ProviderEndpoint(tt.provider)
			if !ok {
				t.Fatalf("provider %q not found", tt.provider)
			}
			w := tt.want
			w.where = strings.Replace(w.where, "FILE", file, 1)
			if got := (want{ep.URL, ep.From, ep.Where, ep.Shown}); got != w {
				t.Errorf("endpoint = %+v, want %+v", got, w)
			}
		})
	}

	t.Run("source names the origin", func(t *testing.T) {
		for _, tt := range []struct {
			ep   Endpoint
			want string
		}{
			{Endpoint{From: FromConfig, Where: "/h/config.toml:3"}, "/h/config.toml:3"},
			{Endpoint{From: FromEnv, Where: "OPENAI_BASE_URL"}, "env OPENAI_BASE_URL"},
			{Endpoint{From: FromVendor}, "vendor default"},
		} {
			if got := tt.ep.Source(); got != tt.want {
				t.Errorf("Source() = %q, want %q", got, tt.want)
			}
		}
	})

	t.Run("unknown provider", func(t *testing.T) {
		cfg, err := Load(LoadOptions{Home: t.TempDir(), LookupEnv: fakeEnv(nil)})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cfg.ProviderEndpoint("nope"); ok {
			t.Error("ProviderEndpoint found a provider that is not configured")
		}
	})

	t.Run("only the environment given to Load", func(t *testing.T) {
		t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
		cfg, err := Load(LoadOptions{Home: t.TempDir(), LookupEnv: fakeEnv(nil)})
		if err != nil {
			t.Fatal(err)
		}
		if ep, _ := cfg.ProviderEndpoint("openai"); ep.From != FromVendor {
			t.Errorf("endpoint %+v came from the process environment", ep)
		}
	})
}

// TestProviderEndpointEnvErrors: a bad variable is reported as a bad
// base_url would be, naming the variable and never quoting its value.
func TestProviderEndpointEnvErrors(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		env     map[string]string
		field   string // "" = no error
		wantMsg string
	}{
		{"no scheme", "", map[string]string{"OPENAI_BASE_URL": "localhost:1234/v1"},
			"providers.openai.base_url", "OPENAI_BASE_URL is not an http:// or https:// URL with a host"},
		{"credentials", "", map[string]string{"ANTHROPIC_BASE_URL": "https://user:s3cret-pw@proxy.example.com"},
			"providers.anthropic.base_url", "ANTHROPIC_BASE_URL contains credentials"},
		{"unused when base_url is set", "[providers.openai]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
			map[string]string{"OPENAI_BASE_URL": "not a url"}, "", ""},
		{"loopback is accepted, like base_url", "", map[string]string{"OPENAI_BASE_URL": "http://[::1]:8080/v1"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			opts := LoadOptions{Home: home, LookupEnv: fakeEnv(tt.env)}
			if tt.body != "" {
				opts.Path = filepath.Join(home, "config.toml")
				writeFile(t, opts.Path, tt.body)
			}
			_, err := Load(opts)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				return
			}
			var list ErrorList
			if !errors.As(err, &list) || len(list) != 1 {
				t.Fatalf("Load error %v, want one problem at %s", err, tt.field)
			}
			e := list[0]
			if e.Field != tt.field || !strings.Contains(e.Msg, tt.wantMsg) || !strings.Contains(e.Msg, "set base_url") {
				t.Errorf("error %q, want field %s and %q", e.Error(), tt.field, tt.wantMsg)
			}
			for _, v := range tt.env {
				if strings.Contains(err.Error(), v) {
					t.Errorf("error quotes the variable's value: %v", err)
				}
			}
		})
	}
}
