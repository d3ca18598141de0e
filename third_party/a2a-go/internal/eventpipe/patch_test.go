// agentd patch tests: see third_party/a2a-go/PATCH.md (change 3).

package eventpipe

import "testing"

func TestDefaultBufferIsSmall(t *testing.T) {
	p := NewLocal()
	if n := cap(p.Writer.(*pipeWriter).events); n != 16 {
		t.Errorf("pipe capacity %d, want 16", n)
	}
}
