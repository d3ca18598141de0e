// This test is agentd's: it checks agentd's patch to this copy of go-sdk.

package json

import (
	"bytes"
	"reflect"
	"testing"
)

// decodeV180 is Unmarshal as go-sdk v1.8.0 has it, before agentd's patch.
func decodeV180(data []byte, v any) error {
	if err := checkMaxDepth(data, defaultMaxDepth); err != nil {
		return err
	}
	return NewDecoder(bytes.NewReader(data)).Decode(v)
}

type patchProbe struct {
	Name   string         `json:"name"`
	ID     any            `json:"id"`
	Params map[string]any `json:"params,omitempty"`
	Meta   struct {
		Token string `json:"progressToken"`
	} `json:"_meta"`
}

// FuzzUnmarshalAsBefore checks that the patched Unmarshal decodes what
// v1.8.0's did, into the same values, and fails where it failed.
func FuzzUnmarshalAsBefore(f *testing.F) {
	for _, s := range []string{``, ` `, `{}`, `{"name":"x","NAME":"y"}`, `{"Name":"case"}`, `{"id":1,"params":{"a":[1,2]}} trailing`,
		`{"_meta":{"progressToken":"t"}}`, `[1,2]`, `"s"`, `{"id":`, `{"name":1}`, "\n{\"id\":\"7\"}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var a, b patchProbe
		errA, errB := Unmarshal(data, &a), decodeV180(data, &b)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%q: patched error %v, v1.8.0 error %v", data, errA, errB)
		}
		if errA == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: patched %+v, v1.8.0 %+v", data, a, b)
		}
		var ma, mb any
		errA, errB = Unmarshal(data, &ma), decodeV180(data, &mb)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%q into any: patched error %v, v1.8.0 error %v", data, errA, errB)
		}
		if errA == nil && !reflect.DeepEqual(ma, mb) {
			t.Fatalf("%q into any: patched %#v, v1.8.0 %#v", data, ma, mb)
		}
	})
}
