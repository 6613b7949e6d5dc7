package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// taskType is the asynq task type of one job id (see batch.go for
// several).
const taskType = "herald:job"

// Redis is the scale-out push.Queue: job ids are asynq tasks in Redis,
// worked by the workers of every node that runs them.
//
// An id enqueued alone is a task whose TaskID is the id, so enqueueing an
// id that is already waiting is harmless (asynq refuses the second copy);
// asynq's Unique option is never used. Ids enqueued together, or by
// calls that overlap in time, travel as one task (batch.go), reserved so
// that no id is ever in two tasks at once. A finished task is deleted at once (unless
// RedisOptions.Retention keeps it): nothing reads it, and keeping it
// costs Redis a write and memory per job. A node with workers runs the
// ids it enqueues itself, at once, while it has free worker slots, under
// a safety task (local.go). asynq delivers at least once: a task whose worker died is handed to
// another worker after its lease expires, and the engine makes a job it
// finds running uncertain instead of sending it again. The job rows are
// the truth: an id that Redis lost is enqueued again by the engine's
// reconciler (push.Options.ReconcileInterval).
type Redis struct {
	rdb       redis.UniversalClient
	client    *asynq.Client
	inspector *asynq.Inspector
	opts      RedisOptions
	log       *slog.Logger

	mu      sync.Mutex
	started bool
	srv     *asynq.Server
	handler push.Handler
	ctx     context.Context // the handlers' base context, canceled when Stop gives up waiting
	cancel  context.CancelFunc
	busy    inflight
	slots   chan struct{} // one per job being worked, Workers in all
	runners *runners
	co      coalescer
	// published says that the namespace is in asynq's set of queues.
	published atomic.Bool
}

// RedisOptions configure a Redis queue. Zero fields take the defaults.
type RedisOptions struct {
	// Namespace is the asynq queue name; Herald installations sharing one
	// Redis use different namespaces (default "herald").
	Namespace string
	// Workers is the number of jobs this process works at once; 0 makes a
	// queue that only enqueues (an API-only node).
	Workers int
	// Logger receives handler failures and Redis trouble.
	Logger *slog.Logger
	// Retention is how long a finished task is kept under its id, for
	// asynq's inspector to show (default 0: deleted when it finishes).
	Retention time.Duration
	// Timeout caps one run of the handler (default 5 min; keep it above the
	// engine's send window plus one platform call).
	Timeout time.Duration
	// PollInterval is how often an idle worker pool looks for new tasks
	// (default 100 ms).
	PollInterval time.Duration
	// ForwardInterval is how often deferred and retried tasks that are due
	// are made ready (default 250 ms).
	ForwardInterval time.Duration
	// RetryDelay is the first wait before a job whose handler failed (for
	// example on a database outage) is tried again; it doubles per failure
	// up to MaxRetryDelay (defaults 1 s and 30 s).
	RetryDelay    time.Duration
	MaxRetryDelay time.Duration
	// MaxRetry is how often a failing handler is retried before asynq
	// archives the task (default 1000); the reconciler enqueues the job
	// again if it is still queued. Deferrals (push.DeferError) do not count.
	MaxRetry int
	// LocalLease is how long the jobs a node enqueues and runs itself
	// (see local.go) stay with it should it stop extending the lease (it
	// died, or lost Redis); then they go to the other workers. Default
	// 30 s, at least 3 s (asynq schedules to the second); negative: the
	// node runs no job it enqueues itself, every id waits in Redis for a
	// worker to poll for it.
	LocalLease time.Duration
	// ShutdownTimeout bounds how long Stop waits, after the drain timeout
	// has canceled the handlers' context, for handlers still running
	// (default 2 min; see push.Limits.OutcomeGrace); Stop then returns an
	// error without them.
	ShutdownTimeout time.Duration
}

var (
	_ push.Queue       = (*Redis)(nil)
	_ push.LocalRunner = (*Redis)(nil)
)

// NewRedis returns a stopped queue on rdb, which the caller owns and
// closes after Stop.
func NewRedis(rdb redis.UniversalClient, opts RedisOptions) *Redis {
	if opts.Namespace == "" {
		opts.Namespace = "herald"
	}
	if opts.Workers < 0 {
		opts.Workers = 0
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	opts.Retention = max(opts.Retention, 0)
	def(&opts.Timeout, 5*time.Minute)
	def(&opts.PollInterval, 100*time.Millisecond)
	def(&opts.ForwardInterval, 250*time.Millisecond)
	def(&opts.RetryDelay, time.Second)
	def(&opts.MaxRetryDelay, 30*time.Second)
	def(&opts.ShutdownTimeout, cancelGrace)
	if opts.LocalLease == 0 {
		opts.LocalLease = 30 * time.Second
	}
	if opts.LocalLease > 0 {
		opts.LocalLease = max(opts.LocalLease, 3*time.Second)
	}
	if opts.MaxRetry <= 0 {
		opts.MaxRetry = 1000
	}
	q := &Redis{
		rdb:       rdb,
		client:    asynq.NewClientFromRedisClient(rdb),
		inspector: asynq.NewInspectorFromRedisClient(rdb),
		opts:      opts,
		log:       opts.Logger,
	}
	q.ctx, q.cancel = context.WithCancel(context.Background())
	q.runners = newRunners(q.ctx)
	return q
}

// Workers returns the number of jobs this process works at once (the
// engine caps a bot's jobs being sent at a share of it).
func (q *Redis) Workers() int { return q.opts.Workers }

// Namespace returns the asynq queue name.
func (q *Redis) Namespace() string { return q.opts.Namespace }

// Enqueue implements push.Queue. An id that is already waiting, running or
// deferred is left as it is. An id whose task finished (retained after
// success, or archived after its retries) is enqueued anew: the engine only
// enqueues jobs that are queued in the store, and the handler reads the
// job's state before doing anything. When Redis cannot be reached the
// error is Unavailable; the jobs stay queued in the store for the
// reconciler.
func (q *Redis) Enqueue(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := q.submit(ctx, ids); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &push.Error{Kind: push.Unavailable, Reason: "queue_unavailable", RetryAfter: 5 * time.Second,
			Message: "the queue cannot be reached; the jobs are stored and will be enqueued again", Err: err}
	}
	return nil
}

// taskOptions are the options of the task whose TaskID is id: one job's,
// or a batch's.
func (q *Redis) taskOptions(id string) []asynq.Option {
	return []asynq.Option{asynq.TaskID(id), asynq.Queue(q.opts.Namespace), asynq.MaxRetry(q.opts.MaxRetry),
		asynq.Timeout(q.opts.Timeout), asynq.Retention(q.opts.Retention)}
}

// enqueue writes id as a task of its own, due after a wait.
func (q *Redis) enqueue(ctx context.Context, id string, after time.Duration) error {
	opts := q.taskOptions(id)
	if after > 0 {
		opts = append(opts, asynq.ProcessIn(after))
	}
	for attempt := 0; ; attempt++ {
		_, err := q.client.EnqueueContext(ctx, asynq.NewTask(taskType, []byte(id)), opts...)
		if !errors.Is(err, asynq.ErrTaskIDConflict) && !errors.Is(err, asynq.ErrDuplicateTask) {
			return err
		}
		if attempt > 0 {
			return nil // enqueued again by another node meanwhile
		}
		info, err := q.inspector.GetTaskInfo(q.opts.Namespace, id)
		switch {
		case errors.Is(err, asynq.ErrTaskNotFound):
			continue // it finished and was deleted meanwhile
		case err != nil:
			return err
		case info.State != asynq.TaskStateCompleted && info.State != asynq.TaskStateArchived:
			return nil // waiting, running or deferred: it will be worked
		}
		if err := q.inspector.DeleteTask(q.opts.Namespace, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
			return err
		}
	}
}

// Len returns the number of ids waiting in Redis for a worker of any node
// (those of asynq's pending tasks, a batch counting its ids; not those
// running, deferred or retained), as Memory.Len does for its own queue. It
// asks asynq's Inspector, whose calls take no context (ctx is only checked
// before them), and reads every pending task when there are any: a tool
// for tests and diagnostics, not for a hot path.
func (q *Redis) Len(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	queues, err := q.inspector.Queues()
	if err != nil {
		return 0, fmt.Errorf("queue: list the queues: %w", err)
	}
	if !slices.Contains(queues, q.opts.Namespace) {
		return 0, nil // nothing was ever enqueued
	}
	info, err := q.inspector.GetQueueInfo(q.opts.Namespace)
	if err != nil {
		return 0, fmt.Errorf("queue: inspect %s: %w", q.opts.Namespace, err)
	}
	if info.Pending == 0 {
		return 0, nil
	}
	return q.pendingIDs()
}

// Start implements push.Queue. With no workers it only records the
// handler: the queue enqueues for the workers of other nodes.
func (q *Redis) Start(h push.Handler) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started {
		return errors.New("queue: already started")
	}
	q.started = true
	q.handler = h
	if q.opts.Workers == 0 {
		return nil
	}
	q.slots = make(chan struct{}, q.opts.Workers)
	srv := asynq.NewServerFromRedisClient(q.rdb, asynq.Config{
		Concurrency:              q.opts.Workers,
		Queues:                   map[string]int{q.opts.Namespace: 1},
		BaseContext:              func() context.Context { return q.ctx },
		TaskCheckInterval:        q.opts.PollInterval,
		DelayedTaskCheckInterval: q.opts.ForwardInterval,
		RetryDelayFunc:           q.retryDelay,
		IsFailure:                isFailure,
		ShutdownTimeout:          q.opts.ShutdownTimeout,
		Logger:                   asynqLogger{q.log},
		LogLevel:                 asynq.WarnLevel,
		HealthCheckFunc: func(err error) {
			if err != nil {
				q.log.Warn("queue: Redis cannot be reached; workers wait for it", "err", err)
			}
		},
	})
	if err := srv.Start(asynq.HandlerFunc(q.process)); err != nil {
		return fmt.Errorf("queue: start workers: %w", err)
	}
	q.srv = srv
	return nil
}

// process works one task: a job id, or a batch of them.
func (q *Redis) process(ctx context.Context, t *asynq.Task) error {
	q.busy.add()
	defer q.busy.done()
	switch t.Type() {
	case batchType:
		return q.processBatch(ctx, t)
	case localType:
		return q.processLocal(ctx, t)
	}
	select {
	case q.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-q.slots }()
	return q.run(ctx, q.handler, string(t.Payload()))
}

// run calls h (the engine's handler, or a request's) on one id.
func (q *Redis) run(ctx context.Context, h push.Handler, id string) (err error) {
	// A panic fails the id as an error would, so that one bad job cannot
	// take the node down: it is handed back (a local run's) or retried
	// (asynq's), and the engine then makes a job that was being sent
	// uncertain.
	defer func() {
		if r := recover(); r != nil {
			err = handlerPanic(q.log, id, r)
		}
	}()
	err = h(ctx, id)
	if err == nil {
		return nil
	}
	if _, deferred := push.DeferredFor(err); !deferred && ctx.Err() == nil {
		q.log.Warn("job handler failed; the job will be tried again", "job", id, "err", err)
	}
	return err
}

// retryDelay is asynq's wait before a failed task runs again: the
// deferral a pacing platform asked for; a short wait for the task of a
// worker that died (the engine makes its job uncertain); otherwise an
// exponential backoff.
func (q *Redis) retryDelay(n int, err error, _ *asynq.Task) time.Duration {
	if d, ok := push.DeferredFor(err); ok {
		return d
	}
	if errors.Is(err, asynq.ErrLeaseExpired) {
		return q.opts.RetryDelay
	}
	d := q.opts.RetryDelay
	for i := 0; i < n && d < q.opts.MaxRetryDelay; i++ {
		d *= 2
	}
	return min(d, q.opts.MaxRetryDelay)
}

// isFailure tells asynq whether an error counts against the task's
// retries: a deferral is not a failure.
func isFailure(err error) bool {
	_, deferred := push.DeferredFor(err)
	return !deferred
}

// Stop implements push.Queue: no new task is started, running handlers
// get until ctx ends, then their context is canceled and Stop waits for
// them to return, up to ShutdownTimeout. Tasks not started stay in Redis
// for the other nodes.
func (q *Redis) Stop(ctx context.Context) error {
	q.mu.Lock()
	srv := q.srv
	q.srv = nil
	q.mu.Unlock()
	if srv == nil {
		q.cancel()
		return nil
	}
	srv.Stop() // no new tasks
	err := drain(ctx, q.busy.idle, q.cancel, q.opts.ShutdownTimeout)
	srv.Shutdown()
	if !errors.Is(err, errStillRunning) {
		q.runners.wait()
	}
	return err
}

// inflight counts running handlers.
type inflight struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed while n == 0
}

func (f *inflight) add() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		f.zero = make(chan struct{})
	}
	f.n++
}

func (f *inflight) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 {
		close(f.zero)
	}
}

// idle returns a channel closed when no handler runs.
func (f *inflight) idle() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	return f.zero
}

// RedisLogger sends go-redis's log lines (failed dials, pool errors) to
// a slog logger as warnings, instead of plain lines on stderr. go-redis
// has one logger for the whole process: a program sets it once, where it
// makes its own logger, with redis.SetLogger(queue.NewRedisLogger(log)).
type RedisLogger struct{ log *slog.Logger }

// NewRedisLogger returns a RedisLogger writing to log.
func NewRedisLogger(log *slog.Logger) RedisLogger { return RedisLogger{log} }

// Printf implements go-redis's logger.
func (l RedisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, "redis: "+strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: "))
}

// asynqLogger sends asynq's logs to slog.
type asynqLogger struct{ log *slog.Logger }

func (l asynqLogger) Debug(args ...any) { l.log.Debug("asynq: " + fmt.Sprint(args...)) }
func (l asynqLogger) Info(args ...any)  { l.log.Info("asynq: " + fmt.Sprint(args...)) }
func (l asynqLogger) Warn(args ...any)  { l.log.Warn("asynq: " + fmt.Sprint(args...)) }
func (l asynqLogger) Error(args ...any) { l.log.Error("asynq: " + fmt.Sprint(args...)) }
func (l asynqLogger) Fatal(args ...any) { l.log.Error("asynq: " + fmt.Sprint(args...)) }
