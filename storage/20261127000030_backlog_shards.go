package storage

import (
	"context"

	"github.com/uptrace/bun"
	bundialect "github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/migrate"
)

// Migration 30 makes a backlog counter on PostgreSQL rows in shards (see
// backlog_shards.go): a row is (bot_id, shard), with the cap of its count
// and the limit the cap was set under, and a row's count may go below 0.
// A counter's row from before is its
// shard 0, with no cap: its next reservation shares the room out. SQLite
// keeps a row per counter (one writer: nothing waits at it). Written in
// Go because it is for one database only.
func registerBacklogShards(ms *migrate.Migrations) {
	ms.MustRegister(onPostgres(backlogShardsUp()...), onPostgres(backlogShardsDown()...))
}

// backlogShardsUp are migration 30's statements.
func backlogShardsUp() []string {
	return []string{
		"ALTER TABLE backlog ADD COLUMN IF NOT EXISTS shard INT NOT NULL DEFAULT 0, " +
			"ADD COLUMN IF NOT EXISTS cap BIGINT NOT NULL DEFAULT 0, " +
			"ADD COLUMN IF NOT EXISTS lim BIGINT NOT NULL DEFAULT -1",
		"ALTER TABLE backlog DROP CONSTRAINT IF EXISTS backlog_pkey",
		"ALTER TABLE backlog ADD CONSTRAINT backlog_pkey PRIMARY KEY (bot_id, shard)",
		// A row's count may go below 0 (a release takes any row); the
		// counter, their sum, does not.
		"ALTER TABLE backlog DROP CONSTRAINT IF EXISTS backlog_n_check",
	}
}

// backlogShardsDown are the statements that take migration 30 back: a
// counter's rows become one, with their sum.
func backlogShardsDown() []string {
	return []string{
		"UPDATE backlog SET n = s.n FROM (SELECT bot_id, SUM(n) AS n FROM backlog GROUP BY bot_id) AS s " +
			"WHERE backlog.bot_id = s.bot_id AND backlog.shard = 0",
		"DELETE FROM backlog WHERE shard <> 0",
		"UPDATE backlog SET n = 0 WHERE n < 0",
		"ALTER TABLE backlog ADD CONSTRAINT backlog_n_check CHECK (n >= 0)",
		"ALTER TABLE backlog DROP CONSTRAINT IF EXISTS backlog_pkey",
		"ALTER TABLE backlog ADD CONSTRAINT backlog_pkey PRIMARY KEY (bot_id)",
		"ALTER TABLE backlog DROP COLUMN shard, DROP COLUMN cap, DROP COLUMN lim",
	}
}

// onPostgres is a migration that runs statements, in one transaction, on
// PostgreSQL only.
func onPostgres(statements ...string) migrate.MigrationFunc {
	return func(ctx context.Context, db *bun.DB) error {
		if db.Dialect().Name() != bundialect.PG {
			return nil
		}
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, stmt := range statements {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return err
				}
			}
			return nil
		})
	}
}
