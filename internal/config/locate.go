package config

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// locateKeys maps every key, table and array element of a TOML document
// to the line where it is first written, keyed by fieldPath.String()
// (mcp_servers[1].transport.type).
//
// Why a scanner of our own: github.com/BurntSushi/toml v1.6.0 gives
// positions only in ParseError (syntax errors) and keeps key positions in
// the unexported MetaData.keyInfo, keyed without array indexes (every
// [[mcp_servers]] shares one entry, overwritten by the last). Problems
// found after decoding, such as an unknown key in the second server or a
// bad transport type, would have no line. This scanner follows only the
// document's structure: headers, dotted keys, strings, arrays and inline
// tables; it never interprets values.
//
// It runs on documents the toml parser has already accepted. Should it
// meet anything it does not understand it stops and returns what it has,
// so the cost of a gap is precision (source.lineOf falls back to the
// enclosing table), never a failure.
func locateKeys(src string) map[string]int {
	l := &locator{
		src:    strings.TrimPrefix(src, "\ufeff"),
		line:   1,
		lines:  make(map[string]int),
		arrays: make(map[string]int),
	}
	l.document()
	return l.lines
}

type locator struct {
	src    string
	pos    int
	line   int
	lines  map[string]int
	arrays map[string]int // resolved path of an array of tables → elements seen
}

func (l *locator) peek(off int) byte {
	if i := l.pos + off; i < len(l.src) {
		return l.src[i]
	}
	return 0
}

func (l *locator) eof() bool { return l.pos >= len(l.src) }

func (l *locator) record(p fieldPath, line int) {
	s := p.String()
	if _, ok := l.lines[s]; !ok {
		l.lines[s] = line
	}
}

// skipBlank skips spaces and tabs.
func (l *locator) skipBlank() {
	for !l.eof() && (l.src[l.pos] == ' ' || l.src[l.pos] == '\t') {
		l.pos++
	}
}

// skipAll skips blanks, comments and newlines.
func (l *locator) skipAll() {
	for !l.eof() {
		switch l.src[l.pos] {
		case ' ', '\t', '\r':
			l.pos++
		case '\n':
			l.pos++
			l.line++
		case '#':
			for !l.eof() && l.src[l.pos] != '\n' {
				l.pos++
			}
		default:
			return
		}
	}
}

func (l *locator) document() {
	var table fieldPath
	for {
		l.skipAll()
		if l.eof() {
			return
		}
		line := l.line
		if l.peek(0) == '[' {
			array := l.peek(1) == '['
			if array {
				l.pos += 2
			} else {
				l.pos++
			}
			parts, ok := l.key()
			if !ok {
				return
			}
			l.skipBlank()
			if l.peek(0) != ']' || (array && l.peek(1) != ']') {
				return
			}
			l.pos++
			if array {
				l.pos++
			}
			table = l.resolve(parts, array, line)
			l.record(table, line)
			continue
		}
		if !l.keyValue(table) {
			return
		}
	}
}

// resolve turns a header's keys into a path with array indexes: each
// prefix naming an array of tables refers to its latest element, and a
// [[header]] opens a new element.
func (l *locator) resolve(parts []string, array bool, line int) fieldPath {
	var p fieldPath
	for i, part := range parts {
		p = p.key(part)
		s := p.String()
		if array && i == len(parts)-1 {
			n := l.arrays[s]
			l.arrays[s] = n + 1
			l.record(p, line)
			return p.index(n)
		}
		l.record(p, line)
		if n := l.arrays[s]; n > 0 {
			p = p.index(n - 1)
		}
	}
	return p
}

// keyValue reads "key = value" relative to base.
func (l *locator) keyValue(base fieldPath) bool {
	line := l.line
	parts, ok := l.key()
	if !ok {
		return false
	}
	p := base
	for _, part := range parts {
		p = p.key(part)
		l.record(p, line)
	}
	l.skipBlank()
	if l.peek(0) != '=' {
		return false
	}
	l.pos++
	l.skipBlank()
	return l.value(p)
}

// key reads a possibly dotted key.
func (l *locator) key() ([]string, bool) {
	var parts []string
	for {
		l.skipBlank()
		var part string
		switch l.peek(0) {
		case '"':
			s, ok := l.basicString()
			if !ok {
				return nil, false
			}
			part = s
		case '\'':
			s, ok := l.literalString()
			if !ok {
				return nil, false
			}
			part = s
		default:
			start := l.pos
			for !l.eof() && isBareKeyByte(l.src[l.pos]) {
				l.pos++
			}
			if l.pos == start {
				return nil, false
			}
			part = l.src[start:l.pos]
		}
		parts = append(parts, part)
		l.skipBlank()
		if l.peek(0) != '.' {
			return parts, true
		}
		l.pos++
	}
}

// basicString reads a one-line "..." string and decodes its escapes, for
// quoted keys such as "mcp_*".
func (l *locator) basicString() (string, bool) {
	l.pos++ // opening quote
	var b strings.Builder
	for !l.eof() {
		c := l.src[l.pos]
		switch c {
		case '"':
			l.pos++
			return b.String(), true
		case '\n':
			return "", false
		case '\\':
			r, n, ok := decodeEscape(l.src[l.pos:])
			if !ok {
				return "", false
			}
			b.WriteRune(r)
			l.pos += n
		default:
			b.WriteByte(c)
			l.pos++
		}
	}
	return "", false
}

// decodeEscape decodes the TOML escape at the start of s, returning the
// rune and the bytes consumed.
func decodeEscape(s string) (rune, int, bool) {
	if len(s) < 2 {
		return 0, 0, false
	}
	switch s[1] {
	case 'b':
		return '\b', 2, true
	case 't':
		return '\t', 2, true
	case 'n':
		return '\n', 2, true
	case 'f':
		return '\f', 2, true
	case 'r':
		return '\r', 2, true
	case 'e':
		return 0x1b, 2, true
	case '"':
		return '"', 2, true
	case '\\':
		return '\\', 2, true
	}
	var digits int
	switch s[1] {
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	default:
		return 0, 0, false
	}
	if len(s) < 2+digits {
		return 0, 0, false
	}
	v, err := strconv.ParseUint(s[2:2+digits], 16, 32)
	if err != nil || !utf8.ValidRune(rune(v)) {
		return 0, 0, false
	}
	return rune(v), 2 + digits, true
}

// literalString reads a one-line '...' string.
func (l *locator) literalString() (string, bool) {
	l.pos++
	start := l.pos
	for !l.eof() {
		switch l.src[l.pos] {
		case '\'':
			s := l.src[start:l.pos]
			l.pos++
			return s, true
		case '\n':
			return "", false
		}
		l.pos++
	}
	return "", false
}

// multiline skips a """...""" or ”'...”' string, counting lines.
func (l *locator) multiline(q byte) bool {
	l.pos += 3
	for !l.eof() {
		c := l.src[l.pos]
		switch {
		case c == '\\' && q == '"':
			l.pos++
			if !l.eof() {
				if l.src[l.pos] == '\n' {
					l.line++
				}
				l.pos++
			}
		case c == q && l.peek(1) == q && l.peek(2) == q:
			l.pos += 3
			// Up to two more quotes belong to the content: """a""""".
			for range 2 {
				if l.peek(0) == q {
					l.pos++
				}
			}
			return true
		default:
			if c == '\n' {
				l.line++
			}
			l.pos++
		}
	}
	return false
}

// value skips one value, recording array elements and inline-table keys
// under p.
func (l *locator) value(p fieldPath) bool {
	switch l.peek(0) {
	case '"':
		if l.peek(1) == '"' && l.peek(2) == '"' {
			return l.multiline('"')
		}
		_, ok := l.basicString()
		return ok
	case '\'':
		if l.peek(1) == '\'' && l.peek(2) == '\'' {
			return l.multiline('\'')
		}
		_, ok := l.literalString()
		return ok
	case '[':
		l.pos++
		for i := 0; ; i++ {
			l.skipAll()
			if l.peek(0) == ']' {
				l.pos++
				return true
			}
			if l.eof() {
				return false
			}
			el := p.index(i)
			l.record(el, l.line)
			if !l.value(el) {
				return false
			}
			l.skipAll()
			switch l.peek(0) {
			case ',':
				l.pos++
			case ']':
				l.pos++
				return true
			default:
				return false
			}
		}
	case '{':
		l.pos++
		for {
			l.skipAll() // TOML 1.1 allows newlines in inline tables
			if l.peek(0) == '}' {
				l.pos++
				return true
			}
			if l.eof() || !l.keyValue(p) {
				return false
			}
			l.skipAll()
			switch l.peek(0) {
			case ',':
				l.pos++
			case '}':
				l.pos++
				return true
			default:
				return false
			}
		}
	default:
		// Numbers, booleans, dates: up to the next delimiter. A date-time
		// may hold a space, which is harmless here.
		start := l.pos
		for !l.eof() {
			c := l.src[l.pos]
			if c == ',' || c == ']' || c == '}' || c == '\n' || c == '\r' || c == '#' {
				break
			}
			l.pos++
		}
		return l.pos > start
	}
}
