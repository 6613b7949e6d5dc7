package queue

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/push"
)

func TestMemoryDeliversInOrderOnce(t *testing.T) {
	q := NewMemory(MemoryOptions{Workers: 1})
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	if err := q.Enqueue(context.Background(), "a", "b", "a", "c"); err != nil {
		t.Fatal(err)
	}
	if q.Len() != 3 {
		t.Fatalf("Len = %d, want 3 (a waiting id is not added twice)", q.Len())
	}
	_ = q.Start(func(ctx context.Context, id string) error {
		mu.Lock()
		got = append(got, id)
		if len(got) == 3 {
			close(done)
		}
		mu.Unlock()
		return nil
	})
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("ids not delivered")
	}
	if err := q.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("delivered %v, want [a b c]", got)
	}
	if err := q.Enqueue(context.Background(), "d"); push.KindOf(err) != push.Unavailable {
		t.Fatalf("Enqueue after Stop = %v, want Unavailable", err)
	}
}

func TestMemoryConcurrency(t *testing.T) {
	q := NewMemory(MemoryOptions{Workers: 4})
	var running, peak atomic.Int32
	var wg sync.WaitGroup
	wg.Add(20)
	_ = q.Start(func(ctx context.Context, id string) error {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		running.Add(-1)
		wg.Done()
		return nil
	})
	for i := 0; i < 20; i++ {
		_ = q.Enqueue(context.Background(), string(rune('a'+i)))
	}
	wg.Wait()
	_ = q.Stop(context.Background())
	if peak.Load() != 4 {
		t.Fatalf("peak concurrency %d, want 4", peak.Load())
	}
}

func TestMemoryRetriesFailuresAndDefers(t *testing.T) {
	q := NewMemory(MemoryOptions{Workers: 2, RetryDelay: 10 * time.Millisecond})
	var calls sync.Map
	done := make(chan string, 4)
	_ = q.Start(func(ctx context.Context, id string) error {
		n, _ := calls.LoadOrStore(id, new(atomic.Int32))
		c := n.(*atomic.Int32).Add(1)
		switch {
		case id == "fails" && c == 1:
			return errors.New("database busy")
		case id == "panics" && c == 1:
			panic("bug")
		case id == "deferred" && c == 1:
			return &push.DeferError{JobID: id, After: 30 * time.Millisecond}
		}
		done <- id
		return nil
	})
	start := time.Now()
	_ = q.Enqueue(context.Background(), "fails", "panics", "deferred", "ok")
	seen := map[string]bool{}
	for len(seen) < 4 {
		select {
		case id := <-done:
			seen[id] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("only %v finished", seen)
		}
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("the deferred id came back before its delay")
	}
	_ = q.Stop(context.Background())
}

func TestMemoryStopWaitsThenCancels(t *testing.T) {
	q := NewMemory(MemoryOptions{Workers: 1})
	started := make(chan struct{})
	var canceled atomic.Bool
	_ = q.Start(func(ctx context.Context, id string) error {
		close(started)
		<-ctx.Done()
		canceled.Store(true)
		return ctx.Err()
	})
	_ = q.Enqueue(context.Background(), "long", "waiting")
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := q.Stop(ctx)
	if err == nil || !canceled.Load() {
		t.Fatalf("Stop = %v, canceled = %v; want a drain-timeout error after canceling the handler", err, canceled.Load())
	}
	if q.Len() != 1 {
		t.Fatalf("%d ids left waiting, want 1 (it stays queued in the store)", q.Len())
	}
}
