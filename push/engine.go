package push

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
)

// Options configure an Engine. Store, Queue and Platforms are required;
// every other field has a default.
type Options struct {
	Store     Store
	Queue     Queue
	Platforms map[string]Platform // by platform name, e.g. "telegram"

	Notifier    Notifier    // default: a LocalNotifier
	RateLimiter RateLimiter // default: a LocalRateLimiter
	Clock       Clock       // default: SystemClock
	Logger      *slog.Logger
	Observer    Observer // default: NopObserver

	Limits Limits
	Points Points

	// KeyPrefix starts newly generated API keys (default "hrd").
	KeyPrefix string
	// LegacyKeyPrefixes are earlier prefixes whose keys stay valid.
	LegacyKeyPrefixes []string

	// Shared says that other Herald processes work on the same store. When
	// false (the embedded default), Start treats jobs left running as
	// orphans of a previous process and makes them uncertain (but those
	// waiting to retry, which sent nothing). When true, a job left running
	// by a node that died is made uncertain when the queue hands it to a
	// worker again, or by the reconciler once its worker claimed it longer
	// ago than any live worker takes (the send window, one platform call
	// and a minute).
	Shared bool
	// SweepInterval is how often what the retention no longer keeps (old
	// jobs, idempotency records, event ids) is deleted (default 30 s). Queued jobs past their queue-wait limit are expired
	// every second, or every SweepInterval when it is shorter.
	SweepInterval time.Duration
	// ReconcileInterval, when set, is how often the reconciler runs (see
	// Reconcile), for queues that can lose ids (default 0: off).
	ReconcileInterval time.Duration
	// RetryBackoff is the first wait before a retryable platform error is
	// tried again; it doubles per attempt (default 1 s). A job waiting to
	// retry does not hold a worker: its worker hands it back to the queue,
	// due at its next attempt.
	RetryBackoff time.Duration
	// BotConcurrency caps the jobs of one bot being sent at once, so that
	// one bot or account cannot take every worker (default: a quarter of
	// the queue's workers when the queue has a Workers() int method, at
	// least 1; without one, or when negative, no cap). A job over its
	// bot's cap goes back to the queue for about BusyDelay, without
	// counting as an attempt. With a SendSlots shared by several nodes the
	// cap holds across them.
	BotConcurrency int
	// BusyDelay is how long a job turned away by its bot's cap waits in
	// the queue before it is tried again (default 200 ms, give or take a
	// quarter).
	BusyDelay time.Duration
	// Slots counts the bots' jobs being sent (default: a LocalSendSlots,
	// for this process alone).
	Slots SendSlots
	// Passwords hashes and checks users' passwords; without it users
	// cannot be made or sign in (package password has argon2id).
	Passwords PasswordHasher
	// Sessions configure sign-in and sign-up.
	Sessions Sessions
	// Receivers configure the bots' outbound receivers (inbound events).
	Receivers Receivers
	// AuthRecheck is how long the store's count of revocations, read to
	// validate the remembered API keys, is trusted before it is read again
	// (see Authenticate). 0 (the default) reads it for every request, so
	// that a key revoked by any process stops working at once; a store
	// across the network may trade that for one read per interval, a
	// revocation made elsewhere then taking up to AuthRecheck.
	AuthRecheck time.Duration
}

// Engine is Herald's push engine. Its methods are safe for concurrent use.
type Engine struct {
	store     Store
	queue     Queue
	platforms map[string]Platform
	notifier  Notifier
	limiter   RateLimiter
	clock     Clock
	log       *slog.Logger
	obs       Observer
	limits    Limits
	points    Points
	keyPrefix string
	prefixes  map[string]bool
	opts      Options
	auth      *authCache // nil when the store cannot tell of revocations
	catalog   catalog    // bots and targets, which never change once created
	handoff   handoff    // settled jobs for this process's waiting requests
	replays   replayCache
	slots     SendSlots
	jobBots   jobBots // the bots of recent jobs, by id
	reads     jobReads

	accounts AccountService
	keys     KeyService
	bots     BotService
	targets  TargetService
	jobs     JobService
	ledger   LedgerService
	users    UserService
	sessions SessionService
	invites  InviteService
	audit    AuditService

	events    EventService
	bindCodes BindCodeService
	receivers receiverSet
	recvOpts  Receivers

	sessionOpts Sessions
	throttle    throttle // failed sign-ins
	dummyOnce   sync.Once
	dummy       string // a password hash that matches nothing, for unknown emails

	draining atomic.Bool
	started  atomic.Bool
	halted   chan struct{} // closed when Stop has stopped the workers: waits end at once
	stopMu   sync.Mutex
	stopBg   context.CancelFunc
	bgDone   chan struct{}
}

// New builds an Engine from opts.
func New(opts Options) (*Engine, error) {
	if opts.Store == nil {
		return nil, errors.New("push: Options.Store is required")
	}
	if opts.Queue == nil {
		return nil, errors.New("push: Options.Queue is required")
	}
	e := &Engine{
		store:     opts.Store,
		queue:     opts.Queue,
		platforms: make(map[string]Platform, len(opts.Platforms)),
		notifier:  opts.Notifier,
		limiter:   opts.RateLimiter,
		clock:     opts.Clock,
		log:       opts.Logger,
		obs:       opts.Observer,
		limits:    opts.Limits.withDefaults(),
		points:    opts.Points.withDefaults(),
		keyPrefix: opts.KeyPrefix,
		prefixes:  make(map[string]bool),
		opts:      opts,
		halted:    make(chan struct{}),
	}
	if l := e.limits; l.JobRetention > 0 && l.JobRetention < l.IdempotencyTTL {
		return nil, fmt.Errorf("push: the job retention (%s) is shorter than the idempotency records' (%s): a request sent again with its Idempotency-Key would find its jobs gone; keep jobs at least as long", l.JobRetention, l.IdempotencyTTL)
	}
	for name, p := range opts.Platforms {
		e.platforms[name] = p
	}
	if e.clock == nil {
		e.clock = SystemClock{}
	}
	if e.notifier == nil {
		e.notifier = NewLocalNotifier()
	}
	if sn, ok := e.notifier.(SettledNotifier); ok {
		sn.OnSettled(e.handoff.put) // kept only for a request of this process that waits
	}
	if e.limiter == nil {
		e.limiter = NewLocalRateLimiter(e.clock)
	}
	if e.log == nil {
		e.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if e.obs == nil {
		e.obs = NopObserver{}
	}
	if e.keyPrefix == "" {
		e.keyPrefix = DefaultKeyPrefix
	}
	for _, p := range append([]string{e.keyPrefix}, opts.LegacyKeyPrefixes...) {
		if p == "" {
			continue
		}
		if _, ok := splitKey(p + "_x"); !ok {
			return nil, fmt.Errorf("push: key prefix %q is not printable ASCII without spaces or underscores", p)
		}
		e.prefixes[p] = true
	}
	if e.opts.SweepInterval <= 0 {
		e.opts.SweepInterval = 30 * time.Second
	}
	if e.opts.RetryBackoff <= 0 {
		e.opts.RetryBackoff = time.Second
	}
	if e.opts.BusyDelay <= 0 {
		e.opts.BusyDelay = 200 * time.Millisecond
	}
	e.slots = opts.Slots
	if e.slots == nil {
		e.slots = &LocalSendSlots{}
	}
	e.accounts, e.keys, e.bots, e.targets, e.jobs, e.ledger = AccountService{e}, KeyService{e}, BotService{e}, TargetService{e}, JobService{e}, LedgerService{e}
	e.users, e.sessions, e.invites, e.audit = UserService{e}, SessionService{e}, InviteService{e}, AuditService{e}
	e.sessionOpts = opts.Sessions.withDefaults()
	if !e.sessionOpts.SignUp.Valid() {
		return nil, fmt.Errorf("push: sign-up mode %q is not known: use closed, invite or open", e.sessionOpts.SignUp)
	}
	e.throttle.init()
	e.events, e.bindCodes = EventService{e}, BindCodeService{e}
	e.receivers.init()
	e.recvOpts = opts.Receivers.withDefaults()
	e.recvOpts.PublicURL = strings.TrimRight(e.recvOpts.PublicURL, "/")
	e.auth = newAuthCache(e.store, max(opts.AuthRecheck, 0))
	e.catalog.init()
	e.handoff.init()
	e.replays.init()
	return e, nil
}

// Limits returns the limits in force.
func (e *Engine) Limits() Limits { return e.limits }

// PointsPolicy returns the points configuration in force.
func (e *Engine) PointsPolicy() Points { return e.points }

// Start recovers the jobs of a previous run, starts the queue's workers and
// the background sweeper. Without Options.Shared, jobs found running are
// made uncertain (they were being sent when the previous process stopped)
// and queued jobs are enqueued again.
func (e *Engine) Start(ctx context.Context) error {
	if !e.started.CompareAndSwap(false, true) {
		return errors.New("push: engine already started")
	}
	if !e.opts.Shared {
		if err := e.recoverOrphans(ctx); err != nil {
			return err
		}
	}
	if err := e.requeue(ctx, time.Time{}); err != nil {
		return err
	}
	if err := e.queue.Start(e.handle); err != nil {
		return fmt.Errorf("push: start queue: %w", err)
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.stopMu.Lock()
	e.stopBg = cancel
	e.bgDone = make(chan struct{})
	e.stopMu.Unlock()
	go e.background(bg)
	return nil
}

// Drain makes the engine refuse new sends with Unavailable while queries,
// cancels and running sends go on. It is the first step of a graceful stop.
func (e *Engine) Drain() { e.draining.Store(true) }

// Draining reports whether the engine refuses new sends.
func (e *Engine) Draining() bool { return e.draining.Load() }

// Stop drains the engine, stops the queue (running sends finish until ctx
// ends) and the background sweeper. Requests still waiting for their jobs
// are answered at once (202 for what is pending). Queued jobs stay queued
// for the next start.
func (e *Engine) Stop(ctx context.Context) error {
	e.Drain()
	err := e.queue.Stop(ctx)
	e.stopMu.Lock()
	select {
	case <-e.halted:
	default:
		close(e.halted)
	}
	cancel, done := e.stopBg, e.bgDone
	e.stopBg = nil
	e.stopMu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	return err
}

func (e *Engine) background(ctx context.Context) {
	defer close(e.bgDone)
	receivers := make(chan struct{})
	go func() {
		defer close(receivers)
		e.runReceivers(ctx)
	}()
	defer func() { <-receivers }()
	forgetting := make(chan struct{})
	go func() {
		defer close(forgetting)
		e.forgetEvery(ctx, e.opts.SweepInterval)
	}()
	defer func() { <-forgetting }()
	// Expiry looks often, so that a job expires within moments of its
	// limit, however short: the query reads the index of queued jobs,
	// which the backlog limits keep small.
	expiry := time.NewTicker(min(e.opts.SweepInterval, expiryInterval))
	defer expiry.Stop()
	var reconcile <-chan time.Time
	if e.opts.ReconcileInterval > 0 {
		t := time.NewTicker(e.opts.ReconcileInterval)
		defer t.Stop()
		reconcile = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-expiry.C:
			if err := e.expireQueued(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("expiring queued jobs failed", "err", err)
			}
		case <-reconcile:
			if err := e.Reconcile(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("reconcile failed", "err", err)
			}
		}
	}
}

// Reconcile repairs what a queue that lost ids or a node that died leaves
// behind: it hands queued jobs older than ReconcileInterval, and jobs
// waiting to retry that were due longer ago, to the queue again
// (enqueueing is idempotent), with Options.Shared makes uncertain the
// jobs running for longer than any live worker takes, and has the store
// recount its backlog counters when it can (BacklogRecounter). It runs
// every ReconcileInterval after Start; tests call it directly.
func (e *Engine) Reconcile(ctx context.Context) error {
	cutoff := e.clock.Now().Add(-e.opts.ReconcileInterval)
	errs := []error{e.requeue(ctx, cutoff)}
	if e.opts.Shared {
		errs = append(errs, e.recoverStale(ctx))
	}
	if rc, ok := e.store.(BacklogRecounter); ok {
		n, err := rc.RecountBacklog(ctx)
		if n > 0 {
			e.log.Warn("backlog counters had drifted from the jobs and were corrected", "counters", n)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// staleAfter is how long a job may be running before its worker is taken
// for dead: the send window, one more platform call, and a minute to
// record the outcome.
func (e *Engine) staleAfter() time.Duration {
	return e.limits.SendWindow + e.limits.AttemptTimeout + time.Minute
}

// recoverStale makes uncertain the jobs that have been running for longer
// than staleAfter: their worker died and the queue no longer holds them
// (for example Redis lost its data), so nothing else would settle them.
func (e *Engine) recoverStale(ctx context.Context) error {
	ids, err := e.store.FindJobs(ctx, StateRunning, time.Time{}, 0)
	if err != nil || len(ids) == 0 {
		return err
	}
	jobs, err := e.store.Jobs(ctx, ids)
	if err != nil {
		return err
	}
	now := e.clock.Now()
	limit := e.staleAfter()
	msg := fmt.Sprintf("the worker sending the job stopped (no outcome after %s); delivery is unknown: check the platform, then resolve the job", limit)
	for _, j := range jobs {
		// A job is claimed by a worker (started, or resumed after a
		// retry's wait) when it last changed.
		if j.State != StateRunning || !j.RetryAt.IsZero() || now.Sub(j.UpdatedAt) < limit {
			continue // a job waiting to retry is handed over again by requeue
		}
		// The move is a compare-and-set from running: a job that settled
		// since it was read is a Conflict and is left alone (a job is
		// running once only, so one still running is still that run).
		err := e.update(ctx, func(ctx context.Context, tx Tx, ev *txEvents) error {
			_, err := e.settle(ctx, tx, ev, j, StateUncertain, msg, "", now)
			return err
		})
		switch {
		case IsKind(err, Conflict):
		case err != nil:
			return fmt.Errorf("push: recover stale job %s: %w", j.ID, err)
		default:
			e.log.Warn("a job running past any worker's time limit is now uncertain", "job", j.ID, "started", j.StartedAt, "claimed", j.UpdatedAt)
			e.notify(ctx, j.ID)
		}
	}
	return nil
}

// Sweep expires queued jobs that passed their queue-wait limit (returning
// their points) and deletes what the retention no longer keeps (see
// forget). After Start, expiry runs every second and the deletions every
// SweepInterval, apart from each other; tests call Sweep directly.
func (e *Engine) Sweep(ctx context.Context) error {
	if err := e.expireQueued(ctx); err != nil {
		return err
	}
	return e.forget(ctx)
}

// expiryInterval is how often queued jobs are checked for their
// queue-wait limit.
const expiryInterval = time.Second

// expireQueued expires the queued jobs past their queue-wait limit,
// returning their points.
func (e *Engine) expireQueued(ctx context.Context) error {
	now := e.clock.Now()
	for {
		ids, err := e.store.FindJobs(ctx, StateQueued, now, 500)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := e.expire(ctx, id, now); err != nil && !IsKind(err, Conflict) {
				return err
			}
		}
		if len(ids) < 500 {
			return nil
		}
	}
}

// expiredMessage is the error of a job that expired in the queue.
func (e *Engine) expiredMessage(j Job) string {
	return fmt.Sprintf("not started within the queue-wait limit of %s", e.limits.QueueWait) + pointsReturned(j)
}

// expire moves a queued job past its deadline to expired.
func (e *Engine) expire(ctx context.Context, id string, now time.Time) (bool, error) {
	var moved bool
	err := e.update(ctx, func(ctx context.Context, tx Tx, ev *txEvents) error {
		moved = false
		j, err := tx.Job(ctx, id)
		if err != nil {
			return err
		}
		if j.State != StateQueued || now.Before(j.ExpiresAt) {
			return nil
		}
		if _, err := e.settle(ctx, tx, ev, j, StateExpired, e.expiredMessage(j), "", now); err != nil {
			return err
		}
		moved = true
		return nil
	})
	if moved {
		e.notify(ctx, id)
	}
	return moved, err
}

// recoverOrphans makes uncertain every job left running by a previous
// process: it may or may not have reached the platform.
func (e *Engine) recoverOrphans(ctx context.Context) error {
	ids, err := e.store.FindJobs(ctx, StateRunning, time.Time{}, 0)
	if err != nil {
		return fmt.Errorf("push: find running jobs: %w", err)
	}
	now := e.clock.Now()
	orphans := 0
	for _, id := range ids {
		err := e.update(ctx, func(ctx context.Context, tx Tx, ev *txEvents) error {
			j, err := tx.Job(ctx, id)
			if err != nil || j.State != StateRunning || !j.RetryAt.IsZero() {
				return err // a job waiting to retry sent nothing: requeue hands it over again
			}
			orphans++
			_, err = e.settle(ctx, tx, ev, j, StateUncertain, "the process stopped while the message was being sent; delivery is unknown: check the platform, then resolve the job", "", now)
			return err
		})
		if err != nil {
			return fmt.Errorf("push: recover job %s: %w", id, err)
		}
	}
	if orphans > 0 {
		e.log.Warn("jobs left running by a previous process are now uncertain", "count", orphans)
	}
	return nil
}

// requeue hands queued jobs created before cutoff (all when zero), and
// running jobs waiting to retry that were due before cutoff (all when
// zero), to the queue again. A job handed over before it is due goes back
// to the queue until it is.
func (e *Engine) requeue(ctx context.Context, cutoff time.Time) error {
	ids, err := e.store.FindJobs(ctx, StateQueued, time.Time{}, 0)
	if err != nil {
		return fmt.Errorf("push: find queued jobs: %w", err)
	}
	running, err := e.store.FindJobs(ctx, StateRunning, time.Time{}, 0)
	if err != nil {
		return fmt.Errorf("push: find running jobs: %w", err)
	}
	// Without a cutoff every queued job is handed over; the other jobs
	// are read to see whether they qualify.
	check := running
	if !cutoff.IsZero() {
		check = append(slices.Clip(ids), running...)
		ids = nil
	}
	if len(check) > 0 {
		jobs, err := e.store.Jobs(ctx, check)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			switch {
			case j.State == StateQueued && j.CreatedAt.Before(cutoff):
				ids = append(ids, j.ID)
			case j.State == StateRunning && !j.RetryAt.IsZero() && (cutoff.IsZero() || j.RetryAt.Before(cutoff)):
				ids = append(ids, j.ID)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := e.queue.Enqueue(ctx, ids...); err != nil {
		return fmt.Errorf("push: enqueue %d queued jobs: %w", len(ids), err)
	}
	return nil
}

// settle moves j to state to inside tx and applies the move's side effects:
// a job leaving queued/running frees its place in the backlog, and a
// canceled or expired job (or a failed one, when the policy says so) gets
// its points back, once. The move and the refund are recorded in ev for the
// observer.
func (e *Engine) settle(ctx context.Context, tx Tx, ev *txEvents, j Job, to State, msg, platformIndex string, now time.Time) (Job, error) {
	if !CanMove(j.State, to) {
		return j, Errorf(Conflict, ReasonStateChanged, "job %s is %s and cannot become %s", j.ID, j.State, to)
	}
	nj, err := tx.MoveJob(ctx, JobMove{ID: j.ID, From: j.State, To: to, At: now, Error: msg, PlatformIndex: platformIndex, RetryAt: j.RetryAt, Job: &j})
	if err != nil {
		return j, err
	}
	if j.State.Active() && !to.Active() {
		if err := tx.ReleaseBacklog(ctx, j.BotID, 1); err != nil {
			return j, err
		}
	}
	if nj.Cost > 0 && (to.Refunds() || to == StateFailed && e.points.RefundFailed) {
		refunded, err := tx.Refund(ctx, LedgerEntry{AccountID: nj.AccountID, JobID: nj.ID, Kind: LedgerRefund, Amount: nj.Cost, At: now})
		if err != nil {
			return j, err
		}
		if refunded {
			ev.refunded += nj.Cost
		}
	}
	switch {
	case j.State == StateUncertain:
		ev.resolved = append(ev.resolved, nj) // it was counted as uncertain
	case to.Settled():
		ev.settled = append(ev.settled, nj)
	}
	return nj, nil
}

func (e *Engine) notify(ctx context.Context, ids ...string) {
	if err := e.notifier.Notify(context.WithoutCancel(ctx), ids...); err != nil {
		e.log.Warn("completion notice failed; waiters will poll", "err", err)
	}
}

// notifySettled announces the settled job j, with its row where the
// notifier carries rows (see SettledNotifier).
func (e *Engine) notifySettled(ctx context.Context, j Job) {
	sn, ok := e.notifier.(SettledNotifier)
	if !ok {
		e.notify(ctx, j.ID)
		return
	}
	j.Message = Message{}
	if err := sn.NotifySettled(context.WithoutCancel(ctx), j); err != nil {
		e.log.Warn("completion notice failed; waiters will poll", "err", err)
	}
}

// dummyHash returns a hash of a random password, which an unknown email is
// checked against so that its answer takes as long as a wrong password's.
func (e *Engine) dummyHash() string {
	e.dummyOnce.Do(func() {
		if h, err := e.opts.Passwords.Hash(randomCode(32, base62)); err == nil {
			e.dummy = h
		}
	})
	return e.dummy
}
