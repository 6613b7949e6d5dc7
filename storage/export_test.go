package storage

import (
	"context"
	"time"
)

// GroupedTransactions returns how many transactions s committed together
// with others (0 without group commit).
func GroupedTransactions(s *Store) int64 {
	if s.commit == nil {
		return 0
	}
	return s.commit.grouped.Load()
}

// RetriedTransactions returns how many transactions s ran again after the
// database aborted them (deadlocks, serialization failures).
func RetriedTransactions(s *Store) int64 { return s.retried.Load() }

// Calm makes s's committer run its next batches without savepoints, as
// after calmGroups batches without a failure.
func Calm(s *Store) { s.commit.calm.Store(calmGroups) }

// BareTransactions returns how many transactions s committed in batches
// run without savepoints.
func BareTransactions(s *Store) int64 { return s.commit.bare.Load() }

// RedoneBatches returns how many batches run without savepoints a failing
// function rolled back, to be run again with them.
func RedoneBatches(s *Store) int64 { return s.commit.redone.Load() }

// CloseBacklog closes a bot's backlog counter, as deleting the bot does.
func CloseBacklog(ctx context.Context, s *Store, botID int64) error {
	return s.runTx(ctx, func(ctx context.Context, q queries) error { return q.closeBacklog(ctx, botID) })
}

// UnfitBatches returns how many batches ran again because their deferred
// changes (backlog reservations, job moves, new requests) did not fit
// together.
func UnfitBatches(s *Store) int64 { return s.commit.unfit.Load() }

// UnshardBacklog takes migration 30 back (a counter in one row) and
// forgets it was applied, as on a database from before it.
func UnshardBacklog(ctx context.Context, s *Store) error {
	for _, stmt := range append(backlogShardsDown(), "DELETE FROM herald_migrations WHERE name = '20261127000030'") {
		if _, err := s.w.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// JoinedRequests returns how many new requests s inserted together at the
// end of their batch (PostgreSQL).
func JoinedRequests(s *Store) int64 { return s.commit.joined.Load() }

// SetBatchTimeout bounds s's batches by d instead of batchTimeout.
func SetBatchTimeout(s *Store, d time.Duration) { s.commit.batchTimeout = d }
