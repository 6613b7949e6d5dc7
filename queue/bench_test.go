package queue

import (
	"context"
	"strconv"
	"sync"
	"testing"
)

// BenchmarkMemoryQueue measures an id's trip through the in-process queue
// to one of 8 workers.
func BenchmarkMemoryQueue(b *testing.B) {
	q := NewMemory(MemoryOptions{Workers: 8})
	var wg sync.WaitGroup
	_ = q.Start(func(ctx context.Context, id string) error { wg.Done(); return nil })
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	wg.Add(b.N)
	for _, id := range ids {
		_ = q.Enqueue(context.Background(), id)
	}
	wg.Wait()
	b.StopTimer()
	_ = q.Stop(context.Background())
}
