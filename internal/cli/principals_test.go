package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPrincipalsCommands: new-key prints a key whose hash it also prints;
// list shows each principal's rights and where its key comes from, never
// a key.
func TestPrincipalsCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"principals", "new-key"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("new-key exit %d: %s", code, errb.String())
	}
	m := regexp.MustCompile(`key:\s+(agentd_\S+)\nkey_sha256: ([0-9a-f]{64})`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("new-key output:\n%s", out.String())
	}
	if sum := sha256.Sum256([]byte(m[1])); hex.EncodeToString(sum[:]) != m[2] {
		t.Fatalf("printed hash is not the key's SHA-256")
	}

	home := t.TempDir()
	file := filepath.Join(home, "config.toml")
	cfg := `api_key = "literal-admin-key"

[[principals]]
name = "ci-bot"
key_env = "CI_KEY"
agents = ["reviewer"]
tools = ["file_read"]

[[principals]]
name = "partner"
key_sha256 = "` + m[2] + `"
agents = ["public-*"]
`
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := Main(context.Background(), []string{"--config", file, "principals", "list"}, strings.NewReader(""), &out, &errb); code != 0 {
		t.Fatalf("list exit %d: %s", code, errb.String())
	}
	got := out.String()
	for _, want := range []string{"admin", "ci-bot", "reviewer", "file_read", "key_env CI_KEY", "partner", "public-*", "key_sha256 " + m[2][:12]} {
		if !strings.Contains(got, want) {
			t.Errorf("list lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "literal-admin-key") || strings.Contains(got, m[2]) {
		t.Errorf("list shows a key or a whole hash:\n%s", got)
	}
}
