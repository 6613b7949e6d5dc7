package storage_test

import (
	"context"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
)

// TestBacklogShardsDoNotWait: on PostgreSQL a transaction that counted on
// a backlog counter and has not committed does not hold up another's
// reservation or release at that counter (each takes a row the other does
// not hold), and both are counted once they commit. With a counter of one
// row the second would wait for the first's commit, which here waits for
// the second: the test would time out.
func TestBacklogShardsDoNotWait(t *testing.T) {
	s := open(t, testkit.PostgresURL(t))
	const bot = 41
	if err := s.ReserveBacklog(ctx, map[int64]int{bot: 2}, 100, 1000); err != nil {
		t.Fatal(err)
	}
	holding, release := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
			if err := tx.ReserveBacklog(ctx, map[int64]int{bot: 1}, 100, 1000); err != nil {
				return err
			}
			close(holding)
			<-release // its rows stay locked until the others are done
			return nil
		})
	}()
	<-holding
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for i, op := range []func(ctx context.Context, tx push.Tx) error{
		func(ctx context.Context, tx push.Tx) error {
			return tx.ReserveBacklog(ctx, map[int64]int{bot: 1}, 100, 1000)
		},
		func(ctx context.Context, tx push.Tx) error { return tx.ReleaseBacklog(ctx, bot, 1) },
	} {
		done := make(chan error, 1)
		go func() { done <- s.Update(wctx, op) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("operation %d while another transaction holds a row: %v", i, err)
			}
		case <-wctx.Done():
			close(release)
			t.Fatalf("operation %d waited for the transaction that holds a row of the counter", i)
		}
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ bot, want int }{{bot, 3}, {0, 3}} {
		if n, err := s.Backlog(ctx, int64(c.bot)); n != c.want || err != nil {
			t.Errorf("counter of bot %d: %d (%v), want %d", c.bot, n, err, c.want)
		}
	}
}

// TestBacklogShardsLimitLowered: counts reserved under a limit and a
// lower limit after (a configuration changed): reservations under the
// lower one are refused while the counter is over it, and accepted again
// up to it exactly once releases bring it under.
func TestBacklogShardsLimitLowered(t *testing.T) {
	eachBackend(t, func(t *testing.T, dsn string) {
		s := open(t, dsn)
		const bot = 42
		for i := 0; i < 30; i++ { // one at a time: spread over the rows
			if err := s.ReserveBacklog(ctx, map[int64]int{bot: 1}, 100, 1000); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.ReserveBacklog(ctx, map[int64]int{bot: 1}, 20, 1000); push.ReasonOf(err) != "backlog_full" {
			t.Fatalf("reservation under a limit of 20 with 30 counted: %v, want backlog_full", err)
		}
		for i := 0; i < 15; i++ {
			if err := s.ReleaseBacklog(ctx, bot, 1); err != nil {
				t.Fatal(err)
			}
		}
		for i := 0; i < 5; i++ {
			if err := s.ReserveBacklog(ctx, map[int64]int{bot: 1}, 20, 1000); err != nil {
				t.Fatalf("reservation %d under a limit of 20 with %d counted: %v", i, 15+i, err)
			}
		}
		if err := s.ReserveBacklog(ctx, map[int64]int{bot: 1}, 20, 1000); push.ReasonOf(err) != "backlog_full" {
			t.Fatalf("reservation under a limit of 20 with 20 counted: %v, want backlog_full", err)
		}
		if n, err := s.Backlog(ctx, bot); n != 20 || err != nil {
			t.Errorf("counter %d (%v), want 20", n, err)
		}
	})
}

// TestBacklogShardsUpgrade: a database from before the counters were in
// shards keeps its counts and closed counters when migrated, and the
// limits hold on them exactly; taking the migration back sums a counter's
// rows into one.
func TestBacklogShardsUpgrade(t *testing.T) {
	dsn := testkit.PostgresURL(t)
	s := open(t, dsn)
	const bot, gone = 51, 52
	if err := s.ReserveBacklog(ctx, map[int64]int{bot: 1}, 100, 1000); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ { // one at a time: on several rows
		if err := s.ReserveBacklog(ctx, map[int64]int{bot: 1}, 100, 1000); err != nil {
			t.Fatal(err)
		}
	}
	if err := storage.CloseBacklog(ctx, s, gone); err != nil {
		t.Fatal(err)
	}
	if err := storage.UnshardBacklog(ctx, s); err != nil {
		t.Fatal(err)
	}
	var rows, n int
	if err := s.DB().QueryRowContext(ctx, "SELECT COUNT(*), SUM(n) FROM backlog WHERE bot_id = ?", bot).Scan(&rows, &n); err != nil || rows != 1 || n != 5 {
		t.Fatalf("taken back: %d rows counting %d (%v), want 1 counting 5", rows, n, err)
	}
	s.Close()
	s = open(t, dsn) // migrates again
	if err := s.ReserveBacklog(ctx, map[int64]int{bot: 2}, 7, 1000); err != nil {
		t.Fatalf("2 more under a limit of 7 with 5 counted: %v", err)
	}
	if err := s.ReserveBacklog(ctx, map[int64]int{bot: 1}, 7, 1000); push.ReasonOf(err) != "backlog_full" {
		t.Fatalf("1 more under a limit of 7 with 7 counted: %v, want backlog_full", err)
	}
	if err := s.ReserveBacklog(ctx, map[int64]int{gone: 1}, 7, 1000); push.KindOf(err) != push.NotFound {
		t.Fatalf("a closed counter after the migration: %v, want NotFound", err)
	}
	for _, c := range []struct{ bot, want int }{{bot, 7}, {0, 7}} {
		if n, err := s.Backlog(ctx, int64(c.bot)); n != c.want || err != nil {
			t.Errorf("counter of bot %d: %d (%v), want %d", c.bot, n, err, c.want)
		}
	}
}
