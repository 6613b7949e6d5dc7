package testkit_test

import (
	"context"
	"testing"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestQueueLen: on both backends the Herald's queue tells how many ids
// wait for a worker, so that tests can check that nothing was queued.
func TestQueueLen(t *testing.T) {
	for _, b := range []testkit.Backend{testkit.SQLite, testkit.ScaleOut} {
		t.Run(string(b), func(t *testing.T) {
			h := testkit.New(t, testkit.WithBackend(b), testkit.WithoutStart())
			q, ok := h.Queue.(interface{ Len() int })
			if !ok {
				t.Fatalf("the %T queue has no Len", h.Queue)
			}
			if n := q.Len(); n != 0 {
				t.Fatalf("Len = %d before anything was enqueued", n)
			}
			if err := h.Queue.Enqueue(context.Background(), push.NewJobID(), push.NewJobID()); err != nil {
				t.Fatal(err)
			}
			if n := q.Len(); n != 2 {
				t.Fatalf("Len = %d, want 2", n)
			}
		})
	}
}
