package config

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Error is one problem in a configuration: where it is and what was
// expected. Msg never contains a secret: values of api_key, of *_env
// fields, of headers and of URLs are never quoted back.
type Error struct {
	// File is the path of the file; "" for values that did not come from
	// a file (ValidateMCPServer, Config.Validate).
	File string
	// Line is 1-based; 0 when the position is unknown.
	Line int
	// Field is the path of the offending field, such as
	// mcp_servers[1].transport.type; "" for whole-file problems.
	Field string
	// Msg says what is wrong and what was expected.
	Msg string
}

// Error formats e as "file:line: field: message", leaving out what is
// unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found at once, in file and line order, so a
// user fixes a config in one pass instead of one error per restart.
type ErrorList []*Error

// maxErrors bounds an ErrorList; a file that is wrong everywhere (a JSON
// file passed as --config, say) would otherwise bury the first problem.
const maxErrors = 30

// Error joins the problems one per line.
func (l ErrorList) Error() string {
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap lets errors.As find the individual *Error values.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// pathSeg is one step of a field path: a key or an array index.
type pathSeg struct {
	key   string
	index int
	isIdx bool
}

// fieldPath addresses a value in a TOML document, e.g.
// mcp_servers[1].transport.type. It is both what errors print and the
// key of the line index built by locateKeys.
type fieldPath []pathSeg

func (p fieldPath) key(k string) fieldPath {
	q := make(fieldPath, len(p), len(p)+1)
	copy(q, p)
	return append(q, pathSeg{key: k})
}

func (p fieldPath) index(i int) fieldPath {
	q := make(fieldPath, len(p), len(p)+1)
	copy(q, p)
	return append(q, pathSeg{index: i, isIdx: true})
}

func (p fieldPath) String() string {
	var b strings.Builder
	for i, s := range p {
		if s.isIdx {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(quoteKey(s.key))
	}
	return b.String()
}

// quoteKey renders a key as TOML would need it: bare when possible.
func quoteKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBareKeyByte(k[i]) {
			return strconv.Quote(k)
		}
	}
	return k
}

func isBareKeyByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// source is one file being checked: its name and where its keys are.
type source struct {
	file  string
	lines map[string]int // fieldPath.String() → line; nil when unknown
}

// lineOf returns the line of p or, when p itself is not written in the
// file (a missing required key, a default), of its nearest enclosing
// table.
func (s *source) lineOf(p fieldPath) int {
	if s == nil || s.lines == nil {
		return 0
	}
	for n := len(p); n > 0; n-- {
		if l, ok := s.lines[p[:n].String()]; ok {
			return l
		}
	}
	return 0
}

// report collects problems from any number of sources.
type report struct {
	list ErrorList
}

func (r *report) add(src *source, p fieldPath, format string, args ...any) {
	e := &Error{Field: p.String(), Msg: fmt.Sprintf(format, args...)}
	if src != nil {
		e.File = src.file
		e.Line = src.lineOf(p)
	}
	r.list = append(r.list, e)
}

// err returns the problems sorted by file and line, or nil.
func (r *report) err() error {
	if len(r.list) == 0 {
		return nil
	}
	l := r.sorted()
	return l
}

func (r *report) sorted() ErrorList {
	l := append(ErrorList(nil), r.list...)
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].File != l[j].File {
			return l[i].File < l[j].File
		}
		return l[i].Line < l[j].Line
	})
	if len(l) > maxErrors {
		n := len(l) - maxErrors
		l = append(l[:maxErrors:maxErrors], &Error{File: l[maxErrors].File, Msg: fmt.Sprintf("%d more problems not shown", n)})
	}
	return l
}
