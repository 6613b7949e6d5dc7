package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
)

// TestPostgresDown: with the database unreachable, every operation fails
// as Unavailable (the API's 503), a transaction cut in the middle leaves
// nothing half-written, and the store works again once the database is
// back.
func TestPostgresDown(t *testing.T) {
	t.Parallel()
	dsn := testkit.PostgresURL(t)
	proxy := testkit.NewProxy(t, testkit.HostPort(t, dsn))
	s := open(t, testkit.WithHost(t, dsn, proxy.Addr()))
	a, b, tg := seed(t, s, 10)

	cut := make(chan struct{})
	j := newJob(a, b, tg, "half")
	err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
		if err := tx.Charge(ctx, a.ID, []push.LedgerEntry{{AccountID: a.ID, JobID: j.ID, Kind: push.LedgerCharge, Amount: -1, At: t0}}); err != nil {
			return err
		}
		if err := tx.ReserveBacklog(ctx, map[int64]int{b.ID: 1}, 100, 1000); err != nil {
			return err
		}
		select {
		case <-cut:
		default:
			proxy.Cut() // the database goes away in the middle of the transaction
			close(cut)
		}
		return tx.CreateJobs(ctx, []*push.Job{j})
	})
	if push.KindOf(err) != push.Unavailable || push.RetryAfterOf(err) <= 0 {
		t.Fatalf("transaction cut in the middle: %v (kind %s), want Unavailable with a retry hint", err, push.KindOf(err))
	}
	tests := []struct {
		name string
		op   func() error
	}{
		{"read", func() error { _, err := s.Account(ctx, a.ID); return err }},
		{"write", func() error { return s.SetAccountStatus(ctx, a.ID, push.AccountSuspended) }},
		{"ping", func() error { return s.Ping(ctx) }},
		{"transaction", func() error {
			return s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
				return tx.CreateJobs(ctx, []*push.Job{newJob(a, b, tg, "x")})
			})
		}},
	}
	for _, tt := range tests {
		if err := tt.op(); push.KindOf(err) != push.Unavailable {
			t.Errorf("%s while the database is down: %v (kind %s), want Unavailable", tt.name, err, push.KindOf(err))
		}
	}
	if _, err := storage.Open(ctx, testkit.WithHost(t, dsn, proxy.Addr())); push.KindOf(err) != push.Unavailable {
		t.Errorf("open while the database is down: %v, want Unavailable", err)
	}

	proxy.Restore()
	var acc push.Account
	for deadline := time.Now().Add(10 * time.Second); ; {
		if acc, err = s.Account(ctx, a.ID); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store did not recover: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if acc.Points != 10 || acc.Status != push.AccountActive {
		t.Fatalf("account after the outage %+v: a write went through", acc)
	}
	if n, _ := s.Backlog(ctx, 0); n != 0 {
		t.Fatalf("backlog %d: the cut transaction was half-written", n)
	}
	if ids, _ := s.FindJobs(ctx, push.StateQueued, time.Time{}, 0); len(ids) != 0 {
		t.Fatalf("jobs %v stored by failed transactions", ids)
	}
}

// TestPostgresDeadlockRetried: two transactions that lock two rows in
// opposite orders deadlock; PostgreSQL aborts one, and Update runs it again
// so that both succeed.
func TestPostgresDeadlockRetried(t *testing.T) {
	t.Parallel()
	s := open(t, testkit.PostgresURL(t))
	var accs [2]push.Account
	for i := range accs {
		accs[i] = push.Account{Name: fmt.Sprint(i), Status: push.AccountActive, CreatedAt: t0}
		if err := s.CreateAccount(ctx, &accs[i]); err != nil {
			t.Fatal(err)
		}
	}
	var calls atomic.Int32
	ready := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	run := func(first, second int) error {
		attempt := 0
		return s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
			calls.Add(1)
			attempt++
			if err := tx.SetPoints(ctx, accs[first].ID, 5, t0); err != nil {
				return err
			}
			if attempt == 1 {
				close(ready[first])
				select {
				case <-ready[second]:
				case <-time.After(10 * time.Second):
					return errors.New("the other transaction never started")
				}
			}
			return tx.SetPoints(ctx, accs[second].ID, 7, t0)
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- run(0, 1) }()
	// The second starts once the first holds its row: in a batch of its
	// own (the first's has run long enough for another to start).
	<-ready[0]
	go func() { errs <- run(1, 0) }()
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatalf("transaction: %v", err)
		}
	}
	if calls.Load() != 3 {
		t.Fatalf("%d runs of the two transactions, want 3 (one retried after the deadlock)", calls.Load())
	}
}
