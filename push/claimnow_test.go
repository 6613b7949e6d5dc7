package push_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
	"github.com/heraldpush/herald/storage"
)

// commitsOf returns how many transactions the store committed while fn
// ran (the scale-out backend counts them).
func commitsOf(t *testing.T, h *testkit.Herald, fn func()) int64 {
	t.Helper()
	before, ok := h.Store.Commits()
	if !ok {
		t.Fatal("the store does not count its commits")
	}
	fn()
	after, _ := h.Store.Commits()
	return after - before
}

// TestClaimedWithItsRequest: on the scale-out backend, a send accepted by
// a node with a free worker is created running, claimed in its request's
// own transaction, and sent by the node right after that commit: a send is
// two commits (its request's and its outcome's), not three, and its job
// started as it was created, after one attempt.
func TestClaimedWithItsRequest(t *testing.T) {
	// A send is answered once its outcome is committed, a moment before
	// its worker slot and its bot's send slot are given back: room for the
	// next send to be claimed while the last one's worker winds down.
	h := testkit.New(t, testkit.WithBackend(testkit.ScaleOut), testkit.WithWorkers(4),
		testkit.WithEngineOptions(func(o *push.Options) { o.BotConcurrency = 4 }))
	f := h.Seed(t)
	if _, err := send(t, h, f, "", "warm"); err != nil { // the catalog and the statements
		t.Fatal(err)
	}
	const n = 10
	commits := commitsOf(t, h, func() {
		for i := range n {
			res, err := send(t, h, f, "", fmt.Sprint("m", i))
			if err != nil || res.Jobs[0].State != push.StateSucceeded {
				t.Fatalf("send %d: %+v, %v", i, res, err)
			}
		}
	})
	// Three commits a send would be 30; a background commit or two may
	// come in between.
	if commits > 2*n+2 {
		t.Fatalf("%d sends committed %d transactions, want about %d: two each", n, commits, 2*n)
	}

	h.Telegram.Block()
	defer h.Telegram.Unblock()
	held := sendAside(h, f, "held")
	<-h.Telegram.Arrived()
	j := onlyJob(t, h, push.StateRunning)
	if j.State != push.StateRunning || j.Attempts != 1 || !j.StartedAt.Equal(j.CreatedAt) {
		t.Fatalf("job while the platform holds its call: %s after %d attempts, created %s, started %s; want running, 1, started as created",
			j.State, j.Attempts, j.CreatedAt, j.StartedAt)
	}
	h.Telegram.Unblock()
	if a := <-held; a.err != nil || a.res.Jobs[0].State != push.StateSucceeded {
		t.Fatalf("the held send: %+v, %v", a.res, a.err)
	}
}

// answer is what a send made aside answered.
type answer struct {
	res push.Result
	err error
}

// sendAside sends content to the fixture's target on another goroutine.
func sendAside(h *testkit.Herald, f testkit.Fixture, content string) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		res, err := send(nil, h, f, "", content)
		ch <- answer{res, err}
	}()
	return ch
}

// onlyJob returns the one job in state st, waiting for it.
func onlyJob(t *testing.T, h *testkit.Herald, st push.State) push.Job {
	t.Helper()
	var j push.Job
	waitUntil(t, "one job "+string(st), func() bool {
		ids, err := h.Store.FindJobs(ctx, st, time.Time{}, 0)
		if err != nil || len(ids) != 1 {
			return false
		}
		j, err = h.Store.Job(ctx, ids[0])
		return err == nil
	})
	return j
}

// TestClaimedOnlyWithAFreeWorker: a send that finds every worker of its
// node busy is created queued and goes through the queue; each is sent
// once.
func TestClaimedOnlyWithAFreeWorker(t *testing.T) {
	h := testkit.New(t, testkit.WithBackend(testkit.ScaleOut), testkit.WithWorkers(1))
	f := h.Seed(t)
	h.Telegram.Block()
	defer h.Telegram.Unblock()
	first := sendAside(h, f, "first")
	<-h.Telegram.Arrived()
	second := sendAside(h, f, "second")
	queued := onlyJob(t, h, push.StateQueued) // the only worker is busy
	h.Telegram.Unblock()
	for _, ch := range []<-chan answer{first, second} {
		if a := <-ch; a.err != nil || a.res.Jobs[0].State != push.StateSucceeded {
			t.Fatalf("send: %+v, %v", a.res, a.err)
		}
	}
	j := h.WaitJob(t, queued.ID, push.StateSucceeded, 10*time.Second)
	if j.Attempts != 1 || !j.StartedAt.After(j.CreatedAt) {
		t.Fatalf("the queued send: %d attempts, created %s, started %s; want 1, started later", j.Attempts, j.CreatedAt, j.StartedAt)
	}
	if got := len(h.Telegram.Messages()); got != 2 {
		t.Fatalf("platform received %d messages, want 2", got)
	}
}

// TestClaimOfARefusedRequestIsGivenBack: a request refused after its jobs
// were claimed (its idempotency key names another request) gives its
// worker slot back: the next send, on a node of one worker, is claimed
// with its request again.
func TestClaimOfARefusedRequestIsGivenBack(t *testing.T) {
	h := testkit.New(t, testkit.WithBackend(testkit.ScaleOut), testkit.WithWorkers(1))
	f := h.Seed(t)
	if _, err := send(t, h, f, "k", "first"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		waitFreeWorker(t, h) // the refused request claims its job before it is refused
		if _, err := send(t, h, f, "k", "another message"); push.ReasonOf(err) != "idempotency_conflict" {
			t.Fatalf("another request under a used key: %v, want idempotency_conflict", err)
		}
		if res, err := send(t, h, f, "k", "first"); err != nil || !res.Replayed {
			t.Fatalf("the same request again: %+v, %v; want a replay", res, err)
		}
	}
	waitFreeWorker(t, h)
	commits := commitsOf(t, h, func() {
		res, err := send(t, h, f, "", "next")
		if err != nil || res.Jobs[0].State != push.StateSucceeded {
			t.Fatalf("next send: %+v, %v", res, err)
		}
	})
	if commits > 2 {
		t.Fatalf("the next send committed %d transactions, want 2: its worker slot was not given back", commits)
	}
	if got := len(h.Telegram.Messages()); got != 2 {
		t.Fatalf("platform received %d messages, want 2", got)
	}
}

// TestClaimOfARefusedRequestGivesItsPaceBack: a refused request gives
// back the platform's pacing slot its claim took, not only its worker
// slot. With Telegram's pace of one message a second to a chat, the next
// send to that chat, a second after the last, is claimed at once however
// many requests were refused in between.
func TestClaimOfARefusedRequestGivesItsPaceBack(t *testing.T) {
	h := testkit.New(t, testkit.WithBackend(testkit.ScaleOut), testkit.WithWorkers(4), testkit.WithPacing())
	f := h.Seed(t)
	if _, err := send(t, h, f, "k", "first"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the chat's slot is free again
	for range 3 {
		waitFreeWorker(t, h) // the refused request claims its job before it is refused
		if _, err := send(t, h, f, "k", "another message"); push.ReasonOf(err) != "idempotency_conflict" {
			t.Fatalf("another request under a used key: %v, want idempotency_conflict", err)
		}
	}
	waitFreeWorker(t, h)
	var res push.Result
	commits := commitsOf(t, h, func() {
		var err error
		if res, err = send(t, h, f, "", "next"); err != nil {
			t.Fatal(err)
		}
	})
	j := res.Jobs[0]
	if j.State != push.StateSucceeded || commits > 2 || !j.StartedAt.Equal(j.CreatedAt) {
		t.Fatalf("next send: %s after %d commits, started %s after it was created; want claimed with its request: the refused requests kept the chat's pace",
			j.State, commits, j.StartedAt.Sub(j.CreatedAt))
	}
}

// panickyPace is a platform whose first Pace panics, as a platform's bug
// would; the HTTP server recovers such a panic and the node goes on.
type panickyPace struct {
	push.Platform
	calls atomic.Int32
}

func (p *panickyPace) Pace(push.Delivery) time.Duration {
	if p.calls.Add(1) == 1 {
		panic("a bug in the platform's pacing")
	}
	return 0
}

// TestClaimGivenBackOnAPanic: a request that panics while its jobs are
// claimed (here in the platform's pacing) gives back what it took: the
// node's only worker slot is free for the next send, which is claimed
// with its request, and the node stops within its drain timeout.
func TestClaimGivenBackOnAPanic(t *testing.T) {
	h := testkit.New(t, testkit.WithBackend(testkit.ScaleOut), testkit.WithWorkers(1),
		testkit.WithEngineOptions(func(o *push.Options) {
			o.Platforms["telegram"] = &panickyPace{Platform: o.Platforms["telegram"]}
		}))
	f := h.Seed(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the platform's pacing did not panic")
			}
		}()
		_, _ = send(t, h, f, "", "panics")
	}()
	lr := h.Queue.(push.LocalRunner)
	if lr.TakeSlots(1) != 1 {
		t.Fatal("the node's only worker slot was not given back after the panic")
	}
	lr.DropSlots(1)
	commits := commitsOf(t, h, func() {
		if res, err := send(t, h, f, "", "next"); err != nil || res.Jobs[0].State != push.StateSucceeded {
			t.Fatalf("next send: %+v, %v", res, err)
		}
	})
	if commits > 2 {
		t.Fatalf("the next send committed %d transactions, want 2", commits)
	}
	stopped := make(chan struct{})
	go func() { h.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(20 * time.Second):
		t.Fatal("the node did not stop: a slot taken before the panic is still counted as running")
	}
}

// commitFault makes the store's next commit of a request whose context
// carries it fail as the database became unavailable: answerLost after
// the COMMIT happened (its answer lost on the way back), notCommitted
// before anything was written.
type commitFault int

const (
	answerLost commitFault = iota + 1
	notCommitted
)

type commitFaultKey struct{}

// faultyCommits is the scale-out store with commitFault's faults.
type faultyCommits struct{ *storage.Store }

func (s faultyCommits) Update(ctx context.Context, fn func(context.Context, push.Tx) error) error {
	fault, _ := ctx.Value(commitFaultKey{}).(commitFault)
	lost := &push.Error{Kind: push.Unavailable, Reason: "database_unavailable", Message: "the database cannot be reached"}
	if fault == notCommitted {
		return lost
	}
	err := s.Store.Update(ctx, fn)
	if err == nil && fault == answerLost {
		return lost
	}
	return err
}

// TestClaimOfAnUnsureCommit: a request with an Idempotency-Key whose
// commit happened though the store reported the database unavailable (the
// COMMIT's answer lost) is refused with Unavailable, and its job, created
// running and claimed by this node alone, is sent once the store answers,
// instead of waiting to be made uncertain; a resubmission with its key is
// answered with it. The same request without a key leaves its job unsent:
// its resubmission would make another. A request whose commit did not
// happen gives its claim back.
func TestClaimOfAnUnsureCommit(t *testing.T) {
	h := testkit.New(t, testkit.WithBackend(testkit.ScaleOut), testkit.WithWorkers(1),
		testkit.WithEngineOptions(func(o *push.Options) { o.Store = faultyCommits{o.Store.(*storage.Store)} }))
	f := h.Seed(t)
	sendWith := func(fault commitFault, key, content string) error {
		_, err := h.Engine.Send(context.WithValue(ctx, commitFaultKey{}, fault), push.AccountPrincipal(f.Account.ID),
			push.SendRequest{BotID: f.Bot.ID, TargetID: f.Target.ID, Message: text(content), IdempotencyKey: key})
		return err
	}
	if err := sendWith(answerLost, "k", "unsure"); push.KindOf(err) != push.Unavailable {
		t.Fatalf("send whose commit's answer was lost: %v, want Unavailable", err)
	}
	waitUntil(t, "the unsure job sent", func() bool { return len(h.Telegram.Messages()) == 1 })
	res, err := send(t, h, f, "k", "unsure")
	if err != nil || len(res.Jobs) != 1 || res.Jobs[0].State != push.StateSucceeded || res.Jobs[0].Attempts != 1 {
		t.Fatalf("the resubmission: %+v, %v; want the job, succeeded after one attempt", res, err)
	}

	waitFreeWorker(t, h)
	if err := sendWith(answerLost, "", "no key"); push.KindOf(err) != push.Unavailable {
		t.Fatalf("send without a key whose commit's answer was lost: %v, want Unavailable", err)
	}
	waitFreeWorker(t, h) // its claim given back at once
	if j := onlyJob(t, h, push.StateRunning); j.Message.Content != "no key" {
		t.Fatalf("the job left running: %+v, want the keyless one (unsent, made uncertain once stale)", j)
	}

	if err := sendWith(notCommitted, "", "never written"); push.KindOf(err) != push.Unavailable {
		t.Fatalf("send whose commit did not happen: %v, want Unavailable", err)
	}
	waitFreeWorker(t, h) // its claim given back once the store said there is no such job
	commits := commitsOf(t, h, func() {
		if res, err := send(t, h, f, "", "next"); err != nil || res.Jobs[0].State != push.StateSucceeded {
			t.Fatalf("next send: %+v, %v", res, err)
		}
	})
	if commits > 2 {
		t.Fatalf("the next send committed %d transactions, want 2", commits)
	}
	var got []string
	for _, m := range h.Telegram.Messages() {
		got = append(got, m.Text)
	}
	if !cmp.Equal(got, []string{"unsure", "next"}) {
		t.Fatalf("platform received %q, want the unsure message and the next, once each", got)
	}
}

// waitFreeWorker waits until a worker slot of the node is free: the last
// send's worker, answered a moment before, has given its slot back (and,
// before it, its bot's send slot).
func waitFreeWorker(t *testing.T, h *testkit.Herald) {
	t.Helper()
	lr, ok := h.Queue.(push.LocalRunner)
	if !ok {
		t.Fatalf("the queue %T runs no jobs in its process", h.Queue)
	}
	waitUntil(t, "a free worker slot", func() bool {
		if lr.TakeSlots(1) == 1 {
			lr.DropSlots(1)
			return true
		}
		return false
	})
}
