package mcpclient

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// describe renders a decoded message (or its error's presence) so that
// two decoders' answers compare as strings.
func describe(msg jsonrpc.Message, err error) string {
	if err != nil {
		return "error"
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return fmt.Sprintf("request id=%#v valid=%v method=%q params=%q params-nil=%v", m.ID.Raw(), m.ID.IsValid(), m.Method, m.Params, m.Params == nil)
	case *jsonrpc.Response:
		return fmt.Sprintf("response id=%#v result=%q result-nil=%v error=%#v", m.ID.Raw(), m.Result, m.Result == nil, m.Error)
	}
	return fmt.Sprintf("%T", msg)
}

var wireSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":"a","result":{}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2,"total":5}}`,
	`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[]}}`,
	`{"id":3,"jsonrpc":"2.0","result":null}`,
	`{"jsonrpc":"2.0","id":null,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}`,
	`{"jsonrpc":"2.0","id":1.5,"result":{}}`,
	`{"jsonrpc":"2.0","id":-0,"result":{}}`,
	`{"jsonrpc":"2.0","id":1e3,"result":{}}`,
	`{"jsonrpc":"2.0","id":123456789012345678,"result":{}}`,
	`{"jsonrpc":"2.0","id":true,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"result":{}}`,
	`{"jsonrpc":"2.0","Method":"x"}`,
	`{"jsonrpc":"2.0","method":"a\u0062"}`,
	`{"jsonrpc":"1.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","method":"x","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"params":{},"result":{}}`,
	` {"jsonrpc" : "2.0" , "id" : "é" , "result" : [ 1 , 2 ] } `,
	`{"jsonrpc":"2.0","id":1,"result":"\xff"}`,
	`[{"jsonrpc":"2.0","id":1,"result":{}}]`,
	`{"jsonrpc":"2.0","id":1,"result":{}}x`,
	`{"jsonrpc":"2.0","id":1,"result":` + deepJSON(70) + `}`,
	`{"jsonrpc":"2.0","id":1,"result":` + deepJSON(1001) + `}`,
}

func deepJSON(n int) string {
	return string(bytes.Repeat([]byte("["), n)) + string(bytes.Repeat([]byte("]"), n))
}

// TestDecodeMessageMatchesSDK: on every seed (the usual shapes, and the
// edges where a decoder could differ: escapes, numbers, duplicates, case,
// depth, invalid UTF-8), decodeMessage answers what jsonrpc.DecodeMessage
// answers, and the plain shapes take the fast way.
func TestDecodeMessageMatchesSDK(t *testing.T) {
	for _, s := range wireSeeds {
		compareDecode(t, []byte(s))
	}
	for _, s := range wireSeeds[:6] {
		if _, ok := decodePlain([]byte(s)); !ok {
			t.Errorf("%s: not decoded in place", s)
		}
	}
}

// FuzzDecodeMessageMatchesSDK is TestDecodeMessageMatchesSDK for any
// input.
func FuzzDecodeMessageMatchesSDK(f *testing.F) {
	for _, s := range wireSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		compareDecode(t, data)
	})
}

func compareDecode(t *testing.T, data []byte) {
	t.Helper()
	want := describe(jsonrpc.DecodeMessage(bytes.Clone(data)))
	frame := bytes.Clone(data)
	msg, err := decodeMessage(frame)
	// The frame's bytes are the reader's to reuse: the message must not
	// point into them.
	for i := range frame {
		frame[i] = 'X'
	}
	if got := describe(msg, err); got != want {
		t.Errorf("%q:\n got %s\nwant %s", data, got, want)
	}
}

// BenchmarkDecodeMessage: a tools/call response as a stdio server sends
// it, decoded by the SDK and by decodeMessage.
func BenchmarkDecodeMessage(b *testing.B) {
	data := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"Echo: hello"}]}}`)
	for _, c := range []struct {
		name   string
		decode func([]byte) (jsonrpc.Message, error)
	}{{"sdk", jsonrpc.DecodeMessage}, {"agentd", decodeMessage}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.decode(bytes.Clone(data)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
