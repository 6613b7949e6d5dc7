package push

import "sync"

// memo is a bounded map, safe for concurrent use, of what the engine
// remembers instead of reading the store again. Everything in it can be
// read again, so when an entry would pass the limit it starts afresh.
//
// A read that overlaps a forget, or a change (hold to release), is not
// remembered: what it read may be what the change replaced.
type memo[K comparable, V any] struct {
	mu      sync.RWMutex
	entries map[K]V
	limit   int
	size    func(V) int // an entry's share of limit; nil: 1
	used    int
	gen     uint64 // moves at every forget
	held    int    // changes being written: nothing is remembered
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
	v, ok, _ := m.getAt(k)
	return v, ok
}

// getAt returns k's entry and the generation it was looked up in.
func (m *memo[K, V]) getAt(k K) (V, bool, uint64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v, ok := m.entries[k]
	return v, ok, m.gen
}

// put remembers k's entry, unless a change is being written.
func (m *memo[K, V]) put(k K, v V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.putLocked(k, v)
}

// putAt remembers k's entry read in generation gen, unless a forget came
// since or a change is being written.
func (m *memo[K, V]) putAt(k K, v V, gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gen == m.gen {
		m.putLocked(k, v)
	}
}

func (m *memo[K, V]) putLocked(k K, v V) {
	if m.held > 0 {
		return
	}
	if old, ok := m.entries[k]; ok {
		m.used -= m.sizeOf(old)
	}
	n := m.sizeOf(v)
	if m.used+n > m.limit {
		clear(m.entries)
		m.used = 0
	}
	m.entries[k] = v
	m.used += n
}

// load returns k's entry, or reads it and remembers it.
func (m *memo[K, V]) load(k K, read func() (V, error)) (V, error) {
	v, ok, gen := m.getAt(k)
	if ok {
		return v, nil
	}
	v, err := read()
	if err == nil {
		m.putAt(k, v, gen)
	}
	return v, err
}

// forget drops every entry, and what reads under way would remember.
func (m *memo[K, V]) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetLocked()
}

func (m *memo[K, V]) forgetLocked() {
	clear(m.entries)
	m.used = 0
	m.gen++
}

// hold forgets every entry and remembers nothing until release: a change
// is being written, and a read meanwhile may see it or not.
func (m *memo[K, V]) hold() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held++
	m.forgetLocked()
}

// release ends a hold: the change is written (or failed), and what reads
// under it found is forgotten.
func (m *memo[K, V]) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.held--
	m.forgetLocked()
}
