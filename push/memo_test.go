package push

import (
	"errors"
	"testing"
)

// TestMemoBound: a memo holds entries up to its limit, counted by their
// size, and starts afresh when one more would pass it; replacing an entry
// counts its new size only.
func TestMemoBound(t *testing.T) {
	var m memo[string, []int]
	m.init(5, func(v []int) int { return len(v) })
	m.put("a", []int{1, 2})
	m.put("b", []int{1, 2})
	m.put("a", []int{1, 2, 3}) // 3 + 2: full, not over
	if _, ok := m.get("b"); !ok {
		t.Fatal("b dropped below the limit")
	}
	if v, _ := m.get("a"); len(v) != 3 {
		t.Fatalf("a = %v after its replacement, want 3 items", v)
	}
	m.put("c", []int{1})
	if _, ok := m.get("a"); ok {
		t.Fatal("a kept: the memo passed its limit instead of starting afresh")
	}
	if _, ok := m.get("c"); !ok {
		t.Fatal("c not remembered")
	}
	m.forget()
	if _, ok := m.get("c"); ok {
		t.Fatal("c remembered after forget")
	}
}

// TestMemoLoad: load reads a missing entry once and remembers it; a failed
// read is not remembered.
func TestMemoLoad(t *testing.T) {
	var m memo[int, string]
	m.init(10, nil)
	reads := 0
	read := func(v string, err error) func() (string, error) {
		return func() (string, error) { reads++; return v, err }
	}
	if _, err := m.load(1, read("", errors.New("down"))); err == nil {
		t.Fatal("a failed read returned no error")
	}
	for i := 0; i < 2; i++ {
		if v, err := m.load(1, read("one", nil)); err != nil || v != "one" {
			t.Fatalf("load = %q, %v", v, err)
		}
	}
	if reads != 2 {
		t.Fatalf("%d reads, want 2 (the failed one, then one remembered)", reads)
	}
}
