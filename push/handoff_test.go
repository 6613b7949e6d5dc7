package push_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/heraldpush/herald/internal/fake"
	"github.com/heraldpush/herald/internal/testkit"
	"github.com/heraldpush/herald/push"
)

// TestCanceledWhileItsRequestWaitsIsNotSent: a worker takes a job whose
// request still waits as the request created it, queued, without reading
// it; a job canceled meanwhile is nevertheless not sent, and its request
// answers it canceled with its point returned.
func TestCanceledWhileItsRequestWaitsIsNotSent(t *testing.T) {
	h := testkit.New(t, testkit.WithWorkers(1), testkit.WithPoints(push.Points{Enabled: true}))
	f := h.Seed(t)
	t2 := h.Target(t, f.Bot.ID, push.TargetUser, "")
	h.Telegram.Block()
	defer h.Telegram.Unblock()
	type answer struct {
		res push.Result
		err error
	}
	first, batch := make(chan answer, 1), make(chan answer, 1)
	go func() {
		res, err := send(nil, h, f, "", "first")
		first <- answer{res, err}
	}()
	waitUntil(t, "the only worker is busy", func() bool { return h.Telegram.Requests() == 1 })
	go func() {
		res, err := h.Engine.SendBatch(ctx, push.AccountPrincipal(f.Account.ID), push.BatchRequest{BotID: f.Bot.ID,
			TargetIDs: []int64{f.Target.ID, t2.ID}, Message: text("batch")})
		batch <- answer{res, err}
	}()
	var queued []push.Job
	waitUntil(t, "the batch is queued", func() bool {
		ids, err := h.Store.FindJobs(ctx, push.StateQueued, time.Time{}, 0)
		if err != nil || len(ids) != 2 {
			return false
		}
		queued, err = h.Store.Jobs(ctx, ids)
		return err == nil
	})
	canceled := queued[0].ID
	if queued[1].TargetID == f.Target.ID {
		canceled = queued[1].ID
	}
	if _, err := h.Engine.Jobs().Cancel(ctx, push.AccountPrincipal(f.Account.ID), canceled); err != nil {
		t.Fatal(err)
	}
	h.Telegram.Unblock()

	a := <-batch
	if a.err != nil {
		t.Fatal(a.err)
	}
	got := map[int64]push.State{}
	for _, j := range a.res.Jobs {
		got[j.TargetID] = j.State
	}
	if diff := cmp.Diff(map[int64]push.State{f.Target.ID: push.StateCanceled, t2.ID: push.StateSucceeded}, got); diff != "" {
		t.Fatalf("batch answer (-want +got):\n%s", diff)
	}
	if a := <-first; a.err != nil || a.res.Jobs[0].State != push.StateSucceeded {
		t.Fatalf("first send: %+v, %v", a.res, a.err)
	}
	var sent []string
	for _, m := range h.Telegram.Messages() {
		sent = append(sent, m.ChatID+" "+m.Text)
	}
	if diff := cmp.Diff([]string{f.Target.Address + " first", t2.Address + " batch"}, sent); diff != "" {
		t.Fatalf("platform received (-want +got):\n%s", diff)
	}
	if got := h.Balance(t, f.Account.ID); got != 98 {
		t.Fatalf("balance %d, want 98: three jobs charged, the canceled one returned", got)
	}
}

// waitUntil polls cond for up to 5 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// TestWaiterOnAnotherNodeAnswersFromTheNotice: on the scale-out backend,
// a request waiting on an API node for a job that another node's worker
// sent is answered from the settled row the completion notice carries,
// with no read of the store after its own accept (on one node the row is
// handed over in memory; see TestCanceledWhileItsRequestWaitsIsNotSent).
func TestWaiterOnAnotherNodeAnswersFromTheNotice(t *testing.T) {
	if testkit.DefaultBackend(t) != testkit.ScaleOut {
		t.Skip("two nodes need the scale-out backend (HERALD_TEST_BACKEND=scaleout, run by scripts/test)")
	}
	db := t.TempDir() + "/herald.db"
	tg := fake.NewTelegram(t)
	api := testkit.New(t, testkit.WithDB(db), testkit.WithTelegram(tg), testkit.WithoutStart(),
		testkit.WithLimits(push.Limits{SyncWait: 20 * time.Second}))
	testkit.New(t, testkit.WithDB(db), testkit.WithTelegram(tg))
	f := api.Seed(t)
	if res, err := send(t, api, f, "", "first: the bot and target read once"); err != nil || res.Jobs[0].State != push.StateSucceeded {
		t.Fatalf("%+v %v", res, err)
	}
	statements := func() int64 {
		n, ok := api.Store.Statements()
		if !ok {
			t.Fatal("the store counts no statements")
		}
		return n
	}
	tg.Block()
	defer tg.Unblock()
	before := tg.Requests()
	type answer struct {
		res push.Result
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := send(nil, api, f, "", "second")
		done <- answer{res, err}
	}()
	waitUntil(t, "the other node's worker calls the platform", func() bool { return tg.Requests() > before })
	accepted := statements() // the request's accept is committed: it waits now
	tg.Unblock()
	a := <-done
	if a.err != nil || a.res.Jobs[0].State != push.StateSucceeded || a.res.Jobs[0].PlatformIndex == "" || a.res.Jobs[0].Message.Content != "second" {
		t.Fatalf("answer %+v, %v: want the job succeeded with its platform index and message", a.res, a.err)
	}
	if n := statements() - accepted; n != 0 {
		t.Errorf("the waiting request sent %d statements after its accept, want none: the notice's row was not used", n)
	}
	stored, err := api.Store.Job(ctx, a.res.Jobs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stored, a.res.Jobs[0]); diff != "" {
		t.Errorf("the answer differs from the stored job (-stored +answer):\n%s", diff)
	}
}
