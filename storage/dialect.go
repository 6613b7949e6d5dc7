package storage

import (
	"context"
	"errors"
	"time"

	"github.com/heraldpush/herald/push"
)

// dialect holds what differs between databases: the template data of the
// migrations, how driver errors are classified, and what the queries must
// do differently.
type dialect struct {
	// ID is the column type of an auto-increment primary key.
	ID string
	// isUnique reports a unique-constraint violation.
	isUnique func(error) bool
	// isBusy reports a lock timeout worth a later retry.
	isBusy func(error) bool
	// isDown reports a database that cannot be reached.
	isDown func(error) bool
	// cannotConnect reports a failure to open a connection, which is the
	// database being down even when a deadline ended the attempt.
	cannotConnect func(error) bool
	// isRetryable reports a transaction the database aborted to break a
	// conflict (serialization failure, deadlock): running it again is safe.
	isRetryable func(error) bool
	// lockReads says that read-modify-write transactions must lock what
	// they read (SELECT … FOR UPDATE, LOCK TABLE): the database runs write
	// transactions concurrently. SQLite has one writer at a time.
	lockReads bool
	// placeholders rewrites a statement written with ? placeholders into
	// the database's own; nil when it takes ? as written.
	placeholders func(query string) string
	// lastInsertID says that the driver tells the key of a new row as the
	// last insert id: a plain INSERT then spares the machinery of a
	// returned row (INSERT … RETURNING).
	lastInsertID bool
	// inProcess says that the database runs in the process, where a
	// statement is over in microseconds (see queries.quick).
	inProcess bool
	// reclaim gives pages freed by deletions back to the file system
	// after the retention deleted jobs; "" where the database does it
	// itself (PostgreSQL's autovacuum makes their space reusable).
	reclaim string
	// batchMoves says that the database takes arrays: the job moves of a
	// batch of the group commit are written together in one statement
	// (flushMovesSQL), and so are the new jobs of one request
	// (insertJobsSQL).
	batchMoves bool
	// backlogShards says that a backlog counter is backlogShards rows
	// (see backlog_shards.go): transactions run concurrently and would
	// otherwise wait for each other's commit at the counter's one row.
	backlogShards bool
	// pipeline sends the steps of a batch's end in one round trip on the
	// batch's connection (see step); nil where each runs on its own.
	pipeline pipelined
	// migrationLock and migrationUnlock take and release a session lock
	// that serializes migrating among processes; "" where the migrations'
	// own transactions do.
	migrationLock, migrationUnlock string
}

// classify turns driver errors into engine errors: a unique violation is a
// Conflict (ReasonDuplicate), a busy or unreachable database Unavailable.
// Engine errors pass through unchanged.
func (d dialect) classify(err error) error {
	if err == nil {
		return nil
	}
	var pe *push.Error
	if errors.As(err, &pe) {
		return err
	}
	switch {
	case d.cannotConnect != nil && d.cannotConnect(err):
		return unavailable(err)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case d.isUnique != nil && d.isUnique(err):
		return &push.Error{Kind: push.Conflict, Reason: push.ReasonDuplicate, Message: "a row with this key already exists", Err: err}
	case d.isBusy != nil && d.isBusy(err):
		return &push.Error{Kind: push.Unavailable, Reason: "database_busy", RetryAfter: time.Second,
			Message: "the database is busy: retry in a moment with the same Idempotency-Key", Err: err}
	case d.isDown != nil && d.isDown(err):
		return unavailable(err)
	}
	return err
}

// reasonDatabaseUnavailable is the reason of the errors that say the
// database cannot be reached.
const reasonDatabaseUnavailable = "database_unavailable"

func unavailable(err error) error {
	return databaseUnavailable(err, "the database cannot be reached: retry later with the same Idempotency-Key")
}

// databaseUnavailable is an error of reasonDatabaseUnavailable that says
// message.
func databaseUnavailable(err error, message string) error {
	return &push.Error{Kind: push.Unavailable, Reason: reasonDatabaseUnavailable, RetryAfter: 5 * time.Second, Message: message, Err: err}
}
