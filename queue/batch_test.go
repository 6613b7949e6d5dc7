package queue_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// newIDs returns n new job ids.
func newIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = push.NewJobID()
	}
	return ids
}

// pendingTasks returns the number of asynq tasks waiting in ns.
func pendingTasks(t *testing.T, rdb redis.UniversalClient, ns string) int {
	t.Helper()
	info, err := asynq.NewInspectorFromRedisClient(rdb).GetQueueInfo(ns)
	if err != nil {
		t.Fatal(err)
	}
	return info.Pending
}

// reserved returns the number of ids reserved for batches in ns.
func reserved(t *testing.T, rdb redis.UniversalClient, ns string) int64 {
	t.Helper()
	n, err := rdb.HLen(ctx, "herald:{"+ns+"}:batched").Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRedisQueueBatch: ids enqueued together are one task; enqueueing any
// of them again while it waits (the reconciler, a node starting) adds no
// task of its own; workers of two nodes handle each id once, and the
// reservations end with the batch.
func TestRedisQueueBatch(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		api := newQueue(t, rdb, 0, ns)
		ids := newIDs(20)
		if err := api.Enqueue(ctx, ids...); err != nil {
			t.Fatal(err)
		}
		if err := api.Enqueue(ctx, ids[3]); err != nil {
			t.Fatal(err)
		}
		if err := api.Enqueue(ctx, ids[1], ids[2]); err != nil {
			t.Fatal(err)
		}
		if n := pendingTasks(t, rdb, ns); n != 1 {
			t.Fatalf("%d tasks waiting, want 1 (one batch, no copies)", n)
		}
		if n, err := api.Len(ctx); n != len(ids) || err != nil {
			t.Fatalf("Len = %d, %v; want %d", n, err, len(ids))
		}
		if n := reserved(t, rdb, ns); n != int64(len(ids)) {
			t.Fatalf("%d ids reserved, want %d", n, len(ids))
		}
		rec := newRecorder(nil)
		for range 2 {
			if err := newQueue(t, rdb, 3, ns).Start(rec.handle); err != nil {
				t.Fatal(err)
			}
		}
		rec.handledOnce(t, ids)
		eventuallyZero(t, func() int64 { return reserved(t, rdb, ns) }, "reserved ids after the batch")
	})
}

// eventuallyZero waits until f returns 0.
func eventuallyZero(t *testing.T, f func() int64, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		n := f()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d, want 0", what, n)
		}
	}
}

// TestRedisQueueBatchHandsBack: an id of a batch that the engine defers,
// or whose handler fails, comes back as a task of its own, as often as
// needed, while the batch's other ids are handled once.
func TestRedisQueueBatchHandsBack(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		ids := newIDs(3)
		deferred, failing := ids[0], ids[1]
		q := newQueue(t, rdb, 4, ns)
		rec := newRecorder(func(ctx context.Context, id string, n int) error {
			switch {
			case id == deferred && n <= 2:
				return &push.DeferError{JobID: id, After: 30 * time.Millisecond}
			case id == failing && n == 1:
				return errors.New("the database is down")
			}
			if tid, _ := asynq.GetTaskID(ctx); n > 1 && tid != id {
				t.Errorf("id %s came back in task %s, want a task of its own", id, tid)
			}
			return nil
		})
		if err := q.Start(rec.handle); err != nil {
			t.Fatal(err)
		}
		if err := q.Enqueue(ctx, ids...); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, 3, 20*time.Second)
		time.Sleep(100 * time.Millisecond)
		for id, want := range map[string]int{deferred: 3, failing: 2, ids[2]: 1} {
			if n := rec.count(id); n != want {
				t.Errorf("id %s handled %d times, want %d", id, n, want)
			}
		}
		eventuallyZero(t, func() int64 { return reserved(t, rdb, ns) }, "reserved ids after the batch")
	})
}

// TestRedisQueueBatchRedelivered: a batch left active by a worker that
// died (its lease ran out) is not run as a batch again: each of its ids
// comes back as a task of its own, where the engine decides on it (a job
// it finds running becomes uncertain), and each is handled once.
func TestRedisQueueBatchRedelivered(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		api := newQueue(t, rdb, 0, ns)
		ids := newIDs(4)
		if err := api.Enqueue(ctx, ids...); err != nil {
			t.Fatal(err)
		}
		pending, err := rdb.LRange(ctx, "asynq:{"+ns+"}:pending", 0, -1).Result()
		if err != nil || len(pending) != 1 {
			t.Fatalf("pending tasks %v, %v; want one batch", pending, err)
		}
		abandon(t, rdb, ns, pending[0])
		rec := newRecorder(func(ctx context.Context, id string, _ int) error {
			if tid, _ := asynq.GetTaskID(ctx); tid != id {
				t.Errorf("id %s handled in task %s, want a task of its own", id, tid)
			}
			return nil
		})
		if err := newQueue(t, rdb, 2, ns).Start(rec.handle); err != nil {
			t.Fatal(err)
		}
		rec.handledOnce(t, ids)
	})
}

// TestRedisQueueReservationLapses: an id reserved for a batch that Redis
// does not hold (its enqueue failed after the reservation) is left alone
// while the reservation is young, and enqueued as a task of its own once
// it has lapsed.
func TestRedisQueueReservationLapses(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		q := newQueue(t, rdb, 0, ns)
		young, old := push.NewJobID(), push.NewJobID()
		hold := func(id string, at time.Time) {
			err := rdb.HSet(ctx, "herald:{"+ns+"}:batched", id, "batch-gone@"+strconv.FormatInt(at.UnixMilli(), 10)).Err()
			if err != nil {
				t.Fatal(err)
			}
		}
		hold(young, time.Now())
		hold(old, time.Now().Add(-2*time.Minute))
		if err := q.Enqueue(ctx, young); err != nil {
			t.Fatal(err)
		}
		if err := q.Enqueue(ctx, old); err != nil {
			t.Fatal(err)
		}
		insp := asynq.NewInspectorFromRedisClient(rdb)
		if _, err := insp.GetTaskInfo(ns, young); !errors.Is(err, asynq.ErrTaskNotFound) {
			t.Fatalf("id of a young reservation: %v, want no task of its own yet", err)
		}
		if info, err := insp.GetTaskInfo(ns, old); err != nil || info.State != asynq.TaskStatePending {
			t.Fatalf("id of a lapsed reservation: %+v, %v; want a pending task of its own", info, err)
		}
		if n, err := rdb.HExists(ctx, "herald:{"+ns+"}:batched", old).Result(); n || err != nil {
			t.Fatalf("lapsed reservation still held (%v)", err)
		}
	})
}

// gate is a go-redis hook that holds the first command until opened.
type gate struct {
	once    sync.Once
	arrived chan struct{} // closed when the first command waits
	open    chan struct{}
}

func newGate() *gate { return &gate{arrived: make(chan struct{}), open: make(chan struct{})} }

func (g *gate) DialHook(next redis.DialHook) redis.DialHook { return next }

func (g *gate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		first := false
		g.once.Do(func() { first = true })
		if first {
			close(g.arrived)
			<-g.open
		}
		return next(ctx, cmd)
	}
}

func (g *gate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

var _ redis.Hook = (*gate)(nil)

// TestRedisQueueCoalescesOverlappingCalls: Enqueue calls made while a
// write to Redis is under way (the requests of one group commit, woken
// together) go out together in the next write, as one task.
func TestRedisQueueCoalescesOverlappingCalls(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		g := newGate()
		rdb.AddHook(g)
		q := newQueue(t, rdb, 0, ns)
		first, rest := push.NewJobID(), newIDs(5)
		errs := make(chan error, len(rest)+1)
		go func() { errs <- q.Enqueue(ctx, first) }()
		<-g.arrived // the first write is under way, held
		for _, id := range rest {
			go func() { errs <- q.Enqueue(ctx, id) }()
		}
		time.Sleep(100 * time.Millisecond) // the calls reach the queue and wait
		close(g.open)
		for range len(rest) + 1 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if n := pendingTasks(t, rdb, ns); n != 2 {
			t.Fatalf("%d tasks waiting, want 2 (the first id alone, the five that waited together)", n)
		}
		if n, err := q.Len(ctx); n != 6 || err != nil {
			t.Fatalf("Len = %d, %v; want 6", n, err)
		}
	})
}
