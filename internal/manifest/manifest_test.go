package manifest

import (
	"strings"
	"testing"
)

func TestValidateReportsEveryFieldOnItsOwnLine(t *testing.T) {
	neg := -5
	temp := 3.0
	tests := []struct {
		name string
		m    Manifest
		want []string // the lines, in order
	}{
		{"valid", Manifest{Name: "a", Provider: "p", Model: "m", Tools: []string{"file_*", "mcp_[a-z]*"}}, nil},
		{"one bad max_tokens names only max_tokens", Manifest{Name: "a", Provider: "p", Model: "m", MaxTokens: neg},
			[]string{"max_tokens: -5 must not be negative"}},
		{"a malformed glob is refused by its index", Manifest{Name: "a", Provider: "p", Model: "m", Tools: []string{"file_*", "["}},
			[]string{`tools[1]: "[" is not a valid pattern (use *, ? and [...])`}},
		{"an empty pattern", Manifest{Name: "a", Provider: "p", Model: "m", Tools: []string{""}}, []string{"tools[0]: empty pattern"}},
		{"every problem at once", Manifest{Name: "bad name", Temperature: &temp, TokenBudget: neg, Tools: []string{"[x"}},
			[]string{
				`name: "bad name" is not a valid agent name (1-64 letters, digits, '-' or '_')`,
				`provider: required for agent "bad name"`,
				`model: required for agent "bad name"`,
				"token_budget: -5 must not be negative",
				"temperature: 3 is outside 0..2",
				`tools[0]: "[x" is not a valid pattern (use *, ? and [...])`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.Validate()
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want %q", tt.want)
			}
			if got := strings.Split(err.Error(), "\n"); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("Validate() lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
