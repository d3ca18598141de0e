package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestScanID(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"`, "7"},
		{`{"id":"abc","method"`, `"abc"`},
		{`{"method":"x","params":{"id":5,"deep":[1,{"id":6}]},"id":-3.5e2}`, "-3.5e2"},
		{`{"params":{"a":"\"id\":1"},"id":null}`, "null"},
		{`{"params":"xxxx`, ""},
		{`{"id":12`, ""}, // the number may continue
		{`{"id":{"x":1}}`, ""},
		{`[{"id":1}]`, ""},
		{`{"id":"unterminated`, ""},
		{``, ""},
	}
	for _, tc := range tests {
		if got := string(ScanID([]byte(tc.in))); got != tc.want {
			t.Errorf("ScanID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestScan(t *testing.T) {
	tests := []struct {
		in         string
		id, method string
		complete   bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"method":"inner"}}`, "1", "tools/call", true},
		{`{"method":"notifications/initialized"}`, "", "notifications/initialized", true},
		{`{"id":"x","result":{}}`, `"x"`, "", true},
		{`{"method":"a\u002fb","id":2}`, "2", "a/b", true},
		{`{"method":3}`, "", "", false},
		{`[{"method":"x"}]`, "", "", false},
		{`{}`, "", "", true},
	}
	for _, tc := range tests {
		f := Scan([]byte(tc.in))
		if f.Complete != tc.complete || f.Complete && (string(f.ID) != tc.id || f.Method != tc.method) {
			t.Errorf("Scan(%s) = %s, %q, %v; want %s, %q, %v", tc.in, f.ID, f.Method, f.Complete, tc.id, tc.method, tc.complete)
		}
	}
}

func TestClassify(t *testing.T) {
	big := strings.Repeat("x", 10000)
	tests := []struct {
		name     string
		msg      string
		wantKind Kind
		wantID   string
	}{
		{"id first", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + big + `"}]}}`, KindResponse, "7"},
		{"id last (node)", `{"result":{"content":[{"type":"text","text":"` + big + `"}]},"jsonrpc":"2.0","id":12}`, KindResponse, "12"},
		{"string id last", `{"result":{"x":"` + big + `"},"jsonrpc":"2.0","id":"abc\"d"}`, KindResponse, `"abc\"d"`},
		{"id then jsonrpc", `{"result":"` + big + `","id":3,"jsonrpc":"2.0"}`, KindResponse, "3"},
		{"error response", `{"jsonrpc":"2.0","id":5,"error":{"code":1,"message":"` + big + `"}}`, KindResponse, "5"},
		{"notification", `{"method":"notifications/message","params":{"data":"` + big + `"},"jsonrpc":"2.0"}`, KindRequest, ""},
		{"server request", `{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{"x":"` + big + `"}}`, KindRequest, ""},
		{"nested id only", `{"result":{"items":[{"id":4,"v":"` + big + `"}],"more":{"id":5}}}`, KindUnknown, ""},
		{"nested id last", `{"result":{"v":"` + big + `","id":5}}`, KindUnknown, ""},
		{"garbage", big, KindUnknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := []byte(tt.msg)
			head, tail := b[:min(len(b), HeadMax)], b[max(0, len(b)-HeadMax):]
			kind, id := Classify(head, tail)
			if kind != tt.wantKind || string(id) != tt.wantID {
				t.Errorf("classify = %v %s, want %v %s", kind, id, tt.wantKind, tt.wantID)
			}
		})
	}
}

// FuzzScan checks the scanner on whole and cut messages: it never
// panics; whatever id it finds in a cut message is the id a full decode
// of the whole message finds, and Scan of the whole message agrees; and
// Classify never answers a request nor finds an id that is not the
// message's.
func FuzzScan(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":"b"}}`), 20)
	f.Add([]byte(`{"params":{"id":1,"x":[{"id":2}]},"id":"z"}`), 30)
	f.Add([]byte(`{"id":"a\"b","method":"m"}`), 10)
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`), 3)
	f.Add([]byte(`{"result":{},"jsonrpc":"2.0","id":"x"}`), 20)
	f.Add([]byte(`{"method":"x","params":{}}`), 5)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		if cut < 0 || cut > len(data) {
			cut = len(data)
		}
		oneID := bytes.Count(data, []byte(`"id"`)) == 1
		var full struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		whole := json.Valid(data) && json.Unmarshal(data, &full) == nil

		id := ScanID(data[:cut])
		if id != nil {
			if !json.Valid(id) {
				t.Fatalf("invalid id %q", id)
			}
			// With duplicate keys the decoder keeps the last; only flag a
			// mismatch without duplicates.
			if whole && oneID && !sameJSON(id, full.ID) {
				t.Fatalf("scanned id %s, decoded %s", id, full.ID)
			}
			if f := Scan(data); f.Complete && whole && oneID && cut == len(data) && string(f.ID) != string(id) {
				t.Fatalf("Scan id %s, ScanID %s", f.ID, id)
			}
		}

		kind, cid := Classify(data[:cut], data[cut:])
		if cid != nil && !json.Valid(cid) {
			t.Fatalf("id %q is not JSON", cid)
		}
		if kind == KindRequest && cid != nil {
			t.Fatal("a request with an id to answer")
		}
		// On a whole response with a scalar id, the id found is the id.
		if whole && kind == KindResponse && full.Method == nil && len(full.ID) > 0 && (full.ID[0] == '"' || full.ID[0] == '-' || full.ID[0] >= '0' && full.ID[0] <= '9') {
			if !sameJSON(cid, full.ID) {
				t.Fatalf("found id %s in %s, want %s", cid, data, full.ID)
			}
		}
	})
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

// FuzzMembers: on valid JSON, Members sees the members encoding/json
// sees, in order, with the same values.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}] } `, `{"a":1,"a":2}`, `{"\u0061":"x"}`, `[1]`, `{"a":1} {}`, `{"a":{"b":{"c":null}}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // Members is only for valid JSON
		}
		var keys []string
		var vals [][]byte
		ok := Members(data, func(k, v []byte) bool {
			var key string
			if err := json.Unmarshal(k, &key); err != nil {
				t.Fatalf("key %q is not a JSON string: %v", k, err)
			}
			keys = append(keys, key)
			vals = append(vals, v)
			return true
		})
		var obj map[string]json.RawMessage
		isObj := json.Unmarshal(data, &obj) == nil && obj != nil // null decodes to a nil map
		if ok != isObj {
			t.Fatalf("Members %v, encoding/json sees an object: %v", ok, isObj)
		}
		if !ok {
			return
		}
		seen := map[string]bool{}
		for i, k := range keys {
			seen[k] = true
			if !json.Valid(vals[i]) {
				t.Fatalf("value %q of %q is not JSON", vals[i], k)
			}
		}
		if len(seen) != len(obj) {
			t.Fatalf("keys %q, encoding/json %d", keys, len(obj))
		}
		for i := len(keys) - 1; i >= 0; i-- {
			// The last of duplicate keys wins, as in encoding/json.
			if !seen[keys[i]] {
				continue
			}
			delete(seen, keys[i])
			var a, b bytes.Buffer
			_ = json.Compact(&a, vals[i])
			_ = json.Compact(&b, obj[keys[i]])
			if a.String() != b.String() {
				t.Fatalf("value of %q: %s, encoding/json %s", keys[i], a.String(), b.String())
			}
		}
	})
}

func FuzzElements(f *testing.F) {
	for _, s := range []string{`[]`, ` [ 1 , "a" , {"b":[2]} ] `, `[[],[[]]]`, `{"a":1}`, `[1] []`, `[null,true,false,-1.5e3]`, `["]",","]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // Elements is only for valid JSON
		}
		var vals [][]byte
		ok := Elements(data, func(v []byte) bool {
			vals = append(vals, v)
			return true
		})
		var arr []json.RawMessage
		isArr := json.Unmarshal(data, &arr) == nil && arr != nil // null decodes to a nil slice
		if ok != isArr {
			t.Fatalf("Elements %v, encoding/json sees an array: %v", ok, isArr)
		}
		if !ok {
			return
		}
		if len(vals) != len(arr) {
			t.Fatalf("%d elements, encoding/json %d", len(vals), len(arr))
		}
		for i, v := range vals {
			if !bytes.Equal(bytes.TrimSpace(v), bytes.TrimSpace(arr[i])) {
				t.Fatalf("element %d: %q, encoding/json %q", i, v, arr[i])
			}
		}
	})
}
