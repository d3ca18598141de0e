// Package attrset caches OpenTelemetry measurement options by a
// comparable key, so recording a measurement with a few bounded labels
// (tool, decision, outcome) builds its attribute set and option slices
// once instead of allocating them on every call. It imports the OTel API
// only, so the core may use it.
package attrset

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Options are the measurement options of one attribute set, built once:
// pass Add to a counter's Add and Record to a histogram's Record. (The SDK
// records whatever the context's state, so a cancelled call's context is
// fine to record with; no context.WithoutCancel, which allocates.)
type Options struct {
	Set    attribute.Set
	Add    []metric.AddOption
	Record []metric.RecordOption
}

// Cache maps keys to the options of the attribute sets its build
// function makes for them. Keys must come from a bounded set (config
// names, enum values): the cache never forgets.
type Cache[K comparable] struct {
	build func(K) attribute.Set

	mu sync.RWMutex
	m  map[K]*Options
}

// NewCache returns a cache that builds missing sets with build.
func NewCache[K comparable](build func(K) attribute.Set) *Cache[K] {
	return &Cache[K]{build: build, m: map[K]*Options{}}
}

// Get returns k's options, building them on first use.
func (c *Cache[K]) Get(k K) *Options {
	c.mu.RLock()
	o, ok := c.m[k]
	c.mu.RUnlock()
	if ok {
		return o
	}
	set := c.build(k)
	opt := metric.WithAttributeSet(set)
	o = &Options{Set: set, Add: []metric.AddOption{opt}, Record: []metric.RecordOption{opt}}
	c.mu.Lock()
	c.m[k] = o
	c.mu.Unlock()
	return o
}
