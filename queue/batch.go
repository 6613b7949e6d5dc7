package queue

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// Job ids enqueued together (by one call, or by calls that overlap in
// time) travel as one asynq task: asynq's enqueue, dequeue and completion
// scripts run once for them all instead of once per id, which is most of
// the Redis work of a send. An id enqueued alone is a task of its own
// whose TaskID is the id.
//
// A batch must never run an id that a task of its own also runs (the
// second would find the job running and make it uncertain). So a batch
// reserves its ids in a hash of the namespace (id → batch), in the script
// that writes its task (taskwrite.go), refused if any of them is reserved
// already or has a task of its own; an id
// enqueued alone is left alone while a live batch holds it. The batch
// releases its ids when it finishes. Whatever a batch cannot finish on its
// first run (a deferral, a failure, an id for which every worker was busy,
// or the whole batch when a dead worker's lease ran out) goes back as a
// task of its own, where the engine decides on it as on any delivery.
const (
	// batchType is the asynq task type of several job ids.
	batchType = "herald:jobs"
	// maxBatch is the most ids one task carries.
	maxBatch = 64
	// flushTimeout bounds one write of enqueued ids to Redis; callers stop
	// waiting for it at their own deadline.
	flushTimeout = 10 * time.Second
	// reserveGrace is how long an id reserved for a batch that Redis does
	// not hold is still taken for its: a node of an earlier version
	// enqueued the batch after reserving its ids, in a second step.
	reserveGrace = time.Minute
)

// reservations is the key of the hash of ids reserved for batches, in the
// namespace's hash slot.
func (q *Redis) reservations() string { return "herald:{" + q.opts.Namespace + "}:batched" }

// taskKey is asynq's key of the task whose TaskID is id.
func (q *Redis) taskKey(id string) string { return "asynq:{" + q.opts.Namespace + "}:t:" + id }

// enqueueCall is one Enqueue waiting for its ids to be written, or one
// RunNow's ids (run set), which wait for nothing.
type enqueueCall struct {
	ids  []string
	run  push.Handler
	done chan error
}

// coalescer gathers the ids of Enqueue calls that overlap in time: while
// one write is under way, the calls that arrive wait and go out together
// in the next.
type coalescer struct {
	mu      sync.Mutex
	pending []*enqueueCall
	running bool
}

// submit hands ids to the write loop and waits for their write or ctx.
func (q *Redis) submit(ctx context.Context, ids []string) error {
	c := q.hand(ids, nil)
	select {
	case err := <-c.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hand gives ids to the write loop (to run with run, when set) and
// returns their call.
func (q *Redis) hand(ids []string, run push.Handler) *enqueueCall {
	c := &enqueueCall{ids: ids, run: run, done: make(chan error, 1)}
	q.co.mu.Lock()
	q.co.pending = append(q.co.pending, c)
	if !q.co.running {
		q.co.running = true
		go q.flushLoop()
	}
	q.co.mu.Unlock()
	return c
}

// flushLoop writes the waiting calls' ids until none wait.
func (q *Redis) flushLoop() {
	for {
		// Calls made at the same moment (the requests of one group
		// commit, woken together) join the write when it yields once.
		runtime.Gosched()
		q.co.mu.Lock()
		calls := q.co.pending
		q.co.pending = nil
		if len(calls) == 0 {
			q.co.running = false
			q.co.mu.Unlock()
			return
		}
		q.co.mu.Unlock()
		var (
			ids     []string
			claimed []held
		)
		for _, c := range calls {
			if c.run == nil {
				ids = append(ids, c.ids...)
				continue
			}
			for _, id := range c.ids {
				claimed = append(claimed, held{id, c.run})
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		if len(claimed) > 0 {
			q.startClaimed(ctx, claimed)
		}
		var err error
		if len(ids) > 0 {
			err = q.put(ctx, ids)
		}
		cancel()
		for _, c := range calls {
			c.done <- err
		}
	}
}

// put runs as many of ids here as there are free worker slots (local.go)
// and writes the others to Redis: one alone as a task of its own, more in
// batches of at most maxBatch.
func (q *Redis) put(ctx context.Context, ids []string) error {
	seen := make(map[string]bool, len(ids))
	ids = slices.DeleteFunc(slices.Clone(ids), func(id string) bool {
		dup := seen[id]
		seen[id] = true
		return dup
	})
	if n := q.TakeSlots(min(len(ids), maxBatch)); n > 0 {
		switch err := q.startLocal(ctx, heldBy(ids[:n], q.handler)); {
		case err == nil:
			ids = ids[n:]
		case errors.Is(err, errReserved):
			q.DropSlots(n) // enqueued before (the reconciler, a retry): as usual
		default:
			q.DropSlots(n)
			return err
		}
	}
	for chunk := range slices.Chunk(ids, maxBatch) {
		var err error
		if len(chunk) == 1 {
			err = q.enqueueAlone(ctx, chunk[0])
		} else {
			err = q.enqueueBatch(ctx, chunk)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// enqueueBatch writes ids as one task, or each as a task of its own when
// any of them is already reserved or has a task.
func (q *Redis) enqueueBatch(ctx context.Context, ids []string) error {
	bid := "batch-" + push.NewJobID()
	ok, err := q.reserveTask(ctx, batchType, bid, []byte(strings.Join(ids, ",")), time.Time{}, ids)
	if err != nil || ok {
		return err
	}
	// Enqueued before (the reconciler, a retry): one by one.
	for _, id := range ids {
		if err := q.enqueueAlone(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// enqueueAlone writes id as a task of its own unless a live batch (or
// local run) holds it. The reservation is checked again in the write
// itself: one made meanwhile by another node keeps the id there.
func (q *Redis) enqueueAlone(ctx context.Context, id string) error {
	holder, err := q.rdb.HGet(ctx, q.reservations(), id).Result()
	switch {
	case errors.Is(err, redis.Nil):
		holder = ""
	case err != nil:
		return err
	default:
		live, err := q.live(ctx, holder)
		if err != nil || live {
			return err // a live batch runs it
		}
	}
	switch n, err := q.writeAlone(ctx, id, holder); {
	case err != nil:
		return err
	case n == 0:
		// It has a task: waiting or running (then it will be worked),
		// or retained after it finished (then enqueue writes it anew).
		return q.enqueue(ctx, id, 0)
	}
	return nil
}

// live tells whether the batch of a reservation ("batch-ID@unix-ms") will
// still run its ids: Redis holds it and it has not finished, or it is too
// young to tell (see reserveGrace).
func (q *Redis) live(ctx context.Context, holder string) (bool, error) {
	bid, at, _ := strings.Cut(holder, "@")
	ms, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return false, nil // not a reservation this code made
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	info, err := q.inspector.GetTaskInfo(q.opts.Namespace, bid)
	switch {
	case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
		return time.Since(time.UnixMilli(ms)) < reserveGrace, nil
	case err != nil:
		return false, fmt.Errorf("queue: look up batch %s: %w", bid, err)
	}
	return info.State != asynq.TaskStateCompleted && info.State != asynq.TaskStateArchived, nil
}

// release ends the reservations of a batch's ids.
func (q *Redis) release(ids []string) {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if err := q.rdb.HDel(ctx, q.reservations(), ids...).Err(); err != nil {
		q.log.Warn("queue: a batch's ids stay reserved until the reservation lapses", "ids", len(ids), "err", err)
	}
}

// leftover is an id a batch hands back as a task of its own, due after
// a wait.
type leftover struct {
	id    string
	after time.Duration
}

// processBatch works a batch's ids at once, each in a worker slot of its
// own. An id for which no slot is free, that the engine deferred or that
// failed goes back as a task of its own; so does every id of a batch
// delivered again (its first worker died), as the engine must decide on
// each as on any repeated delivery.
func (q *Redis) processBatch(ctx context.Context, t *asynq.Task) error {
	ids := strings.Split(string(t.Payload()), ",")
	// Slots are taken first and the ids without one handed back before
	// any id runs: what this worker does not run waits in Redis at once.
	var mine []string
	if n, _ := asynq.GetRetryCount(ctx); n == 0 {
		mine = ids[:q.freeSlots(len(ids))]
	}
	var busy []leftover
	for _, id := range ids[len(mine):] {
		busy = append(busy, leftover{id, 0})
	}
	err := q.handBack(ctx, busy) // a failure: the batch is retried once its ids here ran
	failed := q.runHeld(ctx, heldBy(mine, q.handler))
	if err != nil {
		return err
	}
	if err := q.handBack(ctx, failed); err != nil {
		return err
	}
	q.release(ids)
	return nil
}

// freeSlots takes up to n free worker slots without waiting and returns
// how many it took.
func (q *Redis) freeSlots(n int) int {
	for took := range n {
		select {
		case q.slots <- struct{}{}:
		default: // every slot is taken
			return took
		}
	}
	return n
}

// held is an id to run in a worker slot already taken for it, with the
// handler that runs it: the engine's, or a request's for the jobs it
// claimed (RunNow).
type held struct {
	id string
	h  push.Handler
}

// heldBy pairs each of ids with h.
func heldBy(ids []string, h push.Handler) []held {
	out := make([]held, len(ids))
	for i, id := range ids {
		out[i] = held{id, h}
	}
	return out
}

// runHeld runs ids at once, each in the worker slot already taken for it
// (and given back when it returns), and returns those that the engine
// deferred or that failed, with their wait before the next run.
func (q *Redis) runHeld(ctx context.Context, ids []held) []leftover {
	var (
		mu     sync.Mutex
		failed []leftover
		wg     sync.WaitGroup
	)
	for _, it := range ids {
		wg.Add(1)
		q.runners.run(func() {
			defer wg.Done()
			defer func() { <-q.slots }()
			if err := q.run(ctx, it.h, it.id); err != nil {
				after := q.opts.RetryDelay
				if d, ok := push.DeferredFor(err); ok {
					after = d
				}
				mu.Lock()
				failed = append(failed, leftover{it.id, after})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return failed
}

// handBack enqueues each left id as a task of its own, due after its
// wait, even when ctx (a handler's) has ended.
func (q *Redis) handBack(ctx context.Context, left []leftover) error {
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	for _, l := range left {
		if err := q.enqueue(hctx, l.id, l.after); err != nil {
			// The batch is retried, or the local run's safety task falls
			// due, and then hands every id back; the ids stay reserved
			// until then.
			return fmt.Errorf("queue: hand back job %s: %w", l.id, err)
		}
	}
	return nil
}

// pendingIDs counts the job ids of the namespace's pending tasks.
func (q *Redis) pendingIDs() (int, error) {
	const size = 100
	n := 0
	for page := 1; ; page++ {
		tasks, err := q.inspector.ListPendingTasks(q.opts.Namespace, asynq.PageSize(size), asynq.Page(page))
		if err != nil {
			return 0, fmt.Errorf("queue: list the pending tasks of %s: %w", q.opts.Namespace, err)
		}
		for _, t := range tasks {
			n += strings.Count(string(t.Payload), ",") + 1 // a batch's ids, or one
		}
		if len(tasks) < size {
			return n, nil
		}
	}
}
