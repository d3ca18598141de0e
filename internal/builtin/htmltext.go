package builtin

import (
	"io"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToText reduces an HTML document to the text a reader sees: headings
// (as Markdown "#" lines), paragraphs, list items, table rows and links
// (as Markdown links resolved against base). Scripts, styles, navigation,
// form controls and hidden elements are dropped.
func htmlToText(r io.Reader, base *url.URL) (title, text string, err error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", "", err
	}
	w := &textWriter{base: base}
	w.title = findTitle(doc)
	if body := findFirst(doc, atom.Body); body != nil {
		w.children(body)
	} else {
		w.children(doc)
	}
	return w.title, w.String(), nil
}

// skipped elements carry no reading text.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Nav: true, atom.Aside: true, atom.Footer: true, atom.Svg: true, atom.Math: true,
	atom.Iframe: true, atom.Object: true, atom.Embed: true, atom.Canvas: true,
	atom.Button: true, atom.Select: true, atom.Input: true, atom.Textarea: true,
	atom.Head: true, atom.Link: true, atom.Meta: true, atom.Dialog: true,
}

// blocks start on a new line, separated from their neighbours.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Header: true, atom.Blockquote: true, atom.Ul: true, atom.Ol: true, atom.Dl: true,
	atom.Table: true, atom.Figure: true, atom.Figcaption: true, atom.Address: true,
	atom.Details: true, atom.Summary: true, atom.Form: true, atom.Fieldset: true,
	atom.Hr: true, atom.Caption: true,
}

var headingLevel = map[atom.Atom]int{
	atom.H1: 1, atom.H2: 2, atom.H3: 3, atom.H4: 4, atom.H5: 5, atom.H6: 6,
}

type textWriter struct {
	base  *url.URL
	title string
	b     strings.Builder
	// space is a pending inter-word space.
	space bool
	// pre counts enclosing <pre> elements, which keep their whitespace.
	pre int
}

func (w *textWriter) String() string {
	s := w.b.String()
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	s = strings.Join(lines, "\n")
	s = manyNewlines.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}

var manyNewlines = regexp.MustCompile(`\n{3,}`)

// newline makes the text end in at least n newlines: one ends a line,
// two make a paragraph break.
func (w *textWriter) newline(n int) {
	w.space = false
	s := w.b.String()
	if s == "" {
		return
	}
	have := len(s) - len(strings.TrimRight(s, "\n"))
	for ; have < n; have++ {
		w.b.WriteByte('\n')
	}
}

func (w *textWriter) atLineStart() bool {
	s := w.b.String()
	return s == "" || s[len(s)-1] == '\n'
}

func (w *textWriter) text(s string) {
	if w.pre > 0 {
		w.b.WriteString(s)
		return
	}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		if s != "" {
			w.space = true
		}
		return
	}
	if (w.space || isSpace(s[0])) && !w.atLineStart() {
		w.b.WriteByte(' ')
	}
	w.b.WriteString(strings.Join(fields, " "))
	w.space = isSpace(s[len(s)-1])
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

func (w *textWriter) children(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
}

func (w *textWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return
	case html.ElementNode:
	case html.DocumentNode:
		w.children(n)
		return
	default:
		return
	}
	if skipped[n.DataAtom] || hidden(n) {
		return
	}
	switch a := n.DataAtom; {
	case headingLevel[a] > 0:
		w.newline(2)
		w.b.WriteString(strings.Repeat("#", headingLevel[a]) + " ")
		w.children(n)
		w.newline(2)
	case a == atom.Br:
		w.b.WriteByte('\n')
		w.space = false
	case a == atom.Li:
		w.newline(1)
		w.b.WriteString("- ")
		w.children(n)
		w.newline(1)
	case a == atom.Dt || a == atom.Dd || a == atom.Tr:
		w.newline(1)
		w.children(n)
		w.newline(1)
	case a == atom.Td || a == atom.Th:
		if !w.atLineStart() {
			w.b.WriteString(" | ")
		}
		w.space = false
		w.children(n)
	case a == atom.Pre:
		w.newline(2)
		w.pre++
		w.children(n)
		w.pre--
		w.newline(2)
	case a == atom.A:
		w.link(n)
	case a == atom.Img:
		if alt := strings.TrimSpace(attr(n, "alt")); alt != "" {
			w.space = true
			w.text("[image: " + alt + "]")
			w.space = true
		}
	case blocks[a]:
		w.newline(2)
		w.children(n)
		w.newline(2)
	default:
		w.children(n)
	}
}

// link writes [text](href) for links to http(s) pages, text otherwise.
func (w *textWriter) link(n *html.Node) {
	sub := &textWriter{base: w.base}
	sub.children(n)
	text := strings.Join(strings.Fields(sub.String()), " ")
	href := strings.TrimSpace(attr(n, "href"))
	target := ""
	if href != "" && !strings.HasPrefix(href, "#") {
		if u, err := url.Parse(href); err == nil {
			if w.base != nil {
				u = w.base.ResolveReference(u)
			}
			if u.Scheme == "http" || u.Scheme == "https" {
				target = u.String()
			}
		}
	}
	switch {
	case text == "":
		return
	case target == "" || target == text:
		w.text(text)
	default:
		w.text("[" + text + "](" + target + ")")
	}
}

// hidden reports elements the page hides from readers.
func hidden(n *html.Node) bool {
	for _, a := range n.Attr {
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(a.Val, "true") {
				return true
			}
		case "role":
			if strings.EqualFold(a.Val, "navigation") {
				return true
			}
		case "style":
			v := strings.ReplaceAll(strings.ToLower(a.Val), " ", "")
			if strings.Contains(v, "display:none") || strings.Contains(v, "visibility:hidden") {
				return true
			}
		}
	}
	return false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func findFirst(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findFirst(c, a); f != nil {
			return f
		}
	}
	return nil
}

func findTitle(doc *html.Node) string {
	t := findFirst(doc, atom.Title)
	if t == nil {
		return ""
	}
	var b strings.Builder
	for c := t.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
