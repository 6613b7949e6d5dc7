package push_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
