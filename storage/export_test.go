package storage

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
