package push

import "sync"

// memo is a bounded map, safe for concurrent use, of what the engine
// remembers instead of reading the store again. Everything in it can be
// read again, so when an entry would pass the limit it starts afresh.
type memo[K comparable, V any] struct {
	mu      sync.RWMutex
	entries map[K]V
	limit   int
	size    func(V) int // an entry's share of limit; nil: 1
	used    int
}

func (m *memo[K, V]) init(limit int, size func(V) int) {
	m.entries = make(map[K]V)
	m.limit = limit
	m.size = size
}

func (m *memo[K, V]) sizeOf(v V) int {
	if m.size == nil {
		return 1
	}
	return m.size(v)
}

func (m *memo[K, V]) get(k K) (V, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.entries[k]
	return v, ok
}

func (m *memo[K, V]) put(k K, v V) {
	n := m.sizeOf(v)
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.entries[k]; ok {
		m.used -= m.sizeOf(old)
	}
	if m.used+n > m.limit {
		clear(m.entries)
		m.used = 0
	}
	m.entries[k] = v
	m.used += n
}

// load returns k's entry, or reads it and remembers it.
func (m *memo[K, V]) load(k K, read func() (V, error)) (V, error) {
	if v, ok := m.get(k); ok {
		return v, nil
	}
	v, err := read()
	if err == nil {
		m.put(k, v)
	}
	return v, err
}

// forget drops every entry.
func (m *memo[K, V]) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.entries)
	m.used = 0
}
