package push_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// BenchmarkAuthenticate measures the authentication of a key that has
// authenticated before: a read of the store's auth epoch and a cache hit.
func BenchmarkAuthenticate(b *testing.B) {
	h := testkit.New(b, testkit.WithDB(b.TempDir()+"/bench.db"), testkit.WithoutStart())
	f := h.Seed(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Engine.Keys().Authenticate(ctx, f.Key); err != nil {
			b.Fatal(err)
		}
	}
}

// sendTx returns a Herald whose sends stop at the durable part
// (validation, the idempotency record, the charge, the backlog
// reservation and the jobs, committed to a SQLite file): the workers are
// off and the synchronous wait is a nanosecond.
func sendTx(b *testing.B) (*testkit.Herald, testkit.Fixture) {
	h := testkit.New(b, testkit.WithDB(b.TempDir()+"/bench.db"), testkit.WithoutStart(),
		testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{SyncWait: time.Nanosecond, BacklogPerBot: 1 << 30, BacklogTotal: 1 << 30}))
	f := h.Seed(b)
	if _, err := h.Engine.Ledger().SetBalance(ctx, push.System(), f.Account.ID, 1<<40); err != nil {
		b.Fatal(err)
	}
	return h, f
}

// BenchmarkSendTransaction measures the durable part of one send at a
// time: each is a transaction of its own.
func BenchmarkSendTransaction(b *testing.B) {
	h, f := sendTx(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID,
			Message: text("bench"), IdempotencyKey: fmt.Sprint("k", i)})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendTransactionConcurrent is BenchmarkSendTransaction with 50
// sends in flight, as a busy server has: SQLite's group commit writes
// them together.
func BenchmarkSendTransactionConcurrent(b *testing.B) {
	h, f := sendTx(b)
	var seq atomic.Int64
	b.SetParallelism(25) // 50 goroutines on 2 cores
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, err := h.Engine.Send(ctx, push.AccountPrincipal(f.Account.ID), push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID,
				Message: text("bench"), IdempotencyKey: fmt.Sprint("k", seq.Add(1))})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkReplay measures a resubmission of a delivered send: answered
// from memory once its job is final.
func BenchmarkReplay(b *testing.B) {
	h := testkit.New(b, testkit.WithDB(b.TempDir()+"/bench.db"))
	f := h.Seed(b)
	if _, err := send(b, h, f, "again", "bench"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := send(b, h, f, "again", "bench")
		if err != nil || !res.Replayed {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkJobMoves measures one job's life in the store: queued → running
// → succeeded, each a compare-and-set committed on its own.
func BenchmarkJobMoves(b *testing.B) {
	h := testkit.New(b, testkit.WithDB(b.TempDir()+"/bench.db"), testkit.WithoutStart(),
		testkit.WithLimits(push.Limits{SyncWait: time.Nanosecond, BacklogPerBot: 1 << 30, BacklogTotal: 1 << 30}))
	f := h.Seed(b)
	ids := make([]string, b.N)
	for i := range ids {
		res, err := send(nil, h, f, "", "m")
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = res.Jobs[0].ID
	}
	b.ReportAllocs()
	b.ResetTimer()
	for _, id := range ids {
		now := time.Now()
		if _, err := h.Store.MoveJob(ctx, push.JobMove{ID: id, From: push.StateQueued, To: push.StateRunning, At: now}); err != nil {
			b.Fatal(err)
		}
		if _, err := h.Store.MoveJob(ctx, push.JobMove{ID: id, From: push.StateRunning, To: push.StateSucceeded, At: now, PlatformIndex: "1:1"}); err != nil {
			b.Fatal(err)
		}
	}
}
