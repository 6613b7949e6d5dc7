package push_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// readCounter is a store that counts the reads of jobs by their ids
// outside a transaction. Its first read waits until the other workers of
// the batch (all but those it reads for) wait for theirs, so that when
// and how fast each worker reaches its read (the race detector slows
// some) does not decide what the test sees.
type readCounter struct {
	push.Store
	engine *push.Engine
	jobs   int // of the batch
	mu     sync.Mutex
	calls  int
	ids    []string
}

func (s *readCounter) Jobs(ctx context.Context, ids []string) ([]push.Job, error) {
	s.mu.Lock()
	if s.engine == nil { // not armed yet: the request's own reads
		s.mu.Unlock()
		return s.Store.Jobs(ctx, ids)
	}
	s.calls++
	first := s.calls == 1
	s.ids = append(s.ids, ids...)
	s.mu.Unlock()
	for deadline := time.Now().Add(10 * time.Second); first && len(ids)+push.PendingJobReads(s.engine) < s.jobs && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return s.Store.Jobs(ctx, ids)
}

// TestWorkersReadTheirJobsTogether: jobs that no request of the process
// waits for (here a batch request's, queued before the workers started
// and answered 202) are read by the workers that start them at the same
// moment (the queue's task of the batch's ids) together, in far fewer
// reads than jobs, and each is sent once. On the scale-out backend, where
// a read is a round trip.
func TestWorkersReadTheirJobsTogether(t *testing.T) {
	const n = 16
	reads := &readCounter{}
	h := testkit.New(t, testkit.WithBackend(testkit.ScaleOut), testkit.WithoutStart(), testkit.WithWorkers(n),
		testkit.WithLimits(push.Limits{SyncWait: time.Millisecond}),
		testkit.WithEngineOptions(func(o *push.Options) {
			reads.Store = o.Store
			o.Store = reads
			o.BotConcurrency = n // all of them at once
		}))
	f := h.Seed(t)
	var (
		want    []string
		targets []int64
	)
	for range n {
		tg := h.Target(t, f.Bot.ID, push.TargetUser, "")
		targets = append(targets, tg.ID)
		want = append(want, tg.Address+" together")
	}
	res, err := h.Engine.SendBatch(ctx, push.AccountPrincipal(f.Account.ID), push.BatchRequest{BotID: f.Bot.ID, TargetIDs: targets, Message: text("together")})
	if err != nil || len(res.Jobs) != n || res.Jobs[0].State != push.StateQueued {
		t.Fatalf("batch before the workers started: %+v, %v", res, err)
	}
	reads.mu.Lock()
	reads.engine, reads.jobs = h.Engine, n
	reads.mu.Unlock()
	if err := h.Engine.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "every job is sent", func() bool { return len(h.Telegram.Messages()) >= n })
	time.Sleep(50 * time.Millisecond) // a second delivery of one, were there one, would be sent by now
	var sent []string
	for _, m := range h.Telegram.Messages() {
		sent = append(sent, m.ChatID+" "+m.Text)
	}
	sort.Strings(sent)
	sort.Strings(want)
	if diff := cmp.Diff(want, sent); diff != "" {
		t.Fatalf("platform received (-want +got):\n%s", diff)
	}
	reads.mu.Lock()
	defer reads.mu.Unlock()
	t.Logf("%d jobs in %d reads", len(reads.ids), reads.calls)
	if len(reads.ids) < n || reads.calls > 2 {
		t.Errorf("the workers read %d jobs in %d reads: want the %d jobs read together: the first (one or a few) and the others in one", len(reads.ids), reads.calls, n)
	}
}
