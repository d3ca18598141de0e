package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
)

// ReadBody reads a body that holds one message (an HTTP request or
// response) into buf, up to limit bytes. A longer body is read no further
// than limit+1 bytes, or, when its declared length (-1 if unknown) is
// already over the limit, than its head: the error is then a
// *TooLargeError without a Tail. Other errors are the reader's.
func ReadBody(buf *bytes.Buffer, r io.Reader, declared, limit int64) error {
	if declared > limit {
		head := make([]byte, HeadMax)
		n, _ := io.ReadFull(r, head)
		return &TooLargeError{Size: declared, Limit: limit, Head: head[:n]}
	}
	_, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if b := buf.Bytes(); int64(len(b)) > limit {
		return &TooLargeError{Size: int64(len(b)), Limit: limit, Head: bytes.Clone(b[:min(len(b), HeadMax)])}
	}
	return err
}

// ErrorResponse encodes a JSON-RPC error response; a nil id is null.
func ErrorResponse(id json.RawMessage, code int64, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	text, _ := json.Marshal(msg) // a string always encodes
	b := make([]byte, 0, 48+len(id)+len(text))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, code, 10)
	b = append(b, `,"message":`...)
	b = append(b, text...)
	return append(b, "}}"...)
}
