package queue_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

var ctx = context.Background()

// redisBackend is one Redis the queue tests run on: miniredis in the test
// process (always), and the real server of HERALD_TEST_REDIS.
type redisBackend struct {
	name    string
	connect func(t *testing.T) redis.UniversalClient
}

func redisBackends() []redisBackend {
	return []redisBackend{
		{"miniredis", func(t *testing.T) redis.UniversalClient {
			mr := miniredis.RunT(t)
			return client(t, &redis.Options{Addr: mr.Addr()})
		}},
		{"redis", func(t *testing.T) redis.UniversalClient {
			opt, err := redis.ParseURL(testkit.RedisURL(t))
			if err != nil {
				t.Fatal(err)
			}
			return client(t, opt)
		}},
	}
}

func client(t *testing.T, opt *redis.Options) redis.UniversalClient {
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// eachRedis runs test once per Redis backend.
func eachRedis(t *testing.T, test func(t *testing.T, rdb redis.UniversalClient)) {
	for _, b := range redisBackends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			test(t, b.connect(t))
		})
	}
}

// newQueue returns a queue in a namespace of its own, with short intervals,
// stopped when the test ends.
func newQueue(t *testing.T, rdb redis.UniversalClient, workers int, ns string) *queue.Redis {
	q := queue.NewRedis(rdb, queue.RedisOptions{
		Namespace: ns, Workers: workers, PollInterval: 10 * time.Millisecond,
		ForwardInterval: 20 * time.Millisecond, RetryDelay: 20 * time.Millisecond, MaxRetry: 3,
		Retention: time.Hour, // the tests read the finished tasks' states
	})
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = q.Stop(sctx)
	})
	return q
}

// keepNothing is a node that keeps no finished task (as by default), so
// that a run leaves nothing in Redis.
func keepNothing(t *testing.T, rdb redis.UniversalClient, ns string, workers int, poll, lease time.Duration) *queue.Redis {
	q := queue.NewRedis(rdb, queue.RedisOptions{Namespace: ns, Workers: workers, PollInterval: poll,
		ForwardInterval: 20 * time.Millisecond, RetryDelay: 20 * time.Millisecond, LocalLease: lease})
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = q.Stop(sctx)
	})
	return q
}

// recorder is a handler that records the ids it is handed.
type recorder struct {
	mu   sync.Mutex
	seen map[string]int
	ch   chan string
	fn   func(ctx context.Context, id string, n int) error // optional behaviour per call
}

func newRecorder(fn func(ctx context.Context, id string, n int) error) *recorder {
	return &recorder{seen: make(map[string]int), ch: make(chan string, 1000), fn: fn}
}

func (r *recorder) handle(ctx context.Context, id string) error {
	r.mu.Lock()
	r.seen[id]++
	n := r.seen[id]
	r.mu.Unlock()
	var err error
	if r.fn != nil {
		err = r.fn(ctx, id, n)
	}
	if err == nil {
		r.ch <- id
	}
	return err
}

func (r *recorder) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen[id]
}

// runOne starts q with a recorder of fn and enqueues one new id.
func runOne(t *testing.T, q *queue.Redis, fn func(ctx context.Context, id string, n int) error) (*recorder, string) {
	t.Helper()
	rec := newRecorder(fn)
	if err := q.Start(rec.handle); err != nil {
		t.Fatal(err)
	}
	id := push.NewJobID()
	if err := q.Enqueue(ctx, id); err != nil {
		t.Fatal(err)
	}
	return rec, id
}

// wait returns the ids handled successfully until n have been, or fails.
func (r *recorder) wait(t *testing.T, n int, timeout time.Duration) []string {
	t.Helper()
	var got []string
	deadline := time.After(timeout)
	for len(got) < n {
		select {
		case id := <-r.ch:
			got = append(got, id)
		case <-deadline:
			t.Fatalf("%d of %d ids handled within %s: %v", len(got), n, timeout, got)
		}
	}
	sort.Strings(got)
	return got
}

// handledOnce waits until each of ids was handled successfully and
// checks that none was handled more than once.
func (r *recorder) handledOnce(t *testing.T, ids []string) {
	t.Helper()
	got := r.wait(t, len(ids), 20*time.Second)
	want := slices.Sorted(slices.Values(ids))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("handled ids (-want +got):\n%s", diff)
	}
	time.Sleep(100 * time.Millisecond) // a second handling, if one were under way, arrives
	for _, id := range ids {
		if n := r.count(id); n != 1 {
			t.Fatalf("id %s handled %d times, want 1", id, n)
		}
	}
}

// waitState polls the task until it is in state want, and returns it.
func waitState(t *testing.T, rdb redis.UniversalClient, ns, id string, want asynq.TaskState) *asynq.TaskInfo {
	t.Helper()
	insp := asynq.NewInspectorFromRedisClient(rdb)
	for deadline := time.Now().Add(20 * time.Second); ; {
		info, err := insp.GetTaskInfo(ns, id)
		if err == nil && info.State == want {
			return info
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: %+v, %v; want %s", id, info, err, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRedisQueueDeliversOnceAcrossNodes(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		api := newQueue(t, rdb, 0, ns) // enqueues only
		rec := newRecorder(nil)
		if err := api.Start(func(context.Context, string) error { return errors.New("an API node never works a job") }); err != nil {
			t.Fatal(err)
		}
		var want []string
		for i := 0; i < 30; i++ {
			want = append(want, push.NewJobID())
		}
		// Twice, and once more in a batch: the TaskID makes the copies one.
		for _, id := range want {
			if err := api.Enqueue(ctx, id, id); err != nil {
				t.Fatal(err)
			}
		}
		if err := api.Enqueue(ctx, want...); err != nil {
			t.Fatal(err)
		}
		// Two worker nodes share the work.
		for i := 0; i < 2; i++ {
			if err := newQueue(t, rdb, 3, ns).Start(rec.handle); err != nil {
				t.Fatal(err)
			}
		}
		rec.handledOnce(t, want)
		// A finished id is kept (retention) and is not lost: enqueueing it
		// again, as the reconciler does for a job still queued in the
		// store, hands it to a worker again.
		waitState(t, rdb, ns, want[0], asynq.TaskStateCompleted)
		if err := api.Enqueue(ctx, want[0]); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, 1, 10*time.Second)
		if n := rec.count(want[0]); n != 2 {
			t.Fatalf("re-enqueued finished id handled %d times in all, want 2", n)
		}
	})
}

// TestRedisQueueDeferral: a handler that defers (pacing) gets the id back,
// as often as it asks, without using up the retries. (asynq schedules
// retries to the second, so a short deferral may come back early; the
// engine then asks the pacer again and defers anew.)
func TestRedisQueueDeferral(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		q := newQueue(t, rdb, 2, ns) // MaxRetry 3
		rec, id := runOne(t, q, func(_ context.Context, id string, n int) error {
			if n <= 8 {
				return &push.DeferError{JobID: id, After: 30 * time.Millisecond}
			}
			return nil
		})
		rec.wait(t, 1, 20*time.Second)
		if n := rec.count(id); n != 9 {
			t.Fatalf("handled %d times, want 9 (8 deferrals, then done)", n)
		}
		if info := waitState(t, rdb, ns, id, asynq.TaskStateCompleted); info.Retried != 0 {
			t.Fatalf("task after 8 deferrals: %+v; want no retry used", info)
		}
	})
}

// TestRedisQueueRetriesFailures: a handler error (say, the database is
// down) hands the id back after a backoff; the job is not lost.
func TestRedisQueueRetriesFailures(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		rec, id := runOne(t, newQueue(t, rdb, 1, testkit.RandomName("q_")), func(_ context.Context, _ string, n int) error {
			if n < 3 {
				return push.Errorf(push.Unavailable, "database_unavailable", "down")
			}
			return nil
		})
		rec.wait(t, 1, 20*time.Second)
		if n := rec.count(id); n != 3 {
			t.Fatalf("handled %d times, want 3", n)
		}
	})
}

// TestRedisQueueArchivedIsEnqueuedAgain: a task whose retries ran out is
// archived under its id; enqueueing the id again (the reconciler, for a job
// still queued in the store) replaces it.
func TestRedisQueueArchivedIsEnqueuedAgain(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		// Enqueued by a node that works no jobs, so that every run is a
		// run of the task (a node's own first run would be one more).
		api := newQueue(t, rdb, 0, ns)
		rec := newRecorder(func(_ context.Context, _ string, n int) error {
			if n <= 4 {
				return errors.New("failing")
			}
			return nil
		})
		if err := newQueue(t, rdb, 1, ns).Start(rec.handle); err != nil { // MaxRetry 3: four runs
			t.Fatal(err)
		}
		id := push.NewJobID()
		if err := api.Enqueue(ctx, id); err != nil {
			t.Fatal(err)
		}
		waitState(t, rdb, ns, id, asynq.TaskStateArchived)
		if err := api.Enqueue(ctx, id); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, 1, 10*time.Second)
		if n := rec.count(id); n != 5 {
			t.Fatalf("handled %d times, want 5", n)
		}
	})
}

// abandon does to the namespace's only pending task what asynq's dequeue
// does, as a worker that then dies: the task is active with a lease that
// ran out two minutes ago.
func abandon(t *testing.T, rdb redis.UniversalClient, ns, id string) {
	t.Helper()
	prefix := "asynq:{" + ns + "}:"
	pipe := rdb.TxPipeline()
	pipe.RPopLPush(ctx, prefix+"pending", prefix+"active")
	pipe.HSet(ctx, prefix+"t:"+id, "state", "active")
	pipe.HDel(ctx, prefix+"t:"+id, "pending_since")
	pipe.ZAdd(ctx, prefix+"lease", redis.Z{Score: float64(time.Now().Add(-2 * time.Minute).Unix()), Member: id})
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestRedisQueueDeadWorkerRedelivered: a task left active by a worker that
// died (its lease ran out) is handed to a live worker soon after asynq's
// recoverer finds it; the engine then makes its job uncertain (proved
// across processes in cmd/herald).
func TestRedisQueueDeadWorkerRedelivered(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		api := newQueue(t, rdb, 0, ns)
		id := push.NewJobID()
		if err := api.Enqueue(ctx, id); err != nil {
			t.Fatal(err)
		}
		abandon(t, rdb, ns, id)
		var retried int
		rec := newRecorder(func(ctx context.Context, _ string, _ int) error {
			retried, _ = asynq.GetRetryCount(ctx)
			return nil
		})
		if err := newQueue(t, rdb, 1, ns).Start(rec.handle); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, 1, 10*time.Second)
		if retried != 1 {
			t.Fatalf("redelivered with retry count %d, want 1 (lease expired)", retried)
		}
	})
}

// TestRedisQueueStop: Stop lets a running handler finish within its
// context, then cancels it; ids not started stay in Redis for other nodes.
func TestRedisQueueStop(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		started := make(chan string, 10)
		canceled := make(chan string, 10)
		q := newQueue(t, rdb, 1, ns)
		err := q.Start(func(ctx context.Context, id string) error {
			started <- id
			<-ctx.Done()
			canceled <- id
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		a, b := push.NewJobID(), push.NewJobID()
		if err := q.Enqueue(ctx, a, b); err != nil {
			t.Fatal(err)
		}
		first := <-started
		sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		if err := q.Stop(sctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Stop with a handler that runs past the timeout = %v", err)
		}
		if el := time.Since(t0); el < 200*time.Millisecond {
			t.Fatalf("Stop returned after %s, before its timeout", el)
		}
		if got := <-canceled; got != first {
			t.Fatalf("canceled %s, want %s", got, first)
		}
		// The other id was never started here: another node works it.
		other := a
		if first == a {
			other = b
		}
		rec := newRecorder(nil)
		if err := newQueue(t, rdb, 1, ns).Start(rec.handle); err != nil {
			t.Fatal(err)
		}
		got := rec.wait(t, 1, 10*time.Second)
		if got[0] != other {
			t.Fatalf("the next node got %v, want %s", got, other)
		}
	})
}

// TestRedisQueueUnavailable: with Redis unreachable, Enqueue fails as
// Unavailable (the engine keeps the jobs queued for the reconciler).
func TestRedisQueueUnavailable(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := client(t, &redis.Options{Addr: mr.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	q := newQueue(t, rdb, 0, "q")
	mr.Close()
	err := q.Enqueue(ctx, push.NewJobID())
	if push.KindOf(err) != push.Unavailable {
		t.Fatalf("enqueue with Redis down = %v, want Unavailable", err)
	}
	if push.RetryAfterOf(err) <= 0 {
		t.Fatal("no retry hint")
	}
}

// TestRedisQueueLen: Len counts the ids waiting for a worker, on every
// node of the namespace: none before anything was enqueued, each waiting
// id once, and not the one a worker runs.
func TestRedisQueueLen(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		api := newQueue(t, rdb, 0, ns) // enqueues only
		length := func(want int) {
			t.Helper()
			if n, err := api.Len(ctx); err != nil || n != want {
				t.Fatalf("Len = %d, %v; want %d", n, err, want)
			}
		}
		length(0)
		ids := []string{push.NewJobID(), push.NewJobID(), push.NewJobID()}
		if err := api.Enqueue(ctx, append(ids, ids[0])...); err != nil {
			t.Fatal(err)
		}
		length(3)
		started, release := make(chan string, len(ids)), make(chan struct{})
		defer close(release)
		worker := newQueue(t, rdb, 1, ns)
		if err := worker.Start(func(_ context.Context, id string) error {
			started <- id
			<-release
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("no worker took an id")
		}
		length(2)
	})
}

// TestRedisQueueKeepsNothingFinished: by default a finished task is
// deleted at once (nothing reads it; keeping it costs Redis a write and
// memory per job), and its id can be enqueued and handled again.
func TestRedisQueueKeepsNothingFinished(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		api := keepNothing(t, rdb, ns, 0, 0, 0) // enqueues only: the id is a task
		q := keepNothing(t, rdb, ns, 1, 10*time.Millisecond, 0)
		rec := newRecorder(nil)
		if err := q.Start(rec.handle); err != nil {
			t.Fatal(err)
		}
		id := push.NewJobID()
		if err := api.Enqueue(ctx, id); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, 1, 10*time.Second)
		insp := asynq.NewInspectorFromRedisClient(rdb)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			info, err := insp.GetTaskInfo(ns, id)
			if errors.Is(err, asynq.ErrTaskNotFound) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("finished task: %+v, %v; want it deleted", info, err)
			}
		}
		if n, err := rdb.Exists(ctx, "asynq:{"+ns+"}:t:"+id, "asynq:{"+ns+"}:completed").Result(); n != 0 || err != nil {
			t.Fatalf("%d keys of the finished task are left (%v)", n, err)
		}
		if err := api.Enqueue(ctx, id); err != nil {
			t.Fatal(err)
		}
		rec.wait(t, 1, 10*time.Second)
		if n := rec.count(id); n != 2 {
			t.Fatalf("id enqueued again after it finished: handled %d times in all, want 2", n)
		}
	})
}

// TestRedisQueueStopIsBounded: a handler that ignores its context's end
// cannot make Stop wait forever: after the drain timeout and then
// ShutdownTimeout, Stop returns, saying that a handler still runs.
func TestRedisQueueStopIsBounded(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		q := queue.NewRedis(rdb, queue.RedisOptions{Namespace: ns, Workers: 1, PollInterval: 10 * time.Millisecond,
			ShutdownTimeout: time.Second, LocalLease: -1})
		release := make(chan struct{})
		defer close(release)
		started := make(chan struct{}, 1)
		if err := q.Start(func(ctx context.Context, id string) error {
			started <- struct{}{}
			<-release // ignores ctx
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := q.Enqueue(ctx, push.NewJobID()); err != nil {
			t.Fatal(err)
		}
		<-started
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- q.Stop(sctx) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "still run") {
				t.Errorf("Stop with a handler still running: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Stop still waits 8 s after its drain timeout and ShutdownTimeout ended")
		}
	})
}
