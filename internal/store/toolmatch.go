package store

import (
	"strings"
	"unicode/utf8"
)

// ToolLike is the SQL LIKE pattern (escape character '\') of an
// AuditFilter's ToolMatch: '*' and '?' become '%' and '_', every other
// character is literal (LIKE's own wildcards and the escape character
// escaped), and a match without '*' or '?' is a substring ("%match%").
// Backends compare it ignoring the case of ASCII letters (SQLite's LIKE;
// PostgreSQL's ILIKE folds other letters too, which tool names, ASCII
// identifiers, do not have). MatchTool is the same rule in Go.
func ToolLike(match string) string {
	if !strings.ContainsAny(match, "*?") {
		return "%" + likeEscaper.Replace(match) + "%"
	}
	var b strings.Builder
	for _, r := range match {
		switch r {
		case '*':
			b.WriteByte('%')
		case '?':
			b.WriteByte('_')
		case '%', '_', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// MatchTool reports whether the tool name matches an AuditFilter's
// ToolMatch: what the backends' LIKE of ToolLike(match) decides, for
// names and matches of valid UTF-8.
func MatchTool(match, name string) bool {
	if !strings.ContainsAny(match, "*?") {
		return strings.Contains(asciiLower(name), asciiLower(match))
	}
	return globFold([]rune(match), []rune(name))
}

// globFold matches '*' (any run) and '?' (one character) ignoring ASCII
// case, by the classic backtracking over the last star: linear in most
// inputs, never exponential.
func globFold(p, s []rune) bool {
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, si
			pi++
		case pi < len(p) && (p[pi] == '?' || foldRune(p[pi]) == foldRune(s[si])):
			pi++
			si++
		case star >= 0:
			pi, mark = star+1, mark+1
			si = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

func foldRune(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + ('a' - 'A')
	}
	return r
}

func asciiLower(s string) string {
	if !utf8.ValidString(s) {
		return s
	}
	return strings.Map(foldRune, s)
}
