package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	keyOld = []byte(strings.Repeat("o", 32))
	keyNew = []byte(strings.Repeat("n", 40))
)

func testClaims(now time.Time) sessionClaims {
	return sessionClaims{ID: "abc", IssuedAt: now.Unix(), User: "alice",
		Init: &mcp.InitializeParams{ProtocolVersion: "2025-11-25", ClientInfo: &mcp.Implementation{Name: "editor", Version: "1"}}}
}

func TestSealedSessionIDs(t *testing.T) {
	now := time.Now()
	old, err := newSealer([][]byte{keyOld}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := newSealer([][]byte{keyNew, keyOld}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	id, err := old.seal("", testClaims(now))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range id {
		if c < 0x21 || c > 0x7e {
			t.Fatalf("session id %q has a character outside visible ASCII", id)
		}
	}
	t.Run("round trip", func(t *testing.T) {
		got, err := old.open("", id, now)
		if err != nil || got.User != "alice" || got.Init.ClientInfo.Name != "editor" || got.ID != "abc" {
			t.Fatalf("open = %+v, %v", got, err)
		}
	})
	t.Run("rotation: an old id opens with the new keys, new ids are sealed with the first", func(t *testing.T) {
		if _, err := rotated.open("", id, now); err != nil {
			t.Fatalf("old id under rotated keys: %v", err)
		}
		fresh, err := rotated.seal("", testClaims(now))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.open("", fresh, now); err == nil {
			t.Error("an id sealed with the new key opened with the old one alone")
		}
	})
	t.Run("refused", func(t *testing.T) {
		other, _ := newSealer([][]byte{keyNew}, time.Hour)
		flipped := []byte(id)
		flipped[len(flipped)-5] ^= 1
		if flipped[len(flipped)-5] == '-' || flipped[len(flipped)-5] == '_' {
			flipped[len(flipped)-5] = 'A'
		}
		for name, f := range map[string]func() error{
			"another endpoint": func() error { _, err := old.open("fs", id, now); return err },
			"another key":      func() error { _, err := other.open("", id, now); return err },
			"tampered":         func() error { _, err := old.open("", string(flipped), now); return err },
			"expired":          func() error { _, err := old.open("", id, now.Add(2*time.Hour)); return err },
			"not sealed":       func() error { _, err := old.open("", "4JZQ7T2", now); return err },
			"truncated":        func() error { _, err := old.open("", id[:10], now); return err },
		} {
			if err := f(); err != errBadSession {
				t.Errorf("%s: %v, want errBadSession", name, err)
			}
		}
	})
	t.Run("short keys", func(t *testing.T) {
		if _, err := newSealer([][]byte{[]byte("short")}, time.Hour); err == nil {
			t.Error("a 5-byte key was accepted")
		}
		if _, err := newSealer(nil, time.Hour); err == nil {
			t.Error("no key was accepted")
		}
	})
}

// FuzzOpenSessionID: whatever a client sends as a session id, opening it
// never panics and never yields a session it was not given.
func FuzzOpenSessionID(f *testing.F) {
	s, err := newSealer([][]byte{keyOld}, time.Hour)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Now()
	id, _ := s.seal("", testClaims(now))
	f.Add(id)
	f.Add("v1.")
	f.Add("v1.AAAA")
	f.Add(strings.Repeat("v1.", 100))
	f.Fuzz(func(t *testing.T, in string) {
		// Only ids this key sealed open (the seed, here, whose claims
		// are testClaims): a forged or damaged one never does.
		c, err := s.open("", in, now)
		if err == nil && (c.ID != "abc" || c.User != "alice" || c.Init == nil) {
			t.Fatalf("opened %q as %+v", in, c)
		}
	})
}
