package store

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzContainsFold checks containsFold against its definition: sub occurs
// in s if some substring of s equals sub under strings.EqualFold.
func FuzzContainsFold(f *testing.F) {
	for _, seed := range [][2]string{
		{"favorite-color", "COLOR"}, {"a cat named Über", "über"}, {"273 \u212a", "k"}, {"K", "\u212a"},
		{"İstanbul", "i"}, {"straße", "SS"}, {"ǅ", "ǆ"}, {"", ""}, {"abc", ""}, {"", "a"}, {"σς", "ΣΣ"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, s, sub string) {
		if !utf8.ValidString(s) || !utf8.ValidString(sub) || len(s) > 64 {
			t.Skip()
		}
		want := sub == ""
		for i := range s {
			for j := i; j <= len(s) && !want; j++ {
				if utf8.ValidString(s[i:j]) && strings.EqualFold(s[i:j], sub) {
					want = true
				}
			}
		}
		if got := containsFold(s, sub); got != want {
			t.Errorf("containsFold(%q, %q) = %v, want %v", s, sub, got, want)
		}
	})
}
