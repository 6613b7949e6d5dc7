package push_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

func BenchmarkAuthenticate(b *testing.B) {
	h := testkit.New(b, testkit.WithoutStart())
	f := h.Seed()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Engine.Authenticate(ctx, f.Key); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSendTransaction measures the durable part of a send: validation,
// the idempotency record, the charge, the backlog reservation and the jobs,
// committed to a SQLite file (the workers are off and the sync wait short).
func BenchmarkSendTransaction(b *testing.B) {
	h := testkit.New(b, testkit.WithDB(b.TempDir()+"/bench.db"), testkit.WithoutStart(),
		testkit.WithPoints(push.Points{Enabled: true}),
		testkit.WithLimits(push.Limits{SyncWait: time.Nanosecond, BacklogPerBot: 1 << 30, BacklogTotal: 1 << 30}))
	f := h.Seed()
	if _, err := h.Engine.SetPoints(ctx, f.Account.ID, 1<<40); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := h.Engine.Send(ctx, push.SendRequest{AccountID: f.Account.ID, BotID: f.Bot.ID, TargetID: f.Target.ID,
			Message: text("bench"), IdempotencyKey: fmt.Sprint("k", i)})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJobMoves measures one job's life in the store: queued → running
// → succeeded, each a compare-and-set.
func BenchmarkJobMoves(b *testing.B) {
	h := testkit.New(b, testkit.WithDB(b.TempDir()+"/bench.db"), testkit.WithoutStart(),
		testkit.WithLimits(push.Limits{SyncWait: time.Nanosecond, BacklogPerBot: 1 << 30, BacklogTotal: 1 << 30}))
	f := h.Seed()
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
		if _, err := h.Store.MoveJob(ctx, push.JobMove{ID: id, From: push.Queued, To: push.Running, At: now}); err != nil {
			b.Fatal(err)
		}
		if _, err := h.Store.MoveJob(ctx, push.JobMove{ID: id, From: push.Running, To: push.Succeeded, At: now, PlatformIndex: "1:1"}); err != nil {
			b.Fatal(err)
		}
	}
}
