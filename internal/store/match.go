package store

import (
	"unicode"
	"unicode/utf8"
)

// Matches reports whether m's key or value contains query, ignoring case
// (RecallMemory's contract). It lives beside the contract rather than in a
// backend so that every backend matches alike: SQL's LIKE and lower() fold
// differently from one database to the next, and only ASCII in SQLite.
func (m Memory) Matches(query string) bool {
	return containsFold(m.Key, query) || containsFold(m.Value, query)
}

// containsFold reports whether sub occurs in s under Unicode simple case
// folding, the equivalence strings.EqualFold uses; bytes that are not
// valid UTF-8 match only themselves. It compares rune by rune instead of
// lower-casing both strings because case variants can differ in length
// (K, the Kelvin sign, is three bytes; k is one) and because lower-casing
// rewrites invalid bytes.
func containsFold(s, sub string) bool {
	if sub == "" {
		return true
	}
	for i := range len(s) {
		if hasPrefixFold(s[i:], sub) {
			return true
		}
	}
	return false
}

// hasPrefixFold reports whether s starts with prefix under simple folding.
func hasPrefixFold(s, prefix string) bool {
	for prefix != "" {
		if s == "" {
			return false
		}
		r1, n1 := utf8.DecodeRuneInString(s)
		r2, n2 := utf8.DecodeRuneInString(prefix)
		if r1 == utf8.RuneError && n1 == 1 || r2 == utf8.RuneError && n2 == 1 {
			// Not a character on one side: compare a single byte, so that
			// a query cut in the middle of a character still matches.
			n1, n2 = 1, 1
			if s[0] != prefix[0] {
				return false
			}
		} else if !equalFoldRune(r1, r2) {
			return false
		}
		s, prefix = s[n1:], prefix[n2:]
	}
	return true
}

// equalFoldRune reports whether a and b are in the same case-folding orbit.
func equalFoldRune(a, b rune) bool {
	if a == b {
		return true
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}
