package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Prepared statements. The hot path of a send (the idempotency record, the
// jobs, their moves, the backlog counters) runs a handful of fixed
// statements. bun writes its arguments into the SQL text, so each of its
// queries is parsed anew; these are written with placeholders, prepared
// once per connection and reused, which spares SQLite's parser (a quarter
// of a send's CPU time before) and PostgreSQL's planning.

// stmtKey names one statement prepared on one database handle.
type stmtKey struct {
	db    *sql.DB
	query string
}

// stmtCache holds the prepared statements of a Store. database/sql
// prepares each on a connection when it is first used there.
type stmtCache struct {
	mu sync.RWMutex
	m  map[stmtKey]*sql.Stmt
}

// get returns the statement prepared on db, or nil when it is not.
func (c *stmtCache) get(db *sql.DB, query string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[stmtKey{db, query}]
}

// prepare prepares query on db (which takes one of its connections)
// unless it is already.
func (c *stmtCache) prepare(ctx context.Context, db *sql.DB, query string) (*sql.Stmt, error) {
	k := stmtKey{db, query}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.m[k]; st != nil {
		return st, nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = make(map[stmtKey]*sql.Stmt)
	}
	c.m[k] = st
	return st, nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		_ = st.Close()
	}
	c.m = nil
}

// dollarPlaceholders rewrites the ? placeholders of query as $1, $2, …
// (PostgreSQL's). The statements here have no ? inside literals.
func dollarPlaceholders(query string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

// preparedStatements are the statements prepared when the store opens,
// on the writer and on the readers. They must be prepared then: inside a
// transaction on SQLite's one writer connection, preparing on the writer
// pool would wait for the connection the transaction holds.
func preparedStatements(d dialect) []string {
	batched := []string{flushBacklogSQL, addBacklogSQL, createBacklogSQL, releaseBacklogSQL}
	if d.backlogShards {
		batched = []string{reserveShardSQL, releaseShardSQL, reserveShardWaitSQL + returningShard, releaseShardWaitSQL + returningShard}
	}
	if d.batchMoves {
		batched = append(batched, flushMovesSQL, insertJobsSQL,
			withIdempotencySQL+insertJobReturningSQL, withIdempotencySQL+insertJobsSQL)
	}
	return append(batched,
		insertJobSQL, insertJobReturningSQL, selectJobSQL, moveJobSQL, moveJobReturningSQL,
		selectIdempotencySQL, insertIdempotencySQL,
		chargeSQL, insertLedgerSQL,
		selectAuthEpochSQL, bumpAuthEpochSQL, selectCatalogEpochSQL, bumpCatalogEpochSQL,
		"SAVEPOINT herald_tx", "ROLLBACK TO SAVEPOINT herald_tx", "RELEASE SAVEPOINT herald_tx",
	)
}

// prepareAll prepares the hot statements on the writer and the readers.
func (s *Store) prepareAll(ctx context.Context) error {
	dbs := []*sql.DB{s.w.DB}
	if s.r.DB != s.w.DB {
		dbs = append(dbs, s.r.DB)
	}
	for _, db := range dbs {
		for _, query := range preparedStatements(s.dialect) {
			query = s.native(query)
			if _, err := s.stmts.prepare(ctx, db, query); err != nil {
				return fmt.Errorf("storage: prepare %q: %w", query, err)
			}
		}
	}
	return nil
}

// stmt returns query (written with ? placeholders) prepared for use by
// q: on the transaction's connection inside a transaction, else on the
// writer or the reader pool. done releases it.
func (q queries) stmt(ctx context.Context, write bool, query string) (st *sql.Stmt, done func(), err error) {
	query = q.store.native(query)
	db := q.store.r.DB
	if write || q.tx != nil {
		db = q.store.w.DB
	}
	if q.tx != nil {
		if tst := q.txStmts[query]; tst != nil {
			return tst, noop, nil
		}
	}
	st = q.store.stmts.get(db, query)
	switch {
	case q.tx != nil && st != nil:
		// Bound to the transaction until it ends (database/sql closes it
		// then).
		tst := q.tx.StmtContext(ctx, st)
		q.txStmts[query] = tst
		return tst, noop, nil
	case q.tx != nil:
		// Not among the prepared statements: prepared on the
		// transaction's connection, for this once.
		// (A variable of its own: were the closure to capture st, st
		// would move to the heap on every call.)
		once, err := q.tx.PrepareContext(ctx, query)
		if err != nil {
			return nil, nil, err
		}
		return once, func() { _ = once.Close() }, nil
	case st == nil:
		if st, err = q.store.stmts.prepare(ctx, db, query); err != nil {
			return nil, nil, err
		}
	}
	return st, noop, nil
}

// txStmts are the statements bound to one transaction, by text.
type txStmts map[string]*sql.Stmt

func noop() {}

// native returns query, written with ? placeholders, with the
// database's own, rewritten once.
func (s *Store) native(query string) string {
	if s.dialect.placeholders == nil {
		return query
	}
	if v, ok := s.nativeQueries.Load(query); ok {
		return v.(string)
	}
	v := s.dialect.placeholders(query)
	s.nativeQueries.Store(query, v)
	return v
}

// quick returns the context for a statement that is over in microseconds
// on a database in the process (SQLite): there, the driver watches a cancelable context with a
// goroutine of its own per statement, which costs more than the statement.
// Elsewhere (a database across the network) the caller's context stays,
// so that a lost connection cannot hold the caller.
func (q queries) quick(ctx context.Context) context.Context {
	if q.store.dialect.inProcess {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// exec runs a prepared write statement.
func (q queries) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, done, err := q.stmt(ctx, true, query)
	if err != nil {
		return nil, err
	}
	defer done()
	return st.ExecContext(ctx, args...)
}

// queryRow runs a prepared statement that returns at most one row and
// scans it into dest; sql.ErrNoRows when there is none. write says that
// the statement writes (UPDATE … RETURNING), so it runs on the writer.
func (q queries) queryRow(ctx context.Context, write bool, query string, args []any, dest ...any) error {
	st, done, err := q.stmt(ctx, write, query)
	if err != nil {
		return err
	}
	defer done()
	return st.QueryRowContext(ctx, args...).Scan(dest...)
}
