package storage

import (
	"context"
	"database/sql"
)

// A step is one statement of the changes a batch of the group commit
// writes at its end (flushDeferred): the new requests' insert, the jobs'
// moves, the backlog counters' changes. On PostgreSQL the steps of a batch
// go to the database together, in one round trip (a pipeline), where each
// was a round trip of its own; on SQLite, whose statements are calls into
// the process, they run one after the other.
type step struct {
	query string // with ? placeholders
	args  []any
	// rows says that the statement returns rows, which done reads.
	rows bool
	// done takes the statement's outcome: the number of rows it changed,
	// its rows (when rows is set), or the error it failed with. An error
	// of done ends the steps: the later ones are not run, or, sent along
	// already, fail with the transaction.
	done func(affected int64, rows stepRows, err error) error
}

// stepRows are the rows a step returns: database/sql's or pgx's.
type stepRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// runSteps runs steps in order, in one round trip where the dialect
// pipelines statements and the transaction has a connection of its own.
func (q queries) runSteps(ctx context.Context, steps []step) error {
	if len(steps) > 1 && q.conn != nil && q.store.dialect.pipeline != nil {
		for i := range steps {
			steps[i].query = q.store.native(steps[i].query)
		}
		return q.store.dialect.pipeline(ctx, q.conn, steps)
	}
	for _, s := range steps {
		if err := q.runStep(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// runStep runs one step as a prepared statement.
func (q queries) runStep(ctx context.Context, s step) error {
	st, done, err := q.stmt(ctx, true, s.query)
	if err != nil {
		return s.done(0, nil, err)
	}
	defer done()
	if s.rows {
		rows, err := st.QueryContext(ctx, s.args...)
		if err != nil {
			return s.done(0, nil, err)
		}
		defer rows.Close()
		return s.done(0, rows, nil)
	}
	var n int64
	res, err := st.ExecContext(ctx, s.args...)
	if err == nil {
		n, err = res.RowsAffected()
	}
	return s.done(n, nil, err)
}

// pipelined runs steps, their queries in the database's own placeholders,
// on conn in one round trip: a dialect's pipeline.
type pipelined func(ctx context.Context, conn *sql.Conn, steps []step) error
