package queue_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/queue"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// slowPoller is a worker node whose workers poll Redis for tasks every 2
// to 6 seconds (asynq's jitter): an id it runs within a second of its
// enqueue ran without waiting in Redis for a poll.
func slowPoller(t *testing.T, rdb redis.UniversalClient, ns string, workers int, lease time.Duration) *queue.Redis {
	return keepNothing(t, rdb, ns, workers, 4*time.Second, lease)
}

// soon is how long an id enqueued by a node with a free worker slot takes
// at most to start there.
const soon = time.Second

// cut is a go-redis hook that fails every command once set: a node that
// can no longer reach Redis (or died).
type cut struct{ on atomic.Bool }

func (c *cut) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *cut) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if c.on.Load() {
			cmd.SetErr(errors.New("cut off from Redis"))
			return cmd.Err()
		}
		return next(ctx, cmd)
	}
}

func (c *cut) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if c.on.Load() {
			return errors.New("cut off from Redis")
		}
		return next(ctx, cmds)
	}
}

// cutClient returns a connection of a node's own to rdb's server, closed
// after the node stops (cleanups run last first), and the hook that cuts
// it off.
func cutClient(t *testing.T, rdb redis.UniversalClient) (*redis.Client, *cut) {
	own := redis.NewClient(rdb.(*redis.Client).Options())
	t.Cleanup(func() { own.Close() })
	lost := &cut{}
	own.AddHook(lost)
	return own, lost
}

// holder is a handler that reports each id it starts and holds it until
// the holder opens.
type holder struct {
	started chan string
	open    chan struct{}
}

func newHolder() *holder { return &holder{started: make(chan string, 100), open: make(chan struct{})} }

func (g *holder) handle(ctx context.Context, id string) error {
	g.started <- id
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next returns the next id started, or fails after timeout.
func (g *holder) next(t *testing.T, timeout time.Duration) string {
	t.Helper()
	select {
	case id := <-g.started:
		return id
	case <-time.After(timeout):
		t.Fatalf("no id started within %s", timeout)
		return ""
	}
}

// finish opens the holder, waits until the namespace holds nothing of
// the runs, and checks that no id started again.
func (g *holder) finish(t *testing.T, rdb redis.UniversalClient, ns string) {
	t.Helper()
	close(g.open)
	waitClean(t, rdb, ns)
	if n := len(g.started); n != 0 {
		t.Fatalf("%d ids started again", n)
	}
}

// leftovers lists what a namespace holds besides asynq's bookkeeping: task
// keys, scheduled, pending and active tasks, and reservations.
func leftovers(t *testing.T, rdb redis.UniversalClient, ns string) []string {
	t.Helper()
	prefix := "asynq:{" + ns + "}:"
	var left []string
	tasks, err := rdb.Keys(ctx, prefix+"t:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	left = append(left, tasks...)
	for _, k := range []string{"scheduled", "pending", "active", "lease"} {
		n, err := rdb.Exists(ctx, prefix+k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			left = append(left, prefix+k)
		}
	}
	if n, err := rdb.HLen(ctx, "herald:{"+ns+"}:batched").Result(); err != nil || n > 0 {
		left = append(left, "reservations")
	}
	return left
}

// waitClean waits until the namespace holds nothing of a finished run.
func waitClean(t *testing.T, rdb redis.UniversalClient, ns string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		left := leftovers(t, rdb, ns)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("left in Redis after the run: %v", left)
		}
	}
}

// TestRedisQueueLocalRun: a node that works jobs runs an id it enqueues
// itself at once, not after its workers' next poll; meanwhile a safety
// task scheduled a lease ahead holds the id; after the run nothing is
// left in Redis.
func TestRedisQueueLocalRun(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		q := slowPoller(t, rdb, ns, 2, 30*time.Second)
		g := newHolder()
		if err := q.Start(g.handle); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the workers' first poll found nothing
		id := push.NewJobID()
		t0 := time.Now()
		if err := q.Enqueue(ctx, id); err != nil {
			t.Fatal(err)
		}
		if got := g.next(t, soon); got != id {
			t.Fatalf("started %s, want %s", got, id)
		}
		tasks, err := asynq.NewInspectorFromRedisClient(rdb).ListScheduledTasks(ns)
		if err != nil || len(tasks) != 1 {
			t.Fatalf("scheduled tasks while the id runs: %v, %v; want its safety task", tasks, err)
		}
		if got := string(tasks[0].Payload); got != id {
			t.Fatalf("the safety task holds %q, want %q", got, id)
		}
		if due := tasks[0].NextProcessAt.Sub(t0); due < 28*time.Second || due > 32*time.Second {
			t.Fatalf("the safety task is due in %s, want a lease (30 s)", due)
		}
		g.finish(t, rdb, ns)
	})
}

// TestRedisQueueLocalRunBeyondSlots: ids beyond the free worker slots wait
// in Redis, where any node's workers take them; each runs once.
func TestRedisQueueLocalRunBeyondSlots(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		q := slowPoller(t, rdb, ns, 2, 0)
		g := newHolder()
		if err := q.Start(g.handle); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the workers' first poll found nothing
		ids := []string{push.NewJobID(), push.NewJobID(), push.NewJobID(), push.NewJobID(), push.NewJobID()}
		if err := q.Enqueue(ctx, ids...); err != nil {
			t.Fatal(err)
		}
		got := []string{g.next(t, soon), g.next(t, soon)}
		if diff := cmp.Diff(slices.Sorted(slices.Values(ids[:2])), slices.Sorted(slices.Values(got))); diff != "" {
			t.Fatalf("ids run at once (-want +got):\n%s", diff)
		}
		api := newQueue(t, rdb, 0, ns)
		if n, err := api.Len(ctx); err != nil || n != 3 {
			t.Fatalf("ids waiting in Redis: %d, %v; want 3", n, err)
		}
		rec := newRecorder(nil)
		if err := newQueue(t, rdb, 3, ns).Start(rec.handle); err != nil {
			t.Fatal(err)
		}
		rec.handledOnce(t, ids[2:])
		g.finish(t, rdb, ns)
	})
}

// TestRedisQueueLocalRunOfAnEnqueuedID: an id that has a task already (the
// reconciler enqueues a job again that waits or runs) is not run by the
// node that enqueues it again: it runs once.
func TestRedisQueueLocalRunOfAnEnqueuedID(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		api := keepNothing(t, rdb, ns, 0, 0, 0)
		id := push.NewJobID()
		if err := api.Enqueue(ctx, id); err != nil {
			t.Fatal(err)
		}
		q := keepNothing(t, rdb, ns, 2, 10*time.Millisecond, 0)
		g := newHolder()
		if err := q.Start(g.handle); err != nil {
			t.Fatal(err)
		}
		if err := q.Enqueue(ctx, id); err != nil { // pending or running: either way a task
			t.Fatal(err)
		}
		if got := g.next(t, 10*time.Second); got != id {
			t.Fatalf("started %s, want %s", got, id)
		}
		g.finish(t, rdb, ns)
	})
}

// TestRedisQueueLocalRunOfADeadNode: when the node running an id loses
// Redis (as when it dies) and stops extending the lease, the safety task
// falls due once the lease ends and hands the id to another node's
// workers (the engine then makes a job it finds running uncertain). While
// the node extends its lease, even past the first one, no one else gets
// the id.
func TestRedisQueueLocalRunOfADeadNode(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		own, lost := cutClient(t, rdb) // the dying node's
		const lease = 3 * time.Second
		q := slowPoller(t, own, ns, 1, lease)
		g := newHolder()
		if err := q.Start(g.handle); err != nil {
			t.Fatal(err)
		}
		other := newRecorder(nil)
		if err := newQueue(t, rdb, 1, ns).Start(other.handle); err != nil {
			t.Fatal(err)
		}
		id := push.NewJobID()
		if err := q.Enqueue(ctx, id); err != nil {
			t.Fatal(err)
		}
		g.next(t, soon)
		time.Sleep(2 * lease) // extended twice or more
		tasks, err := asynq.NewInspectorFromRedisClient(rdb).ListScheduledTasks(ns)
		if err != nil || len(tasks) != 1 || time.Until(tasks[0].NextProcessAt) < lease/3 {
			t.Fatalf("scheduled tasks after two leases of a run: %v, %v; want its safety task, due in more than %s", tasks, err, lease/3)
		}
		if n, err := rdb.Exists(ctx, "asynq:{"+ns+"}:t:"+id).Result(); n != 0 || err != nil {
			t.Fatalf("the id was handed back while its lease was extended (%v)", err)
		}
		if n := other.count(id); n != 0 {
			t.Fatalf("another node got the id %d times while its lease was extended", n)
		}
		t0 := time.Now()
		lost.on.Store(true)
		if got := other.wait(t, 1, 3*lease); got[0] != id {
			t.Fatalf("another node got %v, want %s", got, id)
		}
		if el := time.Since(t0); el < lease/6 {
			t.Fatalf("handed over %s after the node lost Redis, before its lease could end", el)
		}
		close(g.open)
	})
}

// touches is a go-redis hook that records each round trip whose keys or
// arguments name any of the strings it watches for.
type touches struct {
	watch []string
	mu    sync.Mutex
	trips [][]string
}

func (h *touches) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *touches) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.record([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (h *touches) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.record(cmds)
		return next(ctx, cmds)
	}
}

func (h *touches) record(cmds []redis.Cmder) {
	var names []string
	hit := false
	for _, c := range cmds {
		names = append(names, c.Name())
		for _, a := range c.Args() {
			s, _ := a.(string)
			for _, w := range h.watch {
				hit = hit || strings.Contains(s, w)
			}
		}
	}
	if hit {
		h.mu.Lock()
		h.trips = append(h.trips, names)
		h.mu.Unlock()
	}
}

// since returns the round trips recorded after the first n.
func (h *touches) since(n int) [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.trips[n:])
}

func (h *touches) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.trips)
}

// TestRedisQueueLocalRunRoundTrips: a local run costs the queue two round
// trips to Redis, each one script: the ids' reservation together with
// their safety task, and, after the run, the deletion of both.
func TestRedisQueueLocalRunRoundTrips(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		h := &touches{watch: []string{"herald:{" + ns + "}:batched", "asynq:{" + ns + "}:t:" + "local-"}}
		own := redis.NewClient(rdb.(*redis.Client).Options())
		t.Cleanup(func() { own.Close() })
		own.AddHook(h)
		q := slowPoller(t, own, ns, 4, 30*time.Second)
		g := newHolder()
		if err := q.Start(g.handle); err != nil {
			t.Fatal(err)
		}
		run := func(n int) {
			ids := newIDs(n)
			if err := q.Enqueue(ctx, ids...); err != nil {
				t.Fatal(err)
			}
			for range ids {
				g.next(t, soon)
			}
			for range ids { // the holder stays shut: one id goes on each time
				g.open <- struct{}{}
			}
			waitClean(t, rdb, ns)
		}
		run(1) // loads the scripts (a script's first call is two round trips)
		mark := h.count()
		run(3)
		want := [][]string{{"evalsha"}, {"evalsha"}}
		if diff := cmp.Diff(want, h.since(mark)); diff != "" {
			t.Fatalf("round trips of a local run of 3 ids (-want +got):\n%s", diff)
		}
	})
}

// TestRedisQueueRunNow: ids whose jobs a request claimed run at once, in
// the slots taken for them, with the request's handler (not the engine's)
// and under a safety task that holds them while they run; a slot given
// back unused is free again; when Redis cannot be reached, claimed ids
// run all the same (no other node may run them). Nothing is left in
// Redis, and Stop returns: every slot was given back.
func TestRedisQueueRunNow(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		own, lost := cutClient(t, rdb)
		q := slowPoller(t, own, ns, 2, 30*time.Second)
		if got := q.TakeSlots(1); got != 0 {
			t.Fatalf("a queue not started took %d slots", got)
		}
		engine := newHolder()
		if err := q.Start(engine.handle); err != nil {
			t.Fatal(err)
		}
		if got := q.TakeSlots(3); got != 2 {
			t.Fatalf("took %d slots for 3 ids with 2 workers, want 2", got)
		}
		q.DropSlots(1)
		claimed := newHolder()
		id := push.NewJobID()
		q.RunNow([]string{id}, claimed.handle)
		if got := claimed.next(t, soon); got != id {
			t.Fatalf("started %s, want %s", got, id)
		}
		// Written while the id runs.
		for deadline := time.Now().Add(soon); ; time.Sleep(5 * time.Millisecond) {
			tasks, err := asynq.NewInspectorFromRedisClient(rdb).ListScheduledTasks(ns)
			if err == nil && len(tasks) == 1 && string(tasks[0].Payload) == id {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("scheduled tasks while the claimed id runs: %v, %v; want its safety task", tasks, err)
			}
		}
		if got := q.TakeSlots(2); got != 1 {
			t.Fatalf("took %d slots while one id runs and one slot was given back, want 1", got)
		}
		q.DropSlots(1)
		claimed.finish(t, rdb, ns)

		lost.on.Store(true)
		if got := q.TakeSlots(1); got != 1 {
			t.Fatalf("took %d slots with both free, want 1", got)
		}
		cutOff := newHolder()
		id2 := push.NewJobID()
		q.RunNow([]string{id2}, cutOff.handle)
		if got := cutOff.next(t, 20*time.Second); got != id2 {
			t.Fatalf("started %s without Redis, want %s", got, id2)
		}
		close(cutOff.open)
		lost.on.Store(false)
		// Two requests' claims at once, as one write and one run, once
		// the last run has given its slot back.
		for deadline := time.Now().Add(soon); ; time.Sleep(5 * time.Millisecond) {
			took := q.TakeSlots(2)
			if took == 2 {
				break
			}
			q.DropSlots(took)
			if time.Now().After(deadline) {
				t.Fatalf("took %d slots with both free, want 2", took)
			}
		}
		both := newHolder()
		pair := newIDs(2)
		q.RunNow(pair[:1], both.handle)
		q.RunNow(pair[1:], both.handle)
		both.next(t, soon)
		both.next(t, soon)
		close(both.open)
		if n := len(engine.started); n != 0 {
			t.Fatalf("the engine's handler ran %d ids, want none", n)
		}
		stopped := make(chan error, 1)
		go func() { stopped <- q.Stop(ctx) }()
		select {
		case err := <-stopped:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Stop still waits for runs: a slot was not given back")
		}
		waitClean(t, rdb, ns)
	})
}

// TestRedisQueueLocalRunPanic: a handler that panics in a local run (an id
// claimed with its request, run by RunNow) does not take the node down:
// the id is handed back to the queue, whose handler runs it again, and
// the worker slot is free again.
func TestRedisQueueLocalRunPanic(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		q := keepNothing(t, rdb, ns, 1, 20*time.Millisecond, 30*time.Second)
		engine := newHolder()
		if err := q.Start(engine.handle); err != nil {
			t.Fatal(err)
		}
		if got := q.TakeSlots(1); got != 1 {
			t.Fatalf("took %d slots of 1 free", got)
		}
		id := push.NewJobID()
		q.RunNow([]string{id}, func(context.Context, string) error { panic("a bug in the send") })
		if got := engine.next(t, 20*time.Second); got != id {
			t.Fatalf("handed back %s, want %s", got, id)
		}
		close(engine.open)
	})
}

// commandHook is a go-redis hook that calls after once, after the first
// command that match accepts has run; after returns the command's error
// (it may replace it).
type commandHook struct {
	match func(cmd redis.Cmder) bool
	after func(cmd redis.Cmder, err error) error
	once  sync.Once
}

func (h *commandHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *commandHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.match(cmd) {
			h.once.Do(func() { err = h.after(cmd, err) })
		}
		return err
	}
}

func (h *commandHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// hooked returns a client of its own of rdb's server, with hook.
func hooked(t *testing.T, rdb redis.UniversalClient, hook redis.Hook) *redis.Client {
	own := redis.NewClient(rdb.(*redis.Client).Options())
	t.Cleanup(func() { own.Close() })
	own.AddHook(hook)
	return own
}

// lostReply fails the first script that writes a local run's safety task
// after Redis has run it, as a reply lost to a timeout would.
func lostReply() *commandHook {
	return &commandHook{
		match: func(cmd redis.Cmder) bool {
			if !strings.HasPrefix(cmd.Name(), "eval") {
				return false
			}
			return slices.ContainsFunc(cmd.Args(), func(a any) bool {
				s, ok := a.(string)
				return ok && strings.Contains(s, ":t:local-")
			})
		},
		after: func(cmd redis.Cmder, err error) error {
			if err != nil {
				return err
			}
			cmd.SetErr(errors.New("i/o timeout (after Redis ran it)"))
			return cmd.Err()
		},
	}
}

// TestRedisQueueRunNowSafetyTaskOfALostReply: the safety task of ids
// claimed with their request is written, but the reply to its write is
// lost. It is kept a lease ahead all the same while the ids run: it does
// not fall due and hand them to a worker elsewhere mid-run.
func TestRedisQueueRunNowSafetyTaskOfALostReply(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		own := hooked(t, rdb, lostReply())
		const lease = 1500 * time.Millisecond
		q := slowPoller(t, own, ns, 2, lease)
		engine := newHolder()
		if err := q.Start(engine.handle); err != nil {
			t.Fatal(err)
		}
		if q.TakeSlots(1) != 1 {
			t.Fatal("no free slot")
		}
		claimed := newHolder()
		q.RunNow([]string{push.NewJobID()}, claimed.handle)
		claimed.next(t, soon)
		other := newHolder()
		if err := newQueue(t, rdb, 1, ns).Start(other.handle); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-other.started:
			t.Errorf("the claimed id %s was handed to another node while its run went on", got)
		case <-time.After(3 * lease):
		}
		close(claimed.open)
		close(other.open)
		close(engine.open)
	})
}

// TestRedisQueueAloneTaskRacesReservation: node A enqueues an id alone
// (it found the id reserved, or has no free worker) while node B enqueues
// it too and runs it itself. B's reservation lands between A's look at
// the reservations and A's write: A writes no task, and the id runs on B
// alone, not also on a worker elsewhere.
func TestRedisQueueAloneTaskRacesReservation(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ns := testkit.RandomName("q_")
		x := push.NewJobID()
		b := slowPoller(t, rdb, ns, 1, 30*time.Second) // one free slot: runs what it enqueues
		local := newHolder()
		if err := b.Start(local.handle); err != nil {
			t.Fatal(err)
		}
		reservations := "herald:{" + ns + "}:batched"
		own := hooked(t, rdb, &commandHook{
			match: func(cmd redis.Cmder) bool {
				a := cmd.Args()
				return cmd.Name() == "hget" && len(a) > 1 && a[1] == reservations
			},
			after: func(_ redis.Cmder, err error) error {
				if err := b.Enqueue(ctx, x); err != nil { // B's reconciler, at the same moment
					t.Error(err)
				}
				return err
			},
		})
		a := keepNothing(t, own, ns, 0, 0, 0) // API only
		if err := a.Enqueue(ctx, x); err != nil {
			t.Fatal(err)
		}
		if got := local.next(t, soon); got != x {
			t.Fatalf("B ran %s, want %s", got, x)
		}
		other := newHolder()
		if err := newQueue(t, rdb, 1, ns).Start(other.handle); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-other.started:
			t.Fatalf("id %s runs on a worker while B's run of it goes on", got)
		case <-time.After(2 * time.Second):
		}
		close(local.open)
		close(other.open)
	})
}
