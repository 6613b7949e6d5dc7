package storage

import "github.com/uptrace/bun/migrate"

// Migration 6 adds what inbound events keep of a target: whether its chat
// is still there (presence), since when and why. Written in Go for the
// reason migration 4 is.
func presenceColumns() [][3]string {
	return [][3]string{
		{"targets", "presence", "TEXT NOT NULL DEFAULT 'active'"},
		{"targets", "presence_ms", "BIGINT NOT NULL DEFAULT 0"},
		{"targets", "presence_note", "TEXT NOT NULL DEFAULT ''"},
	}
}

// registerPresence registers migration 6 with ms.
func registerPresence(ms *migrate.Migrations) {
	ms.MustRegister(addingColumns(presenceColumns), droppingColumns(presenceColumns))
}
