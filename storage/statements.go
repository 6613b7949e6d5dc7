package storage

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// statementCounter counts the statements a store sends to PostgreSQL
// (BEGIN and COMMIT included; those of a pipeline one by one, though the
// pipeline is one round trip), which is what a send costs the shared
// database. It is pgx's query and batch tracer.
type statementCounter struct{ n, commits atomic.Int64 }

var (
	_ pgx.QueryTracer = (*statementCounter)(nil)
	_ pgx.BatchTracer = (*statementCounter)(nil)
)

// TraceQueryStart implements pgx.QueryTracer.
func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	if d.SQL == "commit" { // pgx's own, for database/sql's Commit
		c.commits.Add(1)
	}
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceBatchStart implements pgx.BatchTracer.
func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer: a statement of a pipeline
// (see step) counts as one.
func (c *statementCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.n.Add(1)
}

// TraceBatchEnd implements pgx.BatchTracer.
func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// Statements returns the number of statements the store has sent to
// PostgreSQL so far (BEGIN and COMMIT included), and false on SQLite,
// where a statement is a call into the process and is not counted.
func (s *Store) Statements() (int64, bool) {
	if s.statements == nil {
		return 0, false
	}
	return s.statements.n.Load(), true
}

// Commits returns the number of transactions the store has committed on
// PostgreSQL so far (false on SQLite).
func (s *Store) Commits() (int64, bool) {
	if s.statements == nil {
		return 0, false
	}
	return s.statements.commits.Load(), true
}
