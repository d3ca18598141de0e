package mcpserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	id    string
	name  string
	data  []byte
	retry time.Duration
}

// errEventTooLarge ends a stream whose event exceeds the reader's limit.
var errEventTooLarge = errors.New("server-sent event too large")

// sseReader decodes a text/event-stream body (the subset MCP uses: data,
// event, id and retry fields, comments, LF or CRLF line endings).
type sseReader struct {
	br    *bufio.Reader
	limit int
}

func newSSEReader(r io.Reader, limit int) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, 32<<10), limit: limit}
}

// next returns the next event that set any field; io.EOF at the end of the
// stream (an unterminated last event is dropped, as the spec says).
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data bytes.Buffer
	seen, hasData := false, false
	size := 0
	for {
		line, err := s.readLine(&size)
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if !seen {
				continue
			}
			ev.data = data.Bytes()
			return ev, nil
		}
		if line[0] == ':' {
			continue // comment
		}
		field, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		seen = true
		switch string(field) {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			hasData = true
			data.Write(value)
		case "event":
			ev.name = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				ev.id = string(value)
			}
		case "retry":
			if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
				ev.retry = time.Duration(ms) * time.Millisecond
			}
		}
	}
}

// readLine returns one line without its ending; size counts the bytes of
// the current event against the limit.
func (s *sseReader) readLine(size *int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.br.ReadSlice('\n')
		*size += len(chunk)
		if *size > s.limit {
			return nil, errEventTooLarge
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte{'\r'})
		if len(line) == 0 {
			*size = 0 // an event ends: the next one starts its own count
		}
		return line, nil
	}
}
