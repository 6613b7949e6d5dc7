package storage_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
)

// BenchmarkSendLife measures a send's three transactions as the engine
// runs them (the request's: idempotency record, job, backlog; the
// worker's start: queued → running; its finish: running → succeeded and
// the backlog released), with 50 sends in flight on a SQLite file: what
// the group commit makes of them. It reports how many transactions each
// commit carried.
func BenchmarkSendLife(b *testing.B) {
	s, err := storage.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a := push.Account{Name: "acme", Status: push.AccountActive, CreatedAt: t0}
	if err := s.CreateAccount(ctx, &a); err != nil {
		b.Fatal(err)
	}
	bot := push.Bot{AccountID: a.ID, Platform: "telegram", Name: "tg", Config: []byte(`{}`), CreatedAt: t0}
	if err := s.CreateBot(ctx, &bot); err != nil {
		b.Fatal(err)
	}
	tg := push.Target{BotID: bot.ID, Type: push.TargetUser, Address: "42", Name: "me", CreatedAt: t0}
	if err := s.CreateTarget(ctx, &tg); err != nil {
		b.Fatal(err)
	}
	var seq atomic.Int64
	b.SetParallelism(25) // 50 goroutines on 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := sendLife(s, a, bot, tg, fmt.Sprint("k", seq.Add(1))); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(storage.GroupedTransactions(s))/float64(3*b.N), "grouped/tx")
}

func sendLife(s *storage.Store, a push.Account, bot push.Bot, tg push.Target, key string) error {
	j := newJob(a, bot, tg, "bench")
	j.IdempotencyKey = key
	err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
		if err := tx.CreateIdempotency(ctx, &push.IdempotencyRecord{AccountID: a.ID, Key: key, Kind: push.RequestKindSingle, Fingerprint: "f", JobIDs: []string{j.ID}, CreatedAt: t0}); err != nil {
			return err
		}
		if err := tx.CreateJobs(ctx, []*push.Job{j}); err != nil {
			return err
		}
		return tx.ReserveBacklog(ctx, map[int64]int{bot.ID: 1}, 1<<30, 1<<30)
	})
	if err != nil {
		return err
	}
	now := time.Now()
	var running push.Job
	if err := s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
		running, err = tx.MoveJob(ctx, push.JobMove{ID: j.ID, From: push.StateQueued, To: push.StateRunning, At: now, Job: j})
		return err
	}); err != nil {
		return err
	}
	return s.Update(ctx, func(ctx context.Context, tx push.Tx) error {
		if _, err := tx.MoveJob(ctx, push.JobMove{ID: j.ID, From: push.StateRunning, To: push.StateSucceeded, At: now, PlatformIndex: "42:1", Job: &running}); err != nil {
			return err
		}
		return tx.ReleaseBacklog(ctx, bot.ID, 1)
	})
}
