package httpapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDecode: a request body is one JSON object of known fields; what is
// wrong is named, and a body over its limit stays a MaxBytesError (413).
func TestDecode(t *testing.T) {
	type msg struct {
		Message string `json:"message"`
		Stream  bool   `json:"stream"`
	}
	for _, tc := range []struct {
		name, body string
		limit      int64
		want       msg
		code       string // "" means accepted
		field      string
		message    string // a part of the error's message
		tooLarge   bool
	}{
		{name: "object", body: `{"message":"hi","stream":true}`, want: msg{"hi", true}},
		{name: "trailing whitespace", body: "{\"message\":\"hi\"}\n\t \r\n", want: msg{Message: "hi"}},
		{name: "two values", body: `{"message":"hi"}{"message":"again"}`, code: "invalid_json", message: "more than one JSON value"},
		{name: "trailing garbage", body: `{"message":"hi"} x`, code: "invalid_json", message: "more than one JSON value"},
		{name: "unknown field", body: `{"mesage":"hi"}`, code: "invalid_json", field: "mesage"},
		{name: "wrong type", body: `{"stream":"yes"}`, code: "invalid_json", field: "stream", message: "must be"},
		{name: "cut off", body: `{"message":"hi"`, code: "invalid_json"},
		{name: "over the limit", body: `{"message":"` + strings.Repeat("x", 100) + `"}`, limit: 50, tooLarge: true},
		{name: "over the limit after the value", body: `{"message":"hi"}` + strings.Repeat(" ", 100), limit: 50, tooLarge: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/agents/a/messages", strings.NewReader(tc.body))
			if tc.limit > 0 {
				r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, tc.limit)
			}
			var got msg
			err := decode(r, &got)
			var mbe *http.MaxBytesError
			if tooLarge := errors.As(err, &mbe); tooLarge != tc.tooLarge {
				t.Fatalf("decode: %v, want too large %v", err, tc.tooLarge)
			}
			if tc.tooLarge {
				return
			}
			if tc.code == "" {
				if err != nil || got != tc.want {
					t.Fatalf("decode = %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Code != tc.code || e.Field != tc.field || !strings.Contains(e.Message, tc.message) {
				t.Fatalf("decode: %#v, want %s field %q with %q", err, tc.code, tc.field, tc.message)
			}
		})
	}
}
