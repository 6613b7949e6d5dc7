// Package storage implements push.Store on bun: SQLite (the embedded
// default, modernc.org/sqlite in pure Go) and PostgreSQL (pgx), with one
// schema and one set of queries for both.
package storage

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/uptrace/bun"
)

// Store is a push.Store on a SQL database.
type Store struct {
	queries
	w       *bun.DB // the writer: every read-write transaction runs here
	r       *bun.DB // readers; the same as w when the database allows one connection
	dialect dialect
	closers []func() error
	sealer  *Sealer // seals bot configs at rest; nil stores them as given

	commit        *committer // group commit of write transactions; nil: one database transaction each
	stmts         stmtCache
	nativeQueries sync.Map // statement text → the same with the database's placeholders
	closeOnce     sync.Once
	closeErr      error
	retried       atomic.Int64      // transactions run again after the database aborted them
	statements    *statementCounter // PostgreSQL's; nil on SQLite
}

var _ push.Store = (*Store)(nil)

// Option configures Open.
type Option func(*Store)

// WithSealer encrypts bot configurations (which hold platform credentials)
// in the database with s. Without it they are stored as given; values
// sealed earlier then cannot be read.
func WithSealer(s *Sealer) Option { return func(st *Store) { st.sealer = s } }

// Open opens the database named by dsn, creates or upgrades its schema, and
// returns it as a Store.
//
// dsn is a SQLite file path ("herald.db"), "file:…" URI, or ":memory:" for a
// private in-memory database, or a PostgreSQL URL
// ("postgres://user:password@host:5432/herald?sslmode=disable"; the
// parameter pool_max_conns sets the size of the connection pool, default
// 10). Several processes may open one PostgreSQL database at once.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	var (
		s   *Store
		err error
	)
	if IsPostgres(dsn) {
		s, err = openPostgres(ctx, dsn)
	} else {
		s, err = openSQLite(ctx, dsn)
	}
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(s)
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.prepareAll(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func newStore(w, r *bun.DB, d dialect, closers ...func() error) *Store {
	s := &Store{w: w, r: r, dialect: d, closers: closers}
	s.queries = queries{r: r, w: w, store: s}
	return s
}

// groupCommit makes the store commit the write transactions of
// concurrent callers together (see committer), with up to loops batches
// of at most maxBatch transactions under way at once.
func (s *Store) groupCommit(loops, maxBatch int) { s.commit = newCommitter(s, loops, maxBatch) }

// Update implements push.Store: fn runs in one read-write transaction.
// The transactions of concurrent callers are committed together, each fn
// in a savepoint of its own: a fn that returns an error rolls back its
// own writes only, and Update returns once the writes of fn are
// committed.
func (s *Store) Update(ctx context.Context, fn func(ctx context.Context, tx push.Tx) error) error {
	return s.runTx(ctx, func(ctx context.Context, q queries) error { return fn(ctx, q) })
}

// maxTxAttempts bounds how often a transaction the database aborted to
// break a conflict (serialization failure, deadlock) is run again.
const maxTxAttempts = 5

// runTx runs fn in a read-write transaction: through the group commit
// when the store has one, else on its own.
func (s *Store) runTx(ctx context.Context, fn func(ctx context.Context, q queries) error) error {
	if s.commit != nil {
		return s.commit.run(ctx, fn)
	}
	return s.runTxDirect(ctx, fn)
}

// runTxDirect runs fn in a read-write transaction of its own on the
// writer, again when the database aborted it to break a conflict, and
// classifies the error.
func (s *Store) runTxDirect(ctx context.Context, fn func(ctx context.Context, q queries) error) error {
	for attempt := 1; ; attempt++ {
		err := s.w.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return fn(ctx, s.txQueries(tx))
		})
		if err == nil || attempt >= maxTxAttempts || s.dialect.isRetryable == nil || !s.dialect.isRetryable(err) {
			return s.dialect.classify(err)
		}
		s.retried.Add(1)
		// Back off a little, with jitter, so the conflicting transactions
		// do not meet again.
		wait := time.Duration(attempt)*5*time.Millisecond + rand.N(5*time.Millisecond)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// Ping implements push.Store.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.w.PingContext(ctx); err != nil {
		return s.dialect.classify(err)
	}
	return nil
}

// Close implements push.Store: it waits for the transactions under way,
// then closes the database.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.commit != nil {
			s.commit.close()
		}
		s.stmts.close()
		for _, c := range s.closers {
			if err := c(); err != nil && s.closeErr == nil {
				s.closeErr = err
			}
		}
	})
	return s.closeErr
}

// DB returns the writer database, for tests and tools that inspect it.
func (s *Store) DB() *bun.DB { return s.w }

// queries holds every operation; outside a transaction, reads go to the
// reader pool and writes to the writer.
type queries struct {
	r, w  bun.IDB
	store *Store
	tx    *sql.Tx // the transaction's, inside one; nil outside
	// conn is the transaction's connection where the transaction was
	// begun on one of its own (a batch of the group commit), for the
	// dialect's pipeline; nil otherwise.
	conn *sql.Conn
	// txStmts are the prepared statements bound to tx so far: a
	// transaction binds each once, however often it runs it.
	txStmts txStmts
	// backlog, in a batch of the group commit, collects the backlog
	// changes of the batch's transactions (nil: each is made at once).
	backlog *backlogBatch
	// moves, in such a batch on PostgreSQL, collects the moves of jobs
	// whose state the mover knew (nil: each is made at once).
	moves *moveBatch
	// inserts, in such a batch on PostgreSQL, collects the new requests
	// (idempotency records and jobs) of the batch's transactions.
	inserts *insertBatch
	// shards are the backlog counters' rows the transaction holds (nil
	// outside one, or where a counter is one row).
	shards heldShards
	// grouped says that the transaction is a batch of the group commit.
	grouped bool
}

// txQueries are the operations inside the transaction tx.
func (s *Store) txQueries(tx bun.Tx) queries {
	q := queries{r: tx, w: tx, store: s, tx: tx.Tx, txStmts: make(txStmts)}
	if s.dialect.backlogShards {
		q.shards = make(heldShards)
	}
	return q
}

// atomic runs fn in a transaction: the current one inside Update, or a new
// one outside.
func (q queries) atomic(ctx context.Context, fn func(ctx context.Context, q queries) error) error {
	if q.tx != nil {
		return fn(ctx, q)
	}
	return q.store.runTx(ctx, fn)
}

// fail classifies a database error for the engine.
func (q queries) fail(err error, op string) error {
	if err == nil {
		return nil
	}
	if e := q.store.dialect.classify(err); push.KindOf(e) != push.Internal {
		return e
	}
	return push.Wrap(err, "storage: "+op)
}

func notFound(what string, id any) error {
	return push.Errorf(push.NotFound, what+"_not_found", "%s %v does not exist", what, id)
}

func isNoRows(err error) bool { return err == sql.ErrNoRows }

// page bounds a list query as push.Tx's lists are: ids below the cursor's,
// newest (highest id) first, at most limit rows (all when limit is 0).
func page(q *bun.SelectQuery, cursor string, limit int) *bun.SelectQuery {
	if before := push.CursorID(cursor); before > 0 {
		q = q.Where("id < ?", before)
	}
	q = q.Order("id DESC")
	if limit > 0 {
		q = q.Limit(int64(limit))
	}
	return q
}
