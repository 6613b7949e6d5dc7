package storage

import "github.com/uptrace/bun/migrate"

// Migration 10 adds when a running job that waits to retry a platform
// call is due (retry_ms; 0 while it is being sent): its worker handed it
// back to the queue instead of waiting. Written in Go for the reason
// migration 4 is.
func retryColumns() [][3]string {
	return [][3]string{
		{"jobs", "retry_ms", "BIGINT NOT NULL DEFAULT 0"},
	}
}

// registerRetry registers migration 10 with ms.
func registerRetry(ms *migrate.Migrations) {
	ms.MustRegister(addingColumns(retryColumns), droppingColumns(retryColumns))
}
