package storage

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	bundialect "github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"
)

// Migration 4 adds the columns that changing bots and targets, people
// signing in and resolving jobs need. It is written in Go (bun names it
// after this file) because SQLite cannot add a column only when it is
// missing, and a migration must be idempotent: processes that open one
// database at once may each run it.

// addedColumns are migration 4's columns: table, column, definition.
func addedColumns() [][3]string {
	return [][3]string{
		{"api_keys", "name", "TEXT NOT NULL DEFAULT ''"},
		{"api_keys", "role", "TEXT NOT NULL DEFAULT 'member'"},
		{"api_keys", "user_id", "BIGINT NOT NULL DEFAULT 0"},
		{"bots", "updated_ms", "BIGINT NOT NULL DEFAULT 0"},
		{"bots", "deleted_ms", "BIGINT NOT NULL DEFAULT 0"},
		{"targets", "unbound_ms", "BIGINT NOT NULL DEFAULT 0"},
		{"jobs", "resolved_ms", "BIGINT NOT NULL DEFAULT 0"},
		{"jobs", "resolved_by", "TEXT NOT NULL DEFAULT ''"},
		{"jobs", "note", "TEXT NOT NULL DEFAULT ''"},
		{"points_ledger", "note", "TEXT NOT NULL DEFAULT ''"},
		// A bot being deleted refuses new jobs at its counter.
		{"backlog", "closed", "BOOLEAN NOT NULL DEFAULT FALSE"},
	}
}

// registerColumns registers migration 4 with ms.
func registerColumns(ms *migrate.Migrations) {
	ms.MustRegister(addingColumns(addedColumns), droppingColumns(addedColumns))
}

// addingColumns is a migration that adds columns (table, column,
// definition) unless their table has them.
func addingColumns(cols func() [][3]string) migrate.MigrationFunc {
	return func(ctx context.Context, db *bun.DB) error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, c := range cols() {
				if err := addColumn(ctx, tx, c[0], c[1], c[2]); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// addColumn adds a column unless the table has it.
func addColumn(ctx context.Context, tx bun.Tx, table, column, def string) error {
	if tx.Dialect().Name() == bundialect.PG {
		_, err := tx.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s", table, column, def))
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?", table, column).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", table, column, def))
	return err
}

// droppingColumns is the migration that takes the columns away again.
func droppingColumns(cols func() [][3]string) migrate.MigrationFunc {
	return func(ctx context.Context, db *bun.DB) error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			cs := cols()
			for i := len(cs) - 1; i >= 0; i-- {
				if _, err := tx.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", cs[i][0], cs[i][1])); err != nil {
					return err
				}
			}
			return nil
		})
	}
}
