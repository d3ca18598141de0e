package mcpclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentd/agentd/internal/llm"
	"github.com/agentd/agentd/internal/tool"
)

// renderResult turns an MCP tool result into what the model reads: text
// blocks as they are, other content as short readable notes (never a
// base64 dump), and structured content as indented "key: value" lines
// when the server sent nothing else readable or only a JSON copy of it.
// The structured content itself is kept, raw, in Result.Structured, and
// images in Result.Images for models that take them (the note stays, for
// those that do not).
func renderResult(res *mcp.CallToolResult) tool.Result {
	out := tool.Result{IsError: res.IsError}
	var structured any
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out.Structured = b
			structured = res.StructuredContent
		}
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && structured != nil && sameJSON(t.Text, out.Structured) {
			// The usual backward-compatible copy of the structured
			// content: show it readably instead of as a JSON dump.
			parts = append(parts, readableJSON(out.Structured))
			structured = nil
			continue
		}
		if s := renderContent(c); s != "" {
			parts = append(parts, s)
		}
		if img, ok := c.(*mcp.ImageContent); ok && len(img.Data) > 0 {
			out.Images = append(out.Images, llm.Image{MIMEType: img.MIMEType, Data: img.Data})
		}
	}
	if structured != nil && len(parts) == 0 {
		parts = append(parts, readableJSON(out.Structured))
	}
	out.Content = strings.Join(parts, "\n")
	return out
}

// renderContent renders one content block.
func renderContent(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *mcp.ResourceLink:
		return renderLink(c)
	case *mcp.EmbeddedResource:
		return renderResourceContents(c.Resource)
	case nil:
		return ""
	}
	// Sampling-only content types never appear in tool results; say what
	// arrived rather than dropping it silently.
	return fmt.Sprintf("[%T content]", c)
}

// renderLink renders a resource link as "uri (name): description".
func renderLink(l *mcp.ResourceLink) string {
	var b strings.Builder
	b.WriteString(l.URI)
	name := l.Title
	if name == "" {
		name = l.Name
	}
	if name != "" {
		b.WriteString(" (")
		b.WriteString(name)
		b.WriteString(")")
	}
	if l.Description != "" {
		b.WriteString(": ")
		b.WriteString(l.Description)
	}
	return b.String()
}

// renderResourceContents renders an embedded or read resource: its text
// under a header naming the URI, or a note for binary contents.
func renderResourceContents(r *mcp.ResourceContents) string {
	if r == nil {
		return ""
	}
	if r.Blob != nil || r.Text == "" && r.MIMEType != "" && !strings.HasPrefix(r.MIMEType, "text/") {
		return fmt.Sprintf("[resource %s: %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	}
	return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}

// sameJSON reports whether text is JSON equal to raw.
func sameJSON(text string, raw json.RawMessage) bool {
	t := strings.TrimSpace(text)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return false
	}
	var a, b any
	if json.Unmarshal([]byte(t), &a) != nil || json.Unmarshal(raw, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// maxReadableDepth bounds the nesting readableJSON renders; deeper values
// are printed as compact JSON.
const maxReadableDepth = 8

// readableJSON renders JSON as indented "key: value" lines in the order
// the keys arrived, lists as "- item" lines (YAML-like). Invalid JSON is
// returned as it is.
func readableJSON(raw json.RawMessage) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b strings.Builder
	if err := writeValue(&b, dec, 0, "", ctxRoot); err != nil {
		return string(raw)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Where a value is written: alone, after "key:", or after "-".
const (
	ctxRoot = iota
	ctxKey
	ctxDash
)

// writeValue writes the next value of dec; the caller has written what
// precedes it on its line. Children are indented by indent.
func writeValue(b *strings.Builder, dec *json.Decoder, depth int, indent string, where int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	sep := " "
	if where == ctxRoot {
		sep = ""
	}
	d, isDelim := tok.(json.Delim)
	if !isDelim {
		b.WriteString(sep + scalarText(tok, indent) + "\n")
		return nil
	}
	if !dec.More() {
		if _, err := dec.Token(); err != nil {
			return err
		}
		if d == '{' {
			b.WriteString(sep + "{}\n")
		} else {
			b.WriteString(sep + "[]\n")
		}
		return nil
	}
	if depth >= maxReadableDepth {
		rest, err := compactRest(dec, d)
		if err != nil {
			return err
		}
		b.WriteString(sep + string(rest) + "\n")
		return nil
	}
	first := true
	for dec.More() {
		switch {
		case !first:
			b.WriteString(indent)
		case where == ctxKey:
			b.WriteString("\n" + indent)
		case where == ctxDash:
			b.WriteString(" ")
		}
		first = false
		if d == '{' {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			b.WriteString(fmt.Sprint(k) + ":")
			err = writeValue(b, dec, depth+1, indent+"  ", ctxKey)
			if err != nil {
				return err
			}
			continue
		}
		b.WriteString("-")
		if err := writeValue(b, dec, depth+1, indent+"  ", ctxDash); err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// compactRest re-encodes the rest of the container opened by d.
func compactRest(dec *json.Decoder, d json.Delim) (json.RawMessage, error) {
	var items []json.RawMessage
	var keys []string
	for dec.More() {
		if d == '{' {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			keys = append(keys, fmt.Sprint(k))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		items = append(items, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if d == '[' {
		b.WriteByte('[')
	} else {
		b.WriteByte('{')
	}
	for i, v := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		if d == '{' {
			k, _ := json.Marshal(keys[i])
			b.Write(k)
			b.WriteByte(':')
		}
		if err := json.Compact(&b, v); err != nil {
			return nil, err
		}
	}
	if d == '[' {
		b.WriteByte(']')
	} else {
		b.WriteByte('}')
	}
	return b.Bytes(), nil
}

// scalarText renders a scalar token; multi-line strings continue on
// indented lines.
func scalarText(tok any, indent string) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return v.String()
	case string:
		if strings.TrimSpace(v) == "" {
			// Blank text would vanish in the layout; quoted, the model
			// still sees that the value is there and what it holds.
			return strconv.Quote(v)
		}
		return strings.ReplaceAll(v, "\n", "\n"+indent)
	}
	return fmt.Sprint(tok)
}
