package queue

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// BenchmarkMemoryQueue measures an id's trip through the in-process queue
// to a worker: with few workers and with thousands (one per target of
// many batch requests in flight), ids enqueued one by one or 50 at a time
// (a batch request's jobs).
func BenchmarkMemoryQueue(b *testing.B) {
	for _, workers := range []int{8, 2048} {
		for _, per := range []int{1, 50} {
			b.Run(fmt.Sprintf("workers=%d/ids=%d", workers, per), func(b *testing.B) {
				q := NewMemory(MemoryOptions{Workers: workers})
				var wg sync.WaitGroup
				_ = q.Start(func(ctx context.Context, id string) error { wg.Done(); return nil })
				ids := make([]string, b.N)
				for i := range ids {
					ids[i] = strconv.Itoa(i)
				}
				b.ReportAllocs()
				b.ResetTimer()
				wg.Add(b.N)
				for i := 0; i < len(ids); i += per {
					_ = q.Enqueue(context.Background(), ids[i:min(i+per, len(ids))]...)
				}
				wg.Wait()
				b.StopTimer()
				_ = q.Stop(context.Background())
			})
		}
	}
}
