package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestToolArguments(t *testing.T) {
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"empty", "", "{}"},
		{"blank", " \n\t", "{}"},
		{"object kept verbatim", `{"a": 1}`, `{"a": 1}`},
		{"object trimmed", "  {\"a\":1}\n", `{"a":1}`},
		{"non-object JSON kept", " [1] ", `[1]`},
		{"truncated object becomes a string", `{"path": "x`, `"{\"path\": \"x"`},
		{"prose becomes a string", `call it with a=1`, `"call it with a=1"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ToolArguments(tc.raw); string(got) != tc.want {
				t.Errorf("ToolArguments(%q) = %s, want %s", tc.raw, got, tc.want)
			}
		})
	}
}

func TestObjectArguments(t *testing.T) {
	for _, tc := range []struct {
		name, args, want string
	}{
		{"nil", "", "{}"},
		{"object", `{"a":1}`, `{"a":1}`},
		{"object trimmed", " {\"a\":1} ", `{"a":1}`},
		{"string from malformed arguments", `"{\"a\""`, "{}"},
		{"array", `[1,2]`, "{}"},
		{"null", `null`, "{}"},
		{"invalid object", `{"a":`, "{}"},
		{"object with trailing data", `{"a":1} x`, "{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ObjectArguments(json.RawMessage(tc.args)); string(got) != tc.want {
				t.Errorf("ObjectArguments(%s) = %s, want %s", tc.args, got, tc.want)
			}
		})
	}
}

func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{"", "{}", `{"a":1}`, "{", " [1] ", `"x"`, "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		args := ToolArguments(raw)
		if !json.Valid(args) {
			t.Fatalf("ToolArguments(%q) = %q, not JSON", raw, args)
		}
		trimmed := strings.TrimSpace(raw)
		switch {
		case trimmed == "":
			if string(args) != "{}" {
				t.Fatalf("empty arguments became %s", args)
			}
		case json.Valid([]byte(trimmed)):
			if string(args) != trimmed {
				t.Fatalf("valid arguments %q changed to %s", raw, args)
			}
		default:
			var s string
			if err := json.Unmarshal(args, &s); err != nil || (utf8.ValidString(raw) && s != raw) {
				t.Fatalf("invalid arguments %q kept as %s", raw, args)
			}
		}
		obj := ObjectArguments(args)
		if !json.Valid(obj) || obj[0] != '{' {
			t.Fatalf("ObjectArguments(%s) = %s", args, obj)
		}
		if strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) && string(obj) != trimmed {
			t.Fatalf("object arguments %q replayed as %s", raw, obj)
		}
	})
}

func TestStatusError(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	for _, tc := range []struct {
		name      string
		err       *StatusError
		wantText  string
		wantCause bool
	}{
		{"http status", &StatusError{Status: http.StatusTooManyRequests, Message: "slow down"}, "429 Too Many Requests: slow down", false},
		{"transport", &StatusError{Message: "post example: unexpected EOF", Err: cause}, "post example: unexpected EOF", true},
		{"stream event", &StatusError{Message: "error event: overloaded_error: busy"}, "error event: overloaded_error: busy", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wrapped := fmt.Errorf("vendor: generate: %w", tc.err)
			var se *StatusError
			if !errors.As(wrapped, &se) || se.Status != tc.err.Status {
				t.Fatalf("errors.As(%v) = %v, status %v", wrapped, se, se)
			}
			if got := tc.err.Error(); got != tc.wantText {
				t.Errorf("Error() = %q, want %q", got, tc.wantText)
			}
			if got := errors.Is(wrapped, cause); got != tc.wantCause {
				t.Errorf("errors.Is(cause) = %v, want %v", got, tc.wantCause)
			}
		})
	}
}
