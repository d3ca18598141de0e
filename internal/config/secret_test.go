package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const leak = "sk-live-DO-NOT-PRINT-0123456789"

func TestSecretNeverPrints(t *testing.T) {
	s := Secret(leak)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%10s", "%-20v", "%d", "%s%s"} {
		out := fmt.Sprintf(verb, s, s)
		if strings.Contains(out, "DO-NOT-PRINT") || strings.Contains(strings.ToLower(out), fmt.Sprintf("%x", leak[:8])) {
			t.Errorf("Sprintf(%q) = %q leaks the secret", verb, out)
		}
		if !strings.Contains(out, "[redacted]") {
			t.Errorf("Sprintf(%q) = %q, want [redacted]", verb, out)
		}
	}
	if got := fmt.Sprint(s); got != "[redacted]" {
		t.Errorf("Sprint = %q", got)
	}
	if got := fmt.Sprintf("%q", s); got != `"[redacted]"` {
		t.Errorf("%%q = %q", got)
	}
	if s.Reveal() != leak {
		t.Error("Reveal does not return the value")
	}
}

func TestEmptySecretPrintsEmpty(t *testing.T) {
	var s Secret
	if got := fmt.Sprintf("%v|%s|%q", s, s, s); got != `||""` {
		t.Errorf("empty secret printed %q", got)
	}
	b, _ := json.Marshal(s)
	if string(b) != `""` {
		t.Errorf("empty secret JSON = %s", b)
	}
}

func TestSecretUnmarshal(t *testing.T) {
	var s Secret
	if err := s.UnmarshalText([]byte("abc")); err != nil || s.Reveal() != "abc" {
		t.Errorf("UnmarshalText: %v, %q", err, s.Reveal())
	}
	var v struct{ K Secret }
	if err := json.Unmarshal([]byte(`{"K":"xyz"}`), &v); err != nil || v.K.Reveal() != "xyz" {
		t.Errorf("json.Unmarshal: %v, %q", err, v.K.Reveal())
	}
}

// TestConfigDumpsNeverLeak loads a config holding a literal api_key and
// prints it every way a program might.
func TestConfigDumpsNeverLeak(t *testing.T) {
	cfg := mustLoad(t, `api_key = "`+leak+`"`)
	if cfg.APIKeyValue() != leak {
		t.Fatal("the literal key was not loaded")
	}

	var jsonLog, textLog bytes.Buffer
	slog.New(slog.NewJSONHandler(&jsonLog, nil)).Info("config", "cfg", cfg, "key", cfg.APIKey, "value", *cfg)
	slog.New(slog.NewTextHandler(&textLog, nil)).Info("config", "cfg", cfg, "key", cfg.APIKey, "value", *cfg)
	jsonCfg, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var tomlOut bytes.Buffer
	if err := toml.NewEncoder(&tomlOut).Encode(cfg); err != nil {
		t.Fatal(err)
	}

	outputs := map[string]string{
		"%v":          fmt.Sprintf("%v", cfg),
		"%+v":         fmt.Sprintf("%+v", cfg),
		"%#v":         fmt.Sprintf("%#v", cfg),
		"%+v value":   fmt.Sprintf("%+v", *cfg),
		"%#v value":   fmt.Sprintf("%#v", *cfg),
		"json":        string(jsonCfg),
		"slog json":   jsonLog.String(),
		"slog text":   textLog.String(),
		"toml encode": tomlOut.String(),
	}
	// Verbs that do not suit a struct still print its fields.
	for _, verb := range []string{"%s", "%x", "%q", "%d"} {
		outputs[verb+" value"] = fmt.Sprintf(verb, *cfg)
	}
	hexLeak := fmt.Sprintf("%x", leak)
	for name, out := range outputs {
		if strings.Contains(out, "DO-NOT-PRINT") || strings.Contains(out, hexLeak) {
			t.Errorf("%s leaks the secret: %s", name, out)
		}
		if !strings.Contains(out, "redacted") && !strings.Contains(out, fmt.Sprintf("%x", "[redacted]")) {
			t.Errorf("%s does not show the redacted marker: %s", name, out)
		}
	}
}
