package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bun"
)

// Group commit. SQLite has one writer at a time and the store keeps one
// writer connection, so write transactions run one after the other. What
// costs is the transaction itself (taking the write lock, writing the
// pages of every index it touched to the WAL at commit) more than its few
// statements. The committer runs the write transactions that callers
// submit while another is running together, in one database transaction:
// each caller's function runs inside a savepoint of its own, so that a
// function that fails (insufficient points, full backlog, duplicate key)
// rolls back its own writes only, and every caller gets its own outcome
// only after the one COMMIT that made its writes durable.
//
// A batch is what was submitted by the time the previous one committed:
// an idle store commits a lone transaction at once, a busy one commits
// many for the price of one.
//
// The savepoints cost two statements per function. While functions keep
// succeeding (calmGroups batches in a row without a failure) a batch runs
// without them; should a function fail then, the whole batch is rolled
// back and run again with savepoints, so the outcome is the same. The
// functions are written to be run more than once (PostgreSQL runs a
// transaction again after a serialization failure, too).

// sqliteBatch and pgBatch bound the transactions committed together, so
// that one batch cannot keep its first caller, or a caller that comes
// while it runs, waiting for long: on SQLite a statement is a call into
// the process, on PostgreSQL a round trip, so a batch there is smaller (a
// burst of 150 jobs' claims and parks in batches of 128 kept another
// account's send waiting most of a second on a loaded machine).
const (
	sqliteBatch = 128
	pgBatch     = 32
)

// calmGroups is how many batches in a row must commit with no function
// failing before batches run without savepoints.
const calmGroups = 32

// txRequest is one caller's transaction.
type txRequest struct {
	ctx  context.Context
	fn   func(ctx context.Context, q queries) error
	done chan error
}

// committer runs the store's write transactions in batches.
type committer struct {
	s        *Store
	maxBatch int // the most transactions committed together
	reqs     chan *txRequest

	mu      sync.RWMutex
	closed  bool
	callers sync.WaitGroup
	stopped chan struct{}

	// busySince is when the first loop's batch began (Unix nanoseconds;
	// 0 while it waits); overflow tells the other loops that it has run
	// for overflowAfter; primaryDone is closed when the first loop ends.
	busySince   atomic.Int64
	overflow    chan struct{}
	primaryDone chan struct{}

	grouped atomic.Int64 // transactions committed in a batch of more than one
	bare    atomic.Int64 // of those, committed in a batch run without savepoints
	redone  atomic.Int64 // batches run without savepoints that a failure rolled back
	calm    atomic.Int64 // batches committed in a row with no function failing
	unfit   atomic.Int64 // batches run again because their deferred changes did not fit together
	joined  atomic.Int64 // new requests inserted together at their batch's end

	batchTimeout time.Duration // see batchTimeout
}

// newCommitter starts a committer with up to loops batches under way at
// once: one where the database has one writer (SQLite), more where it
// runs transactions side by side (PostgreSQL). The first loop takes every
// batch it can; the others are its overflow: they take the transactions
// waiting only once the first loop's batch has run for overflowAfter (a
// large request, a slow commit) or more wait than a batch holds (a
// burst), so that a batch's round trips overlap with another's commit
// then, while quick commits leave the transactions that come meanwhile to
// the next batch of the first loop, which then carries more of them for
// the price of one commit. (Two loops that each took what came gave a
// lone transaction to whichever was idle: with two API nodes and two
// workers on PostgreSQL, 0.9 commits per send instead of 0.7.)
func newCommitter(s *Store, loops, maxBatch int) *committer {
	c := &committer{s: s, maxBatch: maxBatch, reqs: make(chan *txRequest, 4*maxBatch), stopped: make(chan struct{}),
		overflow: make(chan struct{}, 1), primaryDone: make(chan struct{}), batchTimeout: batchTimeout}
	loops = max(loops, 1)
	var running sync.WaitGroup
	running.Add(loops)
	go func() {
		defer running.Done()
		defer close(c.primaryDone)
		c.loop(loops > 1)
	}()
	for range loops - 1 {
		go func() {
			defer running.Done()
			c.overflowLoop()
		}()
	}
	go func() {
		running.Wait()
		close(c.stopped)
	}()
	return c
}

// overflowAfter is how long the first loop's batch runs before the other
// loops take the transactions waiting: longer than a commit of a batch of
// sends takes on a loaded PostgreSQL (at 3 ms the other loop took part
// in most of them), shorter than a batch of a large request's jobs.
const overflowAfter = 8 * time.Millisecond

// errClosed is the answer to a transaction submitted after Close.
func errClosed() error {
	return &push.Error{Kind: push.Unavailable, Reason: "store_closed", RetryAfter: 5 * time.Second,
		Message: "the database is closed: the service is stopping"}
}

// run submits fn and waits for its outcome. A transaction whose caller's
// context ends before it started does not run; once started, it is seen
// through (its statements do not watch the caller's context, which would
// abort the whole batch), and its outcome is what happened.
func (c *committer) run(ctx context.Context, fn func(ctx context.Context, q queries) error) error {
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return errClosed()
	}
	c.callers.Add(1)
	c.mu.RUnlock()
	defer c.callers.Done()
	r := &txRequest{ctx: ctx, fn: safe(fn), done: make(chan error, 1)}
	select {
	case c.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	err := <-r.done
	if p, ok := err.(*fnPanic); ok {
		// fn panicked on the committer: its writes were rolled back, and
		// the panic goes on in the caller's goroutine, where it would
		// have happened without the group commit.
		panic(p.value)
	}
	return err
}

// fnPanic carries the panic of a transaction's function back to its
// caller.
type fnPanic struct{ value any }

func (p *fnPanic) Error() string { return fmt.Sprint("storage: transaction panicked: ", p.value) }

// safe wraps fn so that a panic becomes an error (a *fnPanic): one
// transaction's bug must not stop the committer for every other.
func safe(fn func(ctx context.Context, q queries) error) func(ctx context.Context, q queries) error {
	return func(ctx context.Context, q queries) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = &fnPanic{value: v}
			}
		}()
		return fn(ctx, q)
	}
}

// close waits for the transactions submitted so far and stops the loop.
func (c *committer) close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.stopped
		return
	}
	c.closed = true
	c.mu.Unlock()
	c.callers.Wait()
	close(c.reqs)
	<-c.stopped
}

// loop is the first loop; with overflow it tells the other loops when a
// batch of its runs for overflowAfter.
func (c *committer) loop(overflow bool) {
	batch := make([]*txRequest, 0, c.maxBatch)
	signal := func() {
		select {
		case c.overflow <- struct{}{}:
		default:
		}
	}
	timer := time.AfterFunc(time.Hour, signal) // armed for each batch
	timer.Stop()
	for first := range c.reqs {
		batch = append(batch[:0], first)
		// Let the goroutines that are ready to submit do so first: on a
		// busy server this makes batches several times larger (each
		// commit costs the same however many it carries) for a few
		// microseconds of waiting.
		runtime.Gosched()
		batch = c.more(batch)
		if !overflow {
			c.commit(batch)
			clear(batch)
			continue
		}
		c.busySince.Store(time.Now().UnixNano())
		if len(batch) == c.maxBatch && len(c.reqs) > 0 {
			signal() // more than a batch waits: a burst
		}
		timer.Reset(overflowAfter)
		c.commit(batch)
		timer.Stop()
		c.busySince.Store(0)
		clear(batch)
	}
}

// more adds to batch the transactions waiting, up to a batch's size.
func (c *committer) more(batch []*txRequest) []*txRequest {
	for len(batch) < c.maxBatch {
		select {
		case r, ok := <-c.reqs:
			if !ok {
				return batch
			}
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// overflowLoop is one of the other loops: told that the first loop's
// batch has run for overflowAfter, or that more transactions wait than a
// batch holds, it commits those that wait, and those that come while that
// batch runs.
func (c *committer) overflowLoop() {
	batch := make([]*txRequest, 0, c.maxBatch)
	recheck := time.NewTimer(overflowAfter)
	defer recheck.Stop()
	for {
		select {
		case <-c.overflow:
		case <-c.primaryDone:
			return
		}
		for {
			if batch = c.more(batch[:0]); len(batch) > 0 {
				c.commit(batch)
				clear(batch)
				continue
			}
			if !c.primaryHeld() {
				break
			}
			recheck.Reset(overflowAfter)
			select {
			case r, ok := <-c.reqs:
				if !ok {
					return
				}
				batch = c.more(append(batch[:0], r))
				c.commit(batch)
				clear(batch)
			case <-recheck.C:
			}
		}
	}
}

// loneInBatch reports whether a lone transaction runs as a batch of one
// rather than on its own: on PostgreSQL, where its changes are then
// deferred to its end and sent there in one round trip (see step). An
// accepted request is BEGIN, that and COMMIT, where on its own it is a
// round trip per statement.
func (c *committer) loneInBatch() bool { return c.s.dialect.pipeline != nil }

// primaryHeld reports whether the first loop's batch has run for
// overflowAfter.
func (c *committer) primaryHeld() bool {
	since := c.busySince.Load()
	return since != 0 && time.Since(time.Unix(0, since)) >= overflowAfter
}

// commit runs one batch.
func (c *committer) commit(batch []*txRequest) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- err // not started: nothing was written
			continue
		}
		live = append(live, r)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		if !c.loneInBatch() {
			r := live[0]
			r.done <- c.s.runTxDirect(context.WithoutCancel(r.ctx), r.fn)
			return
		}
	}
	results, err := c.together(live)
	if err != nil {
		var unknown *commitUnknown
		if errors.As(err, &unknown) {
			// The batch may have been written: running its
			// transactions again could apply them twice.
			e := unconfirmed(err)
			for _, r := range live {
				r.done <- e
			}
			return
		}
		if e := c.s.dialect.classify(err); push.ReasonOf(e) == reasonDatabaseUnavailable {
			// The database cannot be reached: each transaction would
			// wait for it again on its own. Nothing of the batch was
			// written (or, for a COMMIT whose answer was lost, it is
			// unknown, as for a transaction of its own).
			for _, r := range live {
				r.done <- e
			}
			return
		}
		// The batch as a whole failed (the database refused BEGIN or
		// COMMIT, or a savepoint): nothing of it was written. Each
		// transaction runs again on its own and gets its own outcome.
		for _, r := range live {
			r.done <- c.s.runTxDirect(context.WithoutCancel(r.ctx), r.fn)
		}
		return
	}
	if len(live) > 1 {
		c.grouped.Add(int64(len(live)))
	}
	for i, r := range live {
		if _, ok := results[i].(retryAlone); ok {
			// The database aborted it to break a conflict (with another
			// node's transaction): run again on its own, as a
			// transaction of its own would have been.
			r.done <- c.s.runTxDirect(context.WithoutCancel(r.ctx), r.fn)
			continue
		}
		r.done <- results[i]
	}
}

// keepDeferred keeps the deferred changes (backlog counts, job moves) of
// the transaction that just succeeded in the batch, to be written at its
// end; dropDeferred forgets those of one that failed.
func (q queries) keepDeferred() {
	q.backlog.keep()
	q.moves.keep()
	q.inserts.keep()
}

func (q queries) dropDeferred() {
	q.backlog.drop()
	q.moves.drop()
	q.inserts.drop()
}

// flushDeferred writes the kept deferred changes at the batch's end: the
// new requests, the job moves, then the backlog counters (which every
// transaction updates: locked last, for the shortest time), in one round
// trip where the dialect pipelines (see step); then the counters whose
// fast path took no row, each by its slow path.
func (q queries) flushDeferred(ctx context.Context) error {
	var steps []step
	if s, ok := q.inserts.step(q); ok {
		steps = append(steps, s)
	}
	if s, ok := q.moves.step(q); ok {
		steps = append(steps, s)
	}
	if q.backlog != nil {
		steps = append(steps, q.backlog.steps(q)...)
	}
	if err := q.runSteps(ctx, steps); err != nil {
		return err
	}
	if q.backlog != nil {
		return q.backlog.flushMissed(ctx, q)
	}
	return nil
}

// retryAlone is the result of a batched transaction that the database
// aborted to break a conflict: it runs again on its own.
type retryAlone struct{ err error }

func (r retryAlone) Error() string { return r.err.Error() }
func (r retryAlone) Unwrap() error { return r.err }

// together runs the batch in one transaction, each function in a
// savepoint, and commits it. It returns each function's outcome, or an
// error when the transaction itself failed.
func (c *committer) together(batch []*txRequest) ([]error, error) {
	results, err := c.tryTogether(batch, true)
	if errors.Is(err, errBatchUnfit) {
		c.unfit.Add(1)
		// The batch's deferred changes did not fit together (a
		// reservation, a counter closed or new, a job moved meanwhile,
		// a key taken, a read of jobs a request of the batch made):
		// each transaction makes its own at once now.
		results, err = c.tryTogether(batch, false)
	}
	return results, err
}

// tryTogether is together with the batch's backlog changes made at its
// end (deferBacklog) or by each transaction.
func (c *committer) tryTogether(batch []*txRequest, deferBacklog bool) ([]error, error) {
	if len(batch) == 1 || c.calm.Load() >= calmGroups {
		// A batch of one needs no savepoint: its failure rolls back only
		// its own writes (see group).
		results, ok, err := c.group(batch, false, deferBacklog)
		if err != nil || ok {
			if ok {
				c.bare.Add(int64(len(batch)))
			}
			return results, err
		}
		// A function failed: nothing was committed. Each in a savepoint
		// now, so that it fails alone.
		c.redone.Add(1)
	}
	results, _, err := c.group(batch, true, deferBacklog)
	if err != nil {
		return nil, err
	}
	c.calm.Add(1)
	for _, e := range results {
		if e != nil {
			c.calm.Store(0)
			break
		}
	}
	return results, nil
}

// failure is the outcome of a function of a batch that failed: retryAlone
// when the database aborted it to break a conflict.
func (c *committer) failure(ferr error) error {
	err := c.s.dialect.classify(ferr)
	if c.s.dialect.isRetryable != nil && c.s.dialect.isRetryable(ferr) {
		return retryAlone{err}
	}
	return err
}

// batchTimeout bounds a batch on a database across the network, whose
// statements do not watch their callers' contexts: a batch stuck on a
// lost connection gives way, and its transactions run again on their own
// (unless its COMMIT was under way: see commitUnknown).
const batchTimeout = 30 * time.Second

// commitUnknown is the failure of a COMMIT sent to a database across the
// network: its answer was lost, or the batch's deadline passed while the
// server was still committing (a stalled disk, a synchronous standby that
// does not answer). The batch may have been written, so its transactions
// must not run again: each caller is told the database is unavailable,
// and finds out what was written once it answers (a resubmission with the
// same Idempotency-Key is answered with the request's jobs, if any).
type commitUnknown struct{ err error }

func (e *commitUnknown) Error() string { return "the commit was not confirmed: " + e.err.Error() }
func (e *commitUnknown) Unwrap() error { return e.err }

// unconfirmed is what the callers of a batch whose COMMIT failed are told.
func unconfirmed(err error) error {
	return databaseUnavailable(err, "the database did not confirm the commit, which may have happened: retry later with the same Idempotency-Key")
}

// group runs the batch in one transaction and commits it. With savepoints,
// each function's failure rolls back its own writes and is its result;
// without, the first failure rolls back the transaction and group reports
// ok false. With deferBacklog the backlog counters are updated once, at
// the end (see backlogBatch); errBatchUnfit says that this failed and
// the batch must run without.
func (c *committer) group(batch []*txRequest, savepoints, deferBacklog bool) (results []error, ok bool, err error) {
	bg := context.Background()
	var deadline time.Time
	if !c.s.dialect.inProcess {
		var cancel context.CancelFunc
		bg, cancel = context.WithTimeout(bg, c.batchTimeout)
		defer cancel()
		deadline, _ = bg.Deadline()
	}
	fnCtx := func(r *txRequest) (context.Context, context.CancelFunc) {
		ctx := context.WithoutCancel(r.ctx)
		if deadline.IsZero() {
			return ctx, noop
		}
		return context.WithDeadline(ctx, deadline)
	}
	var (
		tx   bun.Tx
		conn *sql.Conn
	)
	if c.s.dialect.pipeline != nil {
		// On a connection of its own, so that the batch's end can
		// pipeline its statements there (see step).
		bc, cerr := c.s.w.Conn(bg)
		if cerr != nil {
			return nil, false, cerr
		}
		defer bc.Close()
		conn = bc.Conn
		tx, err = bc.BeginTx(bg, nil)
	} else {
		tx, err = c.s.w.BeginTx(bg, nil)
	}
	if err != nil {
		return nil, false, err
	}
	q := c.s.txQueries(tx)
	q.conn = conn
	q.grouped = true
	if deferBacklog {
		q.backlog = newBacklogBatch()
		if c.s.dialect.batchMoves {
			q.moves = new(moveBatch)
			q.inserts = new(insertBatch)
		}
	}
	results = make([]error, len(batch))
	for i, r := range batch {
		fctx, cancel := fnCtx(r)
		if !savepoints {
			ferr := r.fn(fctx, q)
			cancel()
			if ferr != nil {
				if err := tx.Rollback(); err != nil {
					return nil, false, err
				}
				if errors.Is(ferr, errBatchUnfit) {
					return nil, false, errBatchUnfit
				}
				if len(batch) == 1 {
					// Alone, it rolled back only its own writes: its
					// failure is its outcome, as on its own.
					results[0] = c.failure(ferr)
					return results, true, nil
				}
				return nil, false, nil
			}
			q.keepDeferred()
			continue
		}
		if _, err := q.exec(bg, "SAVEPOINT herald_tx"); err != nil {
			cancel()
			_ = tx.Rollback()
			return nil, false, err
		}
		held := q.shards.clone()
		ferr := r.fn(fctx, q)
		cancel()
		if errors.Is(ferr, errBatchUnfit) {
			_ = tx.Rollback()
			return nil, false, errBatchUnfit
		}
		if ferr != nil {
			if _, err := q.exec(bg, "ROLLBACK TO SAVEPOINT herald_tx"); err != nil {
				_ = tx.Rollback()
				return nil, false, err
			}
			q.dropDeferred()
			q.shards.restore(held) // its row locks ended with its savepoint
			results[i] = c.failure(ferr)
		} else {
			q.keepDeferred()
		}
		if _, err := q.exec(bg, "RELEASE SAVEPOINT herald_tx"); err != nil {
			_ = tx.Rollback()
			return nil, false, err
		}
	}
	var joined int
	if q.inserts != nil {
		joined = len(q.inserts.kept)
	}
	if err := q.flushDeferred(bg); err != nil {
		_ = tx.Rollback()
		return nil, false, err
	}
	if err := tx.Commit(); err != nil {
		if !c.s.dialect.inProcess {
			return nil, false, &commitUnknown{err}
		}
		return nil, false, err
	}
	c.joined.Add(int64(joined))
	return results, true, nil
}
