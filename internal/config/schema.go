package config

import (
	"math"
	"reflect"
	"strings"
	"time"
)

// The strict decoding pass. The document is first decoded into a generic
// tree and checked against the Go types here, before being decoded into
// them, because the toml decoder is lenient where a config must not be:
// it ignores unknown keys (MetaData.Undecoded reports them without array
// indexes), matches keys case-insensitively, and turns a number into a
// string for a TextUnmarshaler such as Secret.

var secretType = reflect.TypeFor[Secret]()

// tomlField is one key a struct accepts.
type tomlField struct {
	name string
	typ  reflect.Type
}

// tomlFields lists the keys of struct type t in declaration order.
func tomlFields(t reflect.Type) []tomlField {
	var out []tomlField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, tomlField{name: name, typ: f.Type})
	}
	return out
}

// hintFor explains unknown keys that come from the seeds' dialects or
// from a common mistake.
func hintFor(p fieldPath, k string) string {
	switch where := unindexed(p.key(k)); where {
	case "mcp.servers":
		return "upstream MCP servers are [[mcp_servers]] tables with a [mcp_servers.transport] table"
	case "mcp_servers.command", "mcp_servers.args", "mcp_servers.url", "mcp_servers.type", "mcp_servers.dir":
		return k + " belongs in the [mcp_servers.transport] table"
	case "mcp_servers.transport.env", "mcp_servers.transport.timeout_secs", "mcp_servers.transport.allowed_tools":
		return k + " belongs in the [[mcp_servers]] table itself"
	}
	if unindexed(p) == "store" && (strings.Contains(k, "url") || k == "dsn" || k == "password" || k == "connection") {
		return "the connection URL holds a password: put it in an environment variable and name that variable with url_env = \"" + DefaultPostgresURLEnv + "\""
	}
	if len(p) == 2 && p[0].key == "providers" && (k == "api_key" || k == "key" || k == "token") {
		return "providers read keys from the environment: api_key_env = \"VARIABLE_NAME\""
	}
	return ""
}

// checkTree reports every key of v that t does not declare and every
// value of the wrong TOML type.
func checkTree(r *report, src *source, v any, t reflect.Type, p fieldPath) {
	if t == secretType {
		if _, ok := v.(string); !ok {
			r.add(src, p, "expected a string, got %s", tomlKind(v))
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		checkTree(r, src, v, t.Elem(), p)
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			r.add(src, p, "expected a table, got %s", tomlKind(v))
			return
		}
		fields := tomlFields(t)
		for _, k := range sortedStringKeys(m) {
			f, ok := findField(fields, k)
			if !ok {
				r.add(src, p.key(k), "%s", unknownKey(p, k, fields))
				continue
			}
			checkTree(r, src, m[k], f.typ, p.key(k))
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			r.add(src, p, "expected a table, got %s", tomlKind(v))
			return
		}
		for _, k := range sortedStringKeys(m) {
			checkTree(r, src, m[k], t.Elem(), p.key(k))
		}
	case reflect.Slice:
		switch a := v.(type) {
		case []map[string]any:
			for i, e := range a {
				checkTree(r, src, e, t.Elem(), p.index(i))
			}
		case []any:
			for i, e := range a {
				checkTree(r, src, e, t.Elem(), p.index(i))
			}
		default:
			r.add(src, p, "expected an array, got %s", tomlKind(v))
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			r.add(src, p, "expected a string, got %s", tomlKind(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			r.add(src, p, "expected true or false, got %s", tomlKind(v))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(int64)
		if !ok {
			r.add(src, p, "expected an integer, got %s", tomlKind(v))
			return
		}
		if reflect.Zero(t).OverflowInt(n) {
			r.add(src, p, "%d is out of range", n)
		}
	case reflect.Float32, reflect.Float64:
		switch n := v.(type) {
		case float64:
		case int64:
			// The decoder refuses integers a float64 cannot hold exactly.
			if n > 1<<53 || n < -(1<<53) {
				r.add(src, p, "%d is too large for a number with a fraction", n)
			}
		default:
			r.add(src, p, "expected a number, got %s", tomlKind(v))
		}
	default:
		// Every config type is one of the above; a new field of another
		// kind must be taught here before it can be configured.
		r.add(src, p, "cannot be set in a config file")
	}
}

func findField(fields []tomlField, k string) (tomlField, bool) {
	for _, f := range fields {
		if f.name == k {
			return f, true
		}
	}
	return tomlField{}, false
}

func unknownKey(p fieldPath, k string, fields []tomlField) string {
	var b strings.Builder
	b.WriteString("unknown key")
	for _, f := range fields {
		if strings.EqualFold(f.name, k) {
			b.WriteString(" (keys are case-sensitive: did you mean " + f.name + "?)")
			break
		}
	}
	if h := hintFor(p, k); h != "" {
		b.WriteString("; " + h)
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	if len(names) > 0 {
		b.WriteString("; valid keys here: " + strings.Join(names, ", "))
	}
	return b.String()
}

// unindexed renders p without array indexes (mcp_servers.transport).
func unindexed(p fieldPath) string {
	var keys fieldPath
	for _, s := range p {
		if !s.isIdx {
			keys = append(keys, s)
		}
	}
	return keys.String()
}

// tomlKind names the TOML type of a decoded value, never the value.
func tomlKind(v any) string {
	switch n := v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return "a special float"
		}
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a date-time"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	default:
		return "an unsupported value"
	}
}
