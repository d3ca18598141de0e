// Package attrset caches OpenTelemetry attribute sets by a comparable
// key, so recording a measurement with a few bounded labels (tool,
// decision, outcome) builds its set once instead of on every call. It
// imports the OTel attribute API only, so the core may use it.
package attrset

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
)

// Cache maps keys to the attribute sets New builds for them. The zero
// value is not usable; build one with NewCache. Keys must come from a
// bounded set (config names, enum values): the cache never forgets.
type Cache[K comparable] struct {
	build func(K) attribute.Set

	mu sync.RWMutex
	m  map[K]attribute.Set
}

// NewCache returns a cache that builds missing sets with build.
func NewCache[K comparable](build func(K) attribute.Set) *Cache[K] {
	return &Cache[K]{build: build, m: map[K]attribute.Set{}}
}

// Get returns k's set, building it on first use.
func (c *Cache[K]) Get(k K) attribute.Set {
	c.mu.RLock()
	s, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return s
	}
	s = c.build(k)
	c.mu.Lock()
	c.m[k] = s
	c.mu.Unlock()
	return s
}
