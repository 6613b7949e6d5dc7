package storage

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// checkpointEvery is how often the checkpointer copies the WAL's new
// pages into the SQLite database file.
const checkpointEvery = 100 * time.Millisecond

// checkpointer runs SQLite's WAL checkpoints on a connection of the reader
// pool, so that the group commit's one writer never stops for one. Left
// to SQLite, the commit that takes the WAL past its threshold checkpoints
// it itself: it copies the WAL's pages into the database file and syncs
// both, and every request waiting on that commit waits for the disk. A
// PASSIVE checkpoint beside the writer takes no lock the writer needs.
// SQLite's own checkpoint stays on with a higher threshold
// (wal_autocheckpoint in sqlitePragmas), in case this one falls behind.
type checkpointer struct {
	db     *sql.DB
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func startCheckpointer(db *sql.DB, every time.Duration) *checkpointer {
	ctx, cancel := context.WithCancel(context.Background())
	c := &checkpointer{db: db, cancel: cancel}
	c.wg.Add(1)
	go c.loop(ctx, every)
	return c
}

func (c *checkpointer) loop(ctx context.Context, every time.Duration) {
	defer c.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A failure (the database busy or closing) is left to the next
		// round, and to SQLite's own checkpoint. (The pragma answers how
		// many frames the WAL holds and how many it copied; frames held
		// by readers of older snapshots are copied in a later round.)
		_, _ = c.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
	}
}

// stop ends the loop and waits for a checkpoint in progress.
func (c *checkpointer) stop() {
	c.cancel()
	c.wg.Wait()
}
