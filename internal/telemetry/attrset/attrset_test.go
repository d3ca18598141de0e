package attrset

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// TestCache: a key's options are built once and hold its set.
func TestCache(t *testing.T) {
	built := 0
	c := NewCache(func(k [2]string) attribute.Set {
		built++
		return attribute.NewSet(attribute.String("a", k[0]), attribute.String("b", k[1]))
	})
	x := c.Get([2]string{"1", "2"})
	if y := c.Get([2]string{"1", "2"}); y != x || built != 1 {
		t.Fatalf("built %d times", built)
	}
	if v, _ := x.Set.Value("b"); v.AsString() != "2" || len(x.Add) != 1 || len(x.Record) != 1 {
		t.Errorf("options = %+v", x)
	}
	if allocs := testing.AllocsPerRun(100, func() { c.Get([2]string{"1", "2"}) }); allocs != 0 {
		t.Errorf("Get of a cached key allocates %v times", allocs)
	}
}
