// Package queue implements push.Queue: Memory, the in-process queue of the
// embedded mode, durable through the store (the engine re-enqueues queued
// jobs when it starts), and Redis, the asynq queue that many nodes share.
package queue

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/heraldpush/herald/push"
)

// Memory is an in-process FIFO queue of job ids with a pool of workers.
// It forgets everything when the process ends; the job rows in the store
// are the truth and the engine enqueues queued jobs again at start.
type Memory struct {
	workers int
	log     *slog.Logger
	retry   time.Duration
	grace   time.Duration // MemoryOptions.ShutdownTimeout

	mu       sync.Mutex
	cond     *sync.Cond
	items    []string
	queued   map[string]bool
	started  bool
	stopping bool

	handler push.Handler
	wg      sync.WaitGroup
	ctx     context.Context // handlers' context, canceled when Stop gives up waiting
	cancel  context.CancelFunc
}

// MemoryOptions configure a Memory queue.
type MemoryOptions struct {
	// Workers is the number of jobs worked at once (default 8).
	Workers int
	// Logger receives handler failures.
	Logger *slog.Logger
	// RetryDelay is the wait before a job whose handler failed (for example
	// on a busy database) is worked again (default 1 s).
	RetryDelay time.Duration
	// ShutdownTimeout bounds how long Stop waits, after the drain timeout
	// has canceled the handlers' context, for handlers still running
	// (default 2 min; see push.Limits.OutcomeGrace); Stop then returns an
	// error without them.
	ShutdownTimeout time.Duration
}

var _ push.Queue = (*Memory)(nil)

// NewMemory returns a stopped queue; Start begins working it.
func NewMemory(opts MemoryOptions) *Memory {
	if opts.Workers < 0 {
		opts.Workers = 0
	} else if opts.Workers == 0 {
		opts.Workers = 8
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.RetryDelay <= 0 {
		opts.RetryDelay = time.Second
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = cancelGrace
	}
	q := &Memory{workers: opts.Workers, log: opts.Logger, retry: opts.RetryDelay, grace: opts.ShutdownTimeout, queued: make(map[string]bool)}
	q.cond = sync.NewCond(&q.mu)
	q.ctx, q.cancel = context.WithCancel(context.Background())
	return q
}

// Enqueue implements push.Queue. An id already waiting is not added twice.
func (q *Memory) Enqueue(_ context.Context, ids ...string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopping {
		return &push.Error{Kind: push.Unavailable, Reason: "queue_stopped", Message: "the queue is stopping", RetryAfter: 5 * time.Second}
	}
	for _, id := range ids {
		if !q.queued[id] {
			q.queued[id] = true
			q.items = append(q.items, id)
			// One idle worker per new id: waking them all for one id
			// (with thousands of workers) costs more than the send.
			q.cond.Signal()
		}
	}
	return nil
}

// Workers returns the number of jobs the queue works at once (the engine
// caps a bot's jobs being sent at a share of it).
func (q *Memory) Workers() int { return q.workers }

// Len returns the number of ids waiting for a worker.
func (q *Memory) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Start implements push.Queue.
func (q *Memory) Start(h push.Handler) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return fmt.Errorf("queue: already started")
	}
	q.started = true
	q.handler = h
	for i := 0; i < q.workers; i++ {
		q.wg.Add(1)
		go q.work()
	}
	return nil
}

func (q *Memory) next() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.stopping {
		q.cond.Wait()
	}
	if q.stopping {
		return "", false
	}
	id := q.items[0]
	q.items[0] = ""
	q.items = q.items[1:]
	delete(q.queued, id)
	return id, true
}

func (q *Memory) work() {
	defer q.wg.Done()
	for {
		id, ok := q.next()
		if !ok {
			return
		}
		err := q.run(id)
		if err == nil || q.ctx.Err() != nil {
			continue
		}
		delay, deferred := push.DeferredFor(err)
		if !deferred {
			delay = q.retry
			q.log.Warn("job handler failed; the job will be tried again", "job", id, "err", err)
		}
		time.AfterFunc(delay, func() { _ = q.Enqueue(context.Background(), id) })
	}
}

// run calls the handler, turning a panic into an error so that one bad job
// cannot stop the worker pool.
func (q *Memory) run(id string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = handlerPanic(q.log, id, r)
		}
	}()
	return q.handler(q.ctx, id)
}

// Stop implements push.Queue: no new id is started, running handlers get
// until ctx ends, then their context is canceled. Ids still waiting stay
// queued in the store for the next start.
func (q *Memory) Stop(ctx context.Context) error {
	q.mu.Lock()
	q.stopping = true
	q.cond.Broadcast()
	q.mu.Unlock()
	done := make(chan struct{})
	go func() { q.wg.Wait(); close(done) }()
	return drain(ctx, func() <-chan struct{} { return done }, q.cancel, q.grace)
}
