package config

import (
	"fmt"
	"log/slog"
	"strconv"
)

// redacted is what every printing path shows instead of a secret.
const redacted = "[redacted]"

var (
	_ fmt.Stringer   = Secret("")
	_ fmt.GoStringer = Secret("")
	_ fmt.Formatter  = Secret("")
	_ slog.LogValuer = Secret("")
)

func (s Secret) shown() string {
	if s == "" {
		return ""
	}
	return redacted
}

// String returns "[redacted]", or "" for an empty secret so that "is a
// key configured?" stays visible in dumps.
func (s Secret) String() string { return s.shown() }

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return strconv.Quote(s.shown()) }

// Format handles every fmt verb, including %x and %q, which would
// otherwise print a string type's bytes without calling String.
func (s Secret) Format(f fmt.State, verb rune) {
	switch verb {
	case 'q':
		fmt.Fprint(f, strconv.Quote(s.shown()))
	case 'v':
		if f.Flag('#') {
			fmt.Fprint(f, s.GoString())
			return
		}
		fmt.Fprint(f, s.shown())
	default:
		fmt.Fprint(f, s.shown())
	}
}

// MarshalJSON encodes the redacted form, so API responses and JSON logs
// of a Config never carry the key.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(s.shown())), nil }

// MarshalText encodes the redacted form (TOML and other text encoders).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.shown()), nil }

// UnmarshalText reads the value; this is how the TOML decoder fills it.
func (s *Secret) UnmarshalText(b []byte) error {
	*s = Secret(b)
	return nil
}

// LogValue makes slog print the redacted form whatever the handler.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.shown()) }
